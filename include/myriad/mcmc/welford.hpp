#pragma once
// Running per-dimension mean and variance, merged batch by batch with the parallel form of
// Welford's update (Chan, Golub & LeVeque 1979): each batch is the ensemble's positions at one
// warm-up iteration, summarised on the device as (count, mean, M2).

#include <cstdint>
#include <vector>

#include "myriad/mcmc/ensemble_moments.hpp"

namespace myriad {

class WelfordVariance {
 public:
  explicit WelfordVariance(int dim) : mean_(dim, 0.0), m2_(dim, 0.0) {}

  void reset() {
    count_ = 0;
    for (auto& m : mean_) m = 0;
    for (auto& m : m2_) m = 0;
  }

  /// Merges a batch: δ = mean_b − mean_a; M2 = M2_a + M2_b + δ² n_a n_b / n.
  void add(const EnsembleMoments& batch) {
    if (batch.count == 0) return;
    const double na = static_cast<double>(count_), nb = static_cast<double>(batch.count);
    const double n = na + nb;
    for (std::size_t d = 0; d < mean_.size(); ++d) {
      const double delta = batch.mean[d] - mean_[d];
      mean_[d] += delta * nb / n;
      m2_[d] += batch.m2[d] + delta * delta * na * nb / n;
    }
    count_ += batch.count;
  }

  std::int64_t count() const { return count_; }
  const std::vector<double>& mean() const { return mean_; }
  /// Sample variance (n − 1 denominator) of dimension d.
  double variance(int d) const { return count_ > 1 ? m2_[d] / static_cast<double>(count_ - 1) : 0; }

 private:
  std::int64_t count_ = 0;
  std::vector<double> mean_;
  std::vector<double> m2_;
};

}  // namespace myriad
