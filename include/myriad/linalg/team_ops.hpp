#pragma once
// The per-chain dense linear algebra of constrained HMC (dense_ops.hpp, cholesky.hpp,
// triangular.hpp) shared by a team of lanes (core/team.hpp): DESIGN.md rule 6(b), a warp per
// chain, with the matrices in the chain's workspace. Each function is called by every lane with
// the same arguments, fences itself with team barriers on entry (its inputs may have been
// written by any lane) and on exit (its outputs are read by any lane), and returns the same
// value in every lane. With a serial team (Team::kSerial) each function is the one-lane
// function itself, so one-lane callers pay nothing for the team form.
//
// Every output element is computed by one lane with exactly the one-lane function's operations
// in the one-lane order, so the results are bitwise those of the one-lane functions (the
// equalities below are tested with a team of threads, tests/unit/test_team_linalg.cpp); only
// team_dot, a sum across lanes, rounds differently.
//
//   team_gram_lower      entries of the lower triangle of J Jᵀ dealt round-robin to the lanes
//   team_multiply        rows of A x by lane
//   team_multiply_transpose   columns of Aᵀ w by lane (Σ_i in the one-lane order)
//   team_cholesky_in_place    Cholesky–Crout by columns: every lane forms the pivot l_jj (the
//                        same operations, so the same bits), then the rows below it by lane;
//                        one barrier per column (the row form of cholesky_in_place_info, whose
//                        column form rounds identically)
//   team_solve_lower / team_solve_lower_transpose   substitution in column form: the lane owning
//                        x_i finishes it and broadcasts it, the lanes update their later (or
//                        earlier) rows; one broadcast per row. Each b_k receives the same
//                        subtractions in the same order as the one-lane row (forward) or column
//                        (back) form.

#include <cstdint>
#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::linalg {

/// Lower triangle of G = J Jᵀ (gram_lower), entries dealt to the lanes in row-major order of
/// the triangle.
template <class Team, class T, class U>
MYRIAD_HD void team_gram_lower(const Team& team, MatrixView<T> j, MatrixView<U> g) {
  if constexpr (Team::kSerial) {
    return gram_lower(j, g);
  }
  using Value = std::remove_const_t<T>;
  const int m = j.rows, n = j.cols;
  const std::int64_t entries = static_cast<std::int64_t>(m) * (m + 1) / 2;
  team.sync();
  // Row i of the triangle starts at entry i(i + 1)/2; walk rows instead of inverting that.
  int i = 0;
  std::int64_t row_start = 0;
  for (std::int64_t t = team.rank(); t < entries; t += team.size()) {
    while (t >= row_start + i + 1) {
      row_start += i + 1;
      ++i;
    }
    const int k = static_cast<int>(t - row_start);
    Value s = Value(0);
    for (int c = 0; c < n; ++c) s += j(i, c) * j(k, c);
    g(i, k) = s;
  }
  team.sync();
}

namespace detail {

/// y = A x on a team of several lanes, rows by lane, each y_i summed over the columns in order.
template <class Team, class T, class X, class Y>
MYRIAD_HD void team_rows_times(const Team& team, MatrixView<T> a, const X& x, Y&& y) {
  using Value = std::remove_const_t<T>;
  team.sync();
  for (int i = team.rank(); i < a.rows; i += team.size()) {
    Value s = Value(0);
    for (int c = 0; c < a.cols; ++c) s += a(i, c) * static_cast<Value>(x[c]);
    y[i] = s;
  }
  team.sync();
}

}  // namespace detail

/// y = A x (multiply), rows by lane.
template <class Team, class T, class X, class Y>
MYRIAD_HD void team_multiply(const Team& team, MatrixView<T> a, const X& x, Y&& y) {
  if constexpr (Team::kSerial) {
    return multiply(a, x, y);
  }
  detail::team_rows_times(team, a, x, y);
}

/// y = Aᵀ w (multiply_transpose), columns by lane; each y_c sums a_ic w_i over i in order from
/// zero, as the one-lane row sweep does.
template <class Team, class T, class W, class Y>
MYRIAD_HD void team_multiply_transpose(const Team& team, MatrixView<T> a, const W& w, Y&& y) {
  if constexpr (Team::kSerial) {
    return multiply_transpose(a, w, y);
  }
  detail::team_rows_times(team, a.transposed(), w, y);
}

