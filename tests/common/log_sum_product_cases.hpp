#pragma once
// The log-sum-product steps that the tests of the log-semiring GEMM run on every path
// (tests/unit/test_log_semiring_gemm.cpp on the host, tests/cuda/test_log_semiring_gemm.cpp on
// the device): the steps the MP IS engine builds — a batched GEMV, timeseries levels over strided
// slices into a strided destination, several axes per group in scrambled orders, the backward
// pass's constant inputs, Chimpanzees' K⁴ × K block, M = N = 1 and M = 1, a reduction that one
// operand broadcasts over, and few outputs of a long reduction. Each test file fills the tensors
// with its own draws; `using namespace testing::log_sum_product_cases;` brings in Case and the
// cases by name.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "myriad/estimate/log_tensor.hpp"

namespace myriad::testing::log_sum_product_cases {

// Variable ids: 0 run, 1–4 kept K-dims or plates, 5–8 more, 9 the engine's scratch variable,
// 10–12 eliminated K-dims, 20+ plates.

/// One step as the engine runs it: the tensors it reads, its input views of them (possibly
/// slices, renamed), the variables to eliminate, the step's output variables and a destination
/// view (possibly a slice of a larger output tensor) computed from the output tensor's own view.
struct Case {
  std::string name;
  std::vector<LogTensor> tensors;
  std::vector<int> eliminate;
  std::vector<int> out_vars;
  std::vector<int> output_vars;  ///< the output tensor's variables
  std::vector<std::int64_t> output_extents;
  /// The input views given views of the tensors (of these or of copies of them, same layout).
  std::function<std::vector<LogTensorView>(const std::vector<LogTensorView>&)> inputs =
      [](const std::vector<LogTensorView>& t) { return t; };
  std::function<LogTensorView(const LogTensorView&)> destination = [](const LogTensorView& v) {
    return v;
  };

