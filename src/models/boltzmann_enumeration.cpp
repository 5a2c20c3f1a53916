// The streamed enumeration of models/boltzmann_enumeration.hpp.

#include "myriad/models/boltzmann_enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/models/boltzmann_block.hpp"

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

/// The sums of one enumerated block (enumerate_boltzmann_block's outputs), its high units constant
/// at `high`: Σ ω s_H = s_H Σ ω and Σ ω s_L s_H = (Σ ω s_L) s_H, added to `sums`.
void add_block(int n, int l, std::int64_t high, const BoltzmannBlockTotals& totals,
               const double* low_first, const double* low_second, StateSums& block,
               StateSums& sums) {
  const auto unit = [&](int i) { return ((high >> (i - l)) & 1) ? 1.0 : -1.0; };
  block.shift = totals.bound;
  block.total = totals.total;
  for (int i = 0; i < n; ++i) block.first[i] = i < l ? low_first[i] : unit(i) * totals.total;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) {
      double v;
      if (i < l) {
        v = low_second[packed_lower(i, k)];
      } else if (k < l) {
        v = low_first[k] * unit(i);
      } else {
        v = unit(i) * unit(k) * totals.total;
      }
      block.second[static_cast<std::size_t>(i) * n + k] = v;
    }
  }
  sums.merge(block);
}

/// The moments from the merged sums of every block.
BoltzmannExactMoments moments_from(const StateSums& all) {
  const int n = all.n;
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

}  // namespace

void check_boltzmann_machine(const std::vector<double>& w, const std::vector<double>& b) {
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
}

BoltzmannExactMoments boltzmann_exact_moments(const std::vector<double>& w,
                                              const std::vector<double>& b) {
  check_boltzmann_machine(w, b);
  const int n = static_cast<int>(b.size());
  const int l = std::min(n, kBoltzmannLowUnits);
  const std::int64_t blocks = std::int64_t{1} << (n - l);
  StateSums all(n);
#pragma omp parallel
  {
    StateSums mine(n), block(n);
    std::vector<double> s(static_cast<std::size_t>(n)), field(static_cast<std::size_t>(l));
    std::vector<double> low_first(static_cast<std::size_t>(l)),
        low_second(static_cast<std::size_t>(l) * (l + 1) / 2);
#pragma omp for schedule(dynamic)
    for (std::int64_t high = 0; high < blocks; ++high) {
      const BoltzmannBlockTotals totals =
          enumerate_boltzmann_block(w.data(), b.data(), n, l, high, s.data(), field.data(),
                                    low_first.data(), low_second.data());
      add_block(n, l, high, totals, low_first.data(), low_second.data(), block, mine);
    }
#pragma omp critical
    all.merge(mine);
  }
  return moments_from(all);
}

BoltzmannExactMoments boltzmann_moments_from_blocks(const std::vector<double>& w,
                                                    const std::vector<double>& b, int low_units,
                                                    const std::vector<double>& block_sums) {
  check_boltzmann_machine(w, b);
  const int n = static_cast<int>(b.size()), l = low_units;
  MYRIAD_EXPECTS(l >= 1 && l <= n, "boltzmann enumeration: low units must lie in [1, ", n,
                 "], got ", l);
  const std::int64_t blocks = std::int64_t{1} << (n - l);
  const int per_block = boltzmann_block_sum_count(l);
  MYRIAD_EXPECTS(block_sums.size() == static_cast<std::size_t>(blocks) * per_block,
                 "boltzmann enumeration: ", block_sums.size(), " block sums, expected ",
                 blocks * per_block);
  const auto at = [&](int q, std::int64_t high) {
    return block_sums[static_cast<std::size_t>(q) * blocks + high];
  };
  StateSums all(n);
#pragma omp parallel
  {
    StateSums mine(n), block(n);
    std::vector<double> low_first(static_cast<std::size_t>(l)),
        low_second(static_cast<std::size_t>(l) * (l + 1) / 2);
#pragma omp for schedule(static)
    for (std::int64_t high = 0; high < blocks; ++high) {
      for (int j = 0; j < l; ++j) low_first[j] = at(2 + j, high);
      for (std::size_t q = 0; q < low_second.size(); ++q)
        low_second[q] = at(2 + l + static_cast<int>(q), high);
      add_block(n, l, high, {at(0, high), at(1, high)}, low_first.data(), low_second.data(), block,
                mine);
    }
#pragma omp critical
    all.merge(mine);
  }
  return moments_from(all);
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