/// xᵀ y, summed per lane and then across the team (rounds differently from dot).
template <class Team, class X, class Y>
MYRIAD_HD auto team_dot(const Team& team, const X& x, const Y& y, int n) {
  using Value = std::remove_const_t<std::remove_reference_t<decltype(x[0] * y[0])>>;
  team.sync();
  Value s = Value(0);
  for (int i = team.rank(); i < n; i += team.size()) s += x[i] * y[i];
  return team.sum(s);
}

/// cholesky_in_place_info by a team: the same info and, on success, the same bits of L. On
/// failure the columns before the failing one hold L and the rest are as on entry.
template <class Team, class T>
MYRIAD_HD int team_cholesky_in_place_info(const Team& team, MatrixView<T> a) {
  if constexpr (Team::kSerial) {
    return cholesky_in_place_info(a);
  }
  static_assert(!std::is_const<T>::value, "team_cholesky_in_place_info overwrites its argument");
  const int n = a.rows;
  T previous_l = T(0);  // l_{j−1, j−1}, written one column late (below)
  team.sync();
  for (int j = 0; j < n; ++j) {
    // Column j − 1's diagonal: every lane read the old a(j−1, j−1) for its pivot last column, so
    // it is written only now, after the barrier; no lane reads it again.
    if (j > 0 && team.rank() == 0) a(j - 1, j - 1) = previous_l;
    // Every lane forms the pivot from row j (final since the previous column's barrier).
    T pivot = a(j, j);
    for (int k = 0; k < j; ++k) pivot -= a(j, k) * a(j, k);
    if (!(pivot > T(0)) || !isfinite(pivot)) {
      team.sync();
      return j + 1;
    }
    const T l_jj = sqrt(pivot);
    const T inverse_l_jj = T(1) / l_jj;
    for (int i = j + 1 + team.rank(); i < n; i += team.size()) {
      T s = a(i, j);
      for (int k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
      a(i, j) = s * inverse_l_jj;
    }
    previous_l = l_jj;
    team.sync();
  }
  if (n > 0 && team.rank() == 0) a(n - 1, n - 1) = previous_l;
  team.sync();
  return 0;
}

/// team_cholesky_in_place_info == 0.
template <class Team, class T>
MYRIAD_HD bool team_cholesky_in_place(const Team& team, MatrixView<T> a) {
  return team_cholesky_in_place_info(team, a) == 0;
}

namespace detail {

/// A triangular solve's step i: x_i = b_i / l_ii by its lane (i mod lanes), stored in b_i and
/// broadcast to the team.
template <class Team, class T, class Vector>
MYRIAD_HD std::remove_const_t<T> team_solve_pivot(const Team& team, MatrixView<T> l, Vector& b,
                                                  int i) {
  const int owner = i % team.size();
  std::remove_const_t<T> x_i(0);
  if (team.rank() == owner) {
    x_i = b[i] / l(i, i);
    b[i] = x_i;
  }
  return team.broadcast(x_i, owner);
}

}  // namespace detail

/// b ← L⁻¹ b (solve_lower) by a team, in column form: x_i = b_i / l_ii by its lane, broadcast,
/// then b_k −= l_ki x_i for k > i by lane.
template <class Team, class T, class Vector>
MYRIAD_HD void team_solve_lower(const Team& team, MatrixView<T> l, Vector&& b) {
  if constexpr (Team::kSerial) {
    return solve_lower(l, b);
  }
  const int n = l.rows, lane = team.rank(), lanes = team.size();
  team.sync();
  for (int i = 0; i < n; ++i) {
    const auto x_i = detail::team_solve_pivot(team, l, b, i);
    // The lanes' rows after i: the first k > i with k ≡ lane (mod lanes).
    for (int k = i + 1 + ((lane - (i + 1) % lanes) + lanes) % lanes; k < n; k += lanes)
      b[k] -= l(k, i) * x_i;
  }
  team.sync();
}

/// b ← L⁻ᵀ b (solve_lower_transpose) by a team: x_i = b_i / l_ii by its lane, broadcast, then
/// b_k −= l_ik x_i for k < i by lane.
template <class Team, class T, class Vector>
MYRIAD_HD void team_solve_lower_transpose(const Team& team, MatrixView<T> l, Vector&& b) {
  if constexpr (Team::kSerial) {
    return solve_lower_transpose(l, b);
  }
  const int lane = team.rank(), lanes = team.size();
  team.sync();
  for (int i = l.rows - 1; i >= 0; --i) {
    const auto x_i = detail::team_solve_pivot(team, l, b, i);
    for (int k = lane; k < i; k += lanes) b[k] -= l(i, k) * x_i;
  }
  team.sync();
}

}  // namespace myriad::linalg
