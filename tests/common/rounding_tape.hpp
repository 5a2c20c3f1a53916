#pragma once
// First-order bounds on the rounding error of a computation, from a tape of its operations: a
// double that records each operation (Taped), the tape, and the bound on each output of a
// generator's generate() (generate_with_rounding_bound). Used where a finite-difference check
// needs the rounding error of the differenced function (tests/unit/models: the generators'
// Jacobians and the Lotka–Volterra log-determinant gradient).

#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace myriad::testing {

inline constexpr double kTapeEps = std::numeric_limits<double>::epsilon();

// Rounding-error bounds by first-order (linearised) error analysis (Linnainmaa 1976; Higham,
// "Accuracy and Stability of Numerical Algorithms", §3.3): every floating-point operation i
// returns v̂_i = v_i + ρ_i with |ρ_i| ≤ ε|v̂_i| (ε = 2u, a factor 2 of slack; libm's exp, log,
// log1p, expm1 are accurate to < 1 ulp, counted as 2ε|v̂_i|), and to first order the computed
// output differs from the exact one by Σ_i (∂x/∂v_i) ρ_i, so |x̂ − x| ≤ Σ_i |∂x/∂v_i| |ρ_i|max.
// The adjoints ∂x/∂v_i come from a reverse sweep over a tape of the evaluation, so cancellation
// along the computation (the oscillating Lotka–Volterra dynamics) is accounted for; a forward
// running bound of absolute values is not sharp there, it grows like Π|A_s| instead of |Π A_s|
// and exceeded |J| itself for most Lotka–Volterra entries. Inputs and constants enter exactly:
// a constant's representation error changes the function, not the difference quotient.

struct TapeNode {
  int parent[2];      // −1: none (input or constant)
  double partial[2];  // ∂v/∂parent
  double rounding;    // bound on this operation's own rounding error
};

/// The tape of the current evaluation (one at a time; the tests are single-threaded).
inline std::vector<TapeNode>& tape() {
  static std::vector<TapeNode> nodes;
  return nodes;
}

/// A double that records each operation on the tape.
struct Taped {
  double v = 0;
  int id = -1;  // tape node, or −1 for an input or constant
  Taped() = default;
  Taped(double value) : v(value) {}  // NOLINT: implicit lift, like Dual
  Taped(int value) : v(value) {}     // NOLINT
  Taped& operator+=(const Taped& o) { return *this = *this + o; }
  Taped& operator-=(const Taped& o) { return *this = *this - o; }
  Taped& operator*=(const Taped& o) { return *this = *this * o; }
  Taped& operator/=(const Taped& o) { return *this = *this / o; }

  static Taped record(double v, int a, double da, int b, double db, double rounding) {
    Taped t;
    t.v = v;
    t.id = static_cast<int>(tape().size());
    tape().push_back({{a, b}, {da, db}, rounding});
    return t;
  }
  friend Taped operator+(const Taped& a, const Taped& b) {
    const double v = a.v + b.v;
    return record(v, a.id, 1, b.id, 1, kTapeEps * std::fabs(v));
  }
  friend Taped operator-(const Taped& a, const Taped& b) {
    const double v = a.v - b.v;
    return record(v, a.id, 1, b.id, -1, kTapeEps * std::fabs(v));
  }
  friend Taped operator-(const Taped& a) { return record(-a.v, a.id, -1, -1, 0, 0); }
  friend Taped operator*(const Taped& a, const Taped& b) {
    const double v = a.v * b.v;
    return record(v, a.id, b.v, b.id, a.v, kTapeEps * std::fabs(v));
  }
  friend Taped operator/(const Taped& a, const Taped& b) {
    const double v = a.v / b.v;
    return record(v, a.id, 1 / b.v, b.id, -v / b.v, kTapeEps * std::fabs(v));
  }
  friend bool operator<(const Taped& a, const Taped& b) { return a.v < b.v; }
  friend bool operator>(const Taped& a, const Taped& b) { return a.v > b.v; }
};

inline double value_of(const Taped& x) { return x.v; }
inline Taped exp(const Taped& x) {
  const double v = std::exp(x.v);
  return Taped::record(v, x.id, v, -1, 0, 2 * kTapeEps * v);
}
inline Taped log(const Taped& x) {
  const double v = std::log(x.v);
  return Taped::record(v, x.id, 1 / x.v, -1, 0, 2 * kTapeEps * std::fabs(v));
}
inline Taped log1p(const Taped& x) {
  const double v = std::log1p(x.v);
  return Taped::record(v, x.id, 1 / (1 + x.v), -1, 0, 2 * kTapeEps * std::fabs(v));
}
inline Taped expm1(const Taped& x) {
  const double v = std::expm1(x.v);
  return Taped::record(v, x.id, std::exp(x.v), -1, 0, 2 * kTapeEps * std::fabs(v));
}
inline Taped sqrt(const Taped& x) {
  const double v = std::sqrt(x.v);
  return Taped::record(v, x.id, 0.5 / v, -1, 0, kTapeEps * v);
}

/// Runs g.generate on the tape at u: x[m] is the computed output, bound[m] the first-order
/// bound Σ_i |∂x_m/∂v_i| rounding_i on its rounding error, from a reverse sweep over the
/// ancestors of x_m (visited in decreasing tape order, a reverse topological order).
template <class G>
void generate_with_rounding_bound(const G& g, const std::vector<double>& u, std::vector<double>& x,
                                  std::vector<double>& bound) {
  tape().clear();
  tape().reserve(1 << 16);
  const std::vector<Taped> input(u.begin(), u.end());
  std::vector<Taped> output(g.output_dim());
  g.generate(input, output);
  const auto& nodes = tape();
  std::vector<double> adjoint(nodes.size(), 0.0);
  std::vector<char> queued(nodes.size(), 0);
  std::vector<int> touched, storage;
  storage.reserve(nodes.size());
  std::priority_queue<int> pending(std::less<int>(), std::move(storage));
  for (int m = 0; m < g.output_dim(); ++m) {
    x[m] = output[m].v;
    bound[m] = 0;
    if (output[m].id < 0) continue;
    adjoint[output[m].id] = 1;
    queued[output[m].id] = 1;
    pending.push(output[m].id);
    touched.clear();
    while (!pending.empty()) {
      const int i = pending.top();
      pending.pop();
      touched.push_back(i);
      const TapeNode& node = nodes[i];
      bound[m] += std::fabs(adjoint[i]) * node.rounding;
      for (int k = 0; k < 2; ++k) {
        const int parent = node.parent[k];
        if (parent < 0) continue;
        adjoint[parent] += adjoint[i] * node.partial[k];
        if (!queued[parent]) {
          queued[parent] = 1;
          pending.push(parent);
        }
      }
    }
    for (int i : touched) {
      adjoint[i] = 0;
      queued[i] = 0;
    }
  }
}

}  // namespace myriad::testing
