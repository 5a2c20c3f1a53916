#pragma once
// Running per-dimension mean and variance, merged batch by batch with the parallel form of
// Welford's update (Chan, Golub & LeVeque 1979): each batch is the ensemble's positions at one
// warm-up iteration, summarised on the device as (count, mean, M2).

#include <cstdint>
#include <vector>

#include "myriad/mcmc/ensemble_moments.hpp"

namespace myriad {

namespace detail {

/// The count and running mean that both Welford accumulators merge batch by batch (Chan et al.):
/// a derived class adds its batch's second moments about the old mean first, with the weights
/// n_a, n_b and n = n_a + n_b, then merges the mean and the count.
class WelfordMean {
 public:
  std::int64_t count() const { return count_; }

 protected:
  struct MergeWeights {
    double na;  ///< values merged so far
    double nb;  ///< values in the batch
    double n;   ///< n_a + n_b
  };

  explicit WelfordMean(int dim) : mean_(dim, 0.0) {}

  /// Forgets every batch (the derived class zeroes its second moments).
  void reset_mean() {
    count_ = 0;
    for (auto& m : mean_) m = 0;
  }

  MergeWeights merge_weights(std::int64_t batch_count) const {
    const double na = static_cast<double>(count_), nb = static_cast<double>(batch_count);
    return {na, nb, na + nb};
  }

  /// mean += (mean_b − mean) n_b / n, count += n_b: after the second moments, which use the old
  /// mean.
  void merge_mean(const std::vector<double>& batch_mean, std::int64_t batch_count) {
    const MergeWeights w = merge_weights(batch_count);
    for (std::size_t i = 0; i < mean_.size(); ++i)
      mean_[i] += (batch_mean[i] - mean_[i]) * w.nb / w.n;
    count_ += batch_count;
  }

  std::int64_t count_ = 0;
  std::vector<double> mean_;
};

}  // namespace detail

class WelfordVariance : public detail::WelfordMean {
 public:
  explicit WelfordVariance(int dim) : WelfordMean(dim), m2_(dim, 0.0) {}

  void reset() {
    reset_mean();
    for (auto& m : m2_) m = 0;
  }

  /// Merges a batch: δ = mean_b − mean_a; M2 = M2_a + M2_b + δ² n_a n_b / n.
  void add(const EnsembleMoments& batch) {
    if (batch.count == 0) return;
    const MergeWeights w = merge_weights(batch.count);
    for (std::size_t d = 0; d < mean_.size(); ++d) {
      const double delta = batch.mean[d] - mean_[d];
      m2_[d] += batch.m2[d] + delta * delta * w.na * w.nb / w.n;
    }
    merge_mean(batch.mean, batch.count);
  }

  const std::vector<double>& mean() const { return mean_; }
  /// Sample variance (n − 1 denominator) of dimension d.
  double variance(int d) const { return count_ > 1 ? m2_[d] / static_cast<double>(count_ - 1) : 0; }

  /// Reads or writes the whole state, for a run's checkpoint (the archive must handle vectors).
  template <class Archive>
  void serialize(Archive& archive) {
    archive(count_, mean_, m2_);
  }

 private:
  std::vector<double> m2_;
};

/// The running covariance of the ensemble's positions for a dense metric, merged batch by batch
/// as WelfordVariance merges variances (Chan et al.): C = C_a + C_b + δδᵀ n_a n_b / n, with C
/// the sums of cross-products about the mean. A batch is the ensemble's covariance at one warm-up
/// iteration (HmcBackend::position_covariance, computed where the chains are): O(D²) here.
class WelfordCovariance : public detail::WelfordMean {
 public:
  explicit WelfordCovariance(int dim)
      : WelfordMean(dim), dim_(dim), cross_(static_cast<std::size_t>(dim) * dim, 0.0) {}

  void reset() {
    reset_mean();
    for (auto& c : cross_) c = 0;
  }

  /// Merges one batch (Chan et al.'s parallel update, entry by entry).
  void add(const EnsembleCovariance& batch) {
    if (batch.count == 0) return;
    const auto d = static_cast<std::size_t>(dim_);
    const MergeWeights w = merge_weights(batch.count);
    for (std::size_t i = 0; i < d; ++i) {
      const double delta_i = batch.mean[i] - mean_[i];
      for (std::size_t j = 0; j < d; ++j)
        cross_[i * d + j] +=
            batch.scatter[i * d + j] + delta_i * (batch.mean[j] - mean_[j]) * w.na * w.nb / w.n;
    }
    merge_mean(batch.mean, batch.count);
  }

  /// Sample covariance (n − 1 denominator) of dimensions i and j.
  double covariance(int i, int j) const {
    return count_ > 1 ? cross_[static_cast<std::size_t>(i) * dim_ + j] / double(count_ - 1) : 0;
  }

  /// Reads or writes the whole state, for a run's checkpoint (the archive must handle vectors).
  template <class Archive>
  void serialize(Archive& archive) {
    archive(dim_, count_, mean_, cross_);
  }

 private:
  int dim_;
  std::vector<double> cross_;  ///< dim × dim, symmetric
};

}  // namespace myriad
