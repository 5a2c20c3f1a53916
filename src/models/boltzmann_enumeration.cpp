// The streamed enumeration of models/boltzmann_enumeration.hpp.

#include "myriad/models/boltzmann_enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::models {

namespace {

/// Weighted sums over states, all scaled by e^{−shift}: Σ ω, Σ ω s, Σ ω ssᵀ (lower triangle).
struct StateSums {
  explicit StateSums(int n)
      : n(n),
        first(static_cast<std::size_t>(n), 0.0),
        second(static_cast<std::size_t>(n) * n, 0.0) {}
  int n;
  double shift = -INFINITY;
  double total = 0;
  std::vector<double> first, second;

  /// Brings the sums to a new shift at least as large as the old.
  void rescale_to(double new_shift) {
    if (new_shift <= shift) return;
    const double factor = std::isfinite(shift) ? std::exp(shift - new_shift) : 0.0;
    total *= factor;
    for (double& v : first) v *= factor;
    for (double& v : second) v *= factor;
    shift = new_shift;
  }

  /// Adds `other` (any shift).
  void merge(const StateSums& other) {
    if (other.total == 0) return;
    rescale_to(other.shift);
    const double factor = std::exp(other.shift - shift);
    total += factor * other.total;
    for (std::size_t i = 0; i < first.size(); ++i) first[i] += factor * other.first[i];
    for (std::size_t i = 0; i < second.size(); ++i) second[i] += factor * other.second[i];
  }
};

/// One block: the high units fixed at `high` (bit k of high is unit l + k), the low l units
/// enumerated; the block's sums, scaled by e^{−bound}, are added to `sums`.
void enumerate_block(const std::vector<double>& w, const std::vector<double>& b, int n, int l,
                     std::int64_t high, StateSums& sums, std::vector<double>& s,
                     std::vector<double>& field, std::vector<double>& low_first,
                     std::vector<double>& low_second) {
  for (int i = 0; i < n; ++i) s[i] = i < l ? -1.0 : (((high >> (i - l)) & 1) ? 1.0 : -1.0);
  // The high units' constant and the low units' field from the high units and the biases.
  double constant = 0;
  for (int i = l; i < n; ++i) {
    double h = 0;
    for (int k = l; k < n; ++k) h += w[static_cast<std::size_t>(i) * n + k] * s[k];
    constant += 0.5 * s[i] * h + b[i] * s[i];
  }
  double energy = constant, bound = constant;
  for (int j = 0; j < l; ++j) {
    double external = b[j], internal = 0, row = 0;
    for (int k = l; k < n; ++k) external += w[static_cast<std::size_t>(j) * n + k] * s[k];
    for (int k = 0; k < l; ++k) {
      internal += w[static_cast<std::size_t>(j) * n + k] * s[k];
      row += std::fabs(w[static_cast<std::size_t>(j) * n + k]);
    }
    field[j] = internal + external;  // ∂e/∂s_j: W_jL s_L + f_j
    energy += 0.5 * s[j] * internal + external * s[j];
    bound += 0.5 * row + std::fabs(external);
  }
  std::fill(low_first.begin(), low_first.end(), 0.0);
  std::fill(low_second.begin(), low_second.end(), 0.0);
  double total = 0;
  const std::int64_t states = std::int64_t{1} << l;
  for (std::int64_t t = 0;; ++t) {
    const double weight = std::exp(energy - bound);
    total += weight;
    for (int j = 0; j < l; ++j) {
      const double ws = weight * s[j];
      low_first[j] += ws;
      double* row = low_second.data() + static_cast<std::size_t>(j) * l;
      for (int k = 0; k <= j; ++k) row[k] += ws * s[k];
    }
    if (t + 1 == states) break;
    // Gray code: state t + 1 flips unit ctz(t + 1).
    int j = 0;
    while ((((t + 1) >> j) & 1) == 0) ++j;
    const double s_j = s[j];
    energy -= 2.0 * s_j * field[j];
    for (int k = 0; k < l; ++k) field[k] -= 2.0 * s_j * w[static_cast<std::size_t>(k) * n + j];
    s[j] = -s_j;
  }
  // The block's sums, high units constant: Σ ω s_H = s_H Σ ω, Σ ω s_L s_H = (Σ ω s_L) s_H.
  StateSums block(n);
  block.shift = bound;
  block.total = total;
  for (int i = 0; i < n; ++i) block.first[i] = i < l ? low_first[i] : s[i] * total;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) {
      double v;
      if (i < l) {
        v = low_second[static_cast<std::size_t>(i) * l + k];
      } else if (k < l) {
        v = low_first[k] * s[i];
      } else {
        v = s[i] * s[k] * total;
      }
      block.second[static_cast<std::size_t>(i) * n + k] = v;
    }
  }
  sums.merge(block);
}

}  // namespace