  /// The input views of this case's own tensors.
  std::vector<LogTensorView> input_views() const {
    std::vector<LogTensorView> views;
    for (const LogTensor& t : tensors) views.push_back(t.view());
    return inputs(views);
  }
};

/// The unit roundoff of double, u = 2^-53.
constexpr double kUnitRoundoff = 0x1p-53;

/// Σ_j max |T_j| over finite entries of the case's tensors (the tolerance's scale).
inline double scale_of(const Case& c) {
  double scale = 0.0;
  for (const LogTensor& t : c.tensors) {
    double m = 0.0;
    for (double x : t.values())
      if (std::isfinite(x)) m = std::max(m, std::abs(x));
    scale += m;
  }
  return scale;
}

/// How far a GEMM path's output may sit from the generic element's over a reduction of k terms:
/// u (8·scale + 4K + 16), derived in tests/unit/test_log_semiring_gemm.cpp.
inline double tolerance_of(const Case& c, std::int64_t k) {
  return kUnitRoundoff * (8.0 * scale_of(c) + 4.0 * static_cast<double>(k) + 16.0);
}

/// A step over whole tensors, each one input, into a fresh contiguous output tensor over
/// `out_vars` (of `out_extents`): the shape of most of the engine's eliminate steps.
inline Case whole_tensors_case(std::string name, std::vector<LogTensor> tensors,
                               std::vector<int> eliminate, std::vector<int> out_vars,
                               std::vector<std::int64_t> out_extents) {
  Case c;
  c.name = std::move(name);
  c.tensors = std::move(tensors);
  c.eliminate = std::move(eliminate);
  c.out_vars = c.output_vars = std::move(out_vars);
  c.output_extents = std::move(out_extents);
  return c;
}

/// Hierarchical: ℓ_z[run, group, mu, z] + λ[run, group, z], eliminating z (a batched GEMV).
inline Case hierarchical(std::int64_t k_mu, std::int64_t k_z) {
  return whole_tensors_case(
      "hierarchical_gemv",
      {LogTensor({0, 20, 1, 10}, {3, 5, k_mu, k_z}), LogTensor({0, 20, 10}, {3, 5, k_z})}, {10},
      {0, 20, 1}, {3, 5, k_mu});
}

/// A timeseries level as the engine's chain_forward builds it: cur[run, t, lag, chain],
/// A = cur[t even] with chain renamed m, B = cur[t odd] with lag renamed m,
/// C[p, c] = LSE_m A[p, m] + B[m, c] into the first `pairs` steps of the next level.
inline Case chain_level(std::int64_t k, std::int64_t steps) {
  Case c;
  c.name = "chain_level_k" + std::to_string(k);
  const int run = 0, t = 20, lag = 1, chain = 2, scratch = 9;
  const std::int64_t pairs = steps / 2;
  c.tensors = {LogTensor({run, t, lag, chain}, {2, steps, k, k})};
  c.inputs = [=](const std::vector<LogTensorView>& v) {
    return std::vector<LogTensorView>{v[0].slice(t, 0, 2, pairs).renamed(chain, scratch),
                                      v[0].slice(t, 1, 2, pairs).renamed(lag, scratch)};
  };
  c.eliminate = {scratch};
  c.out_vars = c.output_vars = {run, t, lag, chain};
  c.output_extents = {2, pairs + steps % 2, k, k};
  c.destination = [=](const LogTensorView& next) { return next.slice(t, 0, 1, pairs); };
  return c;
}

/// Several axes per group, in scrambled orders: A[e1, a1, s, a2, e2] + B[b1, e2, s, e1, b2],
/// eliminating (e2, e1), output (b2, a1, s, b1, a2).
inline Case multi_axis() {
  return whole_tensors_case("multi_axis_permuted",
                            {LogTensor({10, 1, 20, 2, 11}, {3, 4, 2, 5, 6}),
                             LogTensor({3, 11, 20, 10, 4}, {3, 6, 2, 3, 2})},
                            {11, 10}, {4, 1, 20, 3, 2}, {2, 4, 2, 3, 5});
}

/// The backward pass's step for μ(A) of C = LSE_e A[run, e, a] + B[run, e, b]:
/// μ(A)[run, e, a] = LSE_b A + B + W[run, a, b] − log K: A and −log K are constant over b, B
/// and W vary, and B's kept e is a row axis, W's a a column axis.
inline Case backward_with_constants(std::int64_t k) {
  return whole_tensors_case(
      "backward_constants",
      {LogTensor({0, 10, 1}, {2, 33, 12}), LogTensor({0, 10, 11}, {2, 33, k}),
       LogTensor({0, 1, 11}, {2, 12, k}), LogTensor::scalar(-std::log(static_cast<double>(k)))},
      {11}, {0, 10, 1}, {2, 33, 12});
}

/// Chimpanzees' block plate: ℓ[plate, k_ab, k_sb] + λ[plate, k_alpha, k_bp, k_bpc, k_a, k_ab],
/// eliminating k_ab: |a| = K⁴, |b| = K.
inline Case chimpanzees_block(std::int64_t k) {
  return whole_tensors_case(
      "chimpanzees_block",
      {LogTensor({20, 10, 5}, {3, k, k}), LogTensor({20, 1, 2, 3, 4, 10}, {3, k, k, k, k, k})},
      {10}, {20, 5, 1, 2, 3, 4}, {3, k, k, k, k, k});
}

/// M = N = 1: a batched dot product A[s, e] · B[s, e].
inline Case batched_dot() {
  return whole_tensors_case(
      "batched_dot", {LogTensor({20, 10}, {7, 37}), LogTensor({20, 10}, {7, 37})}, {10}, {20}, {7});
}

/// M = 1: A[s, e] + B[s, e, b] (a GEMV over the columns).
inline Case column_gemv() {
  return whole_tensors_case("column_gemv",
                            {LogTensor({20, 10}, {3, 21}), LogTensor({20, 10, 1}, {3, 21, 300})},
                            {10}, {20, 1}, {3, 300});
}

/// B broadcasts along one of the eliminated axes, and a constant input carries a kept axis
/// that neither operand does (a batch axis): A[e1, e2, a] + B[e1, b] + C[x], eliminating
/// (e1, e2).
inline Case broadcast_reduce() {
  return whole_tensors_case(
      "broadcast_reduce",
      {LogTensor({10, 11, 1}, {5, 4, 9}), LogTensor({10, 2}, {5, 40}), LogTensor({21}, {3})},
      {10, 11}, {1, 2, 21}, {9, 40, 3});
}

/// Few outputs of a long reduction, seven of 5000 terms each (the shape of the single-block
/// Chimpanzees step): the generic and automatic paths split the reduction
/// (estimate/log_sum_product_split.hpp).
inline Case starved_dot() {
  return whole_tensors_case("starved_dot",
                            {LogTensor({20, 10}, {7, 5000}), LogTensor({20, 10}, {7, 5000})}, {10},
                            {20}, {7});
}

/// A GEMV of a few tiles over a long reduction: automatic splits it rather than run a handful of
/// tiled blocks; an explicit tiled request keeps the tiled kernel.
inline Case starved_gemv() {
  return whole_tensors_case("starved_gemv",
                            {LogTensor({20, 10}, {2, 3000}), LogTensor({20, 10, 1}, {2, 3000, 64})},
                            {10}, {20, 1}, {2, 64});
}

}  // namespace myriad::testing::log_sum_product_cases