BoltzmannExactMoments boltzmann_exact_moments(const std::vector<double>& w,
                                              const std::vector<double>& b) {
  const int n = static_cast<int>(b.size());
  MYRIAD_EXPECTS(n >= 1 && n <= 40, "boltzmann enumeration: units must lie in [1, 40], got ", n);
  MYRIAD_EXPECTS(w.size() == static_cast<std::size_t>(n) * n, "boltzmann enumeration: W has ",
                 w.size(), " entries, expected ", n * n);
  for (int i = 0; i < n; ++i) {
    MYRIAD_EXPECTS(std::isfinite(b[i]), "boltzmann enumeration: b[", i, "] is not finite");
    MYRIAD_EXPECTS(w[static_cast<std::size_t>(i) * n + i] == 0.0, "boltzmann enumeration: W[", i,
                   "][", i, "] must be 0");
    for (int k = 0; k < n; ++k)
      MYRIAD_EXPECTS(
          std::isfinite(w[static_cast<std::size_t>(i) * n + k]) &&
              w[static_cast<std::size_t>(i) * n + k] == w[static_cast<std::size_t>(k) * n + i],
          "boltzmann enumeration: W must be finite and symmetric at [", i, "][", k, "]");
  }
  const int l = std::min(n, kBoltzmannLowUnits);
  const std::int64_t blocks = std::int64_t{1} << (n - l);
  StateSums all(n);
#pragma omp parallel
  {
    StateSums mine(n);
    std::vector<double> s(static_cast<std::size_t>(n)), field(static_cast<std::size_t>(l));
    std::vector<double> low_first(static_cast<std::size_t>(l)),
        low_second(static_cast<std::size_t>(l) * l);
#pragma omp for schedule(dynamic)
    for (std::int64_t high = 0; high < blocks; ++high)
      enumerate_block(w, b, n, l, high, mine, s, field, low_first, low_second);
#pragma omp critical
    all.merge(mine);
  }
  BoltzmannExactMoments out;
  out.units = n;
  out.log_z = all.shift + std::log(all.total);
  out.mean.resize(static_cast<std::size_t>(n));
  out.second.resize(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i) {
    out.mean[i] = all.first[i] / all.total;
    for (int k = 0; k <= i; ++k) {
      const double v = all.second[static_cast<std::size_t>(i) * n + k] / all.total;
      out.second[static_cast<std::size_t>(i) * n + k] = v;
      out.second[static_cast<std::size_t>(k) * n + i] = v;
    }
  }
  return out;
}

RelaxationMoments relaxation_moments(const BoltzmannExactMoments& machine,
                                     const std::vector<double>& factor, int dim) {
  const int n = machine.units;
  MYRIAD_EXPECTS(factor.size() == static_cast<std::size_t>(n) * dim, "relaxation moments: Q has ",
                 factor.size(), " entries, expected ", n * dim);
  const auto q = [&](int i, int a) { return factor[static_cast<std::size_t>(i) * dim + a]; };
  RelaxationMoments out;
  out.mean.assign(static_cast<std::size_t>(dim), 0.0);
  out.covariance.assign(static_cast<std::size_t>(dim) * dim, 0.0);
  for (int a = 0; a < dim; ++a)
    for (int i = 0; i < n; ++i) out.mean[a] += q(i, a) * machine.mean[i];
  // Cov[s] Q, then Qᵀ (Cov[s] Q) + I.
  std::vector<double> cov_q(static_cast<std::size_t>(n) * dim, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double c =
          machine.second[static_cast<std::size_t>(i) * n + k] - machine.mean[i] * machine.mean[k];
      for (int a = 0; a < dim; ++a) cov_q[static_cast<std::size_t>(i) * dim + a] += c * q(k, a);
    }
  for (int a = 0; a < dim; ++a)
    for (int c = 0; c < dim; ++c) {
      double v = a == c ? 1.0 : 0.0;
      for (int i = 0; i < n; ++i) v += q(i, a) * cov_q[static_cast<std::size_t>(i) * dim + c];
      out.covariance[static_cast<std::size_t>(a) * dim + c] = v;
    }
  return out;
}

}  // namespace myriad::models
