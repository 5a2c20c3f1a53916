#pragma once
// The CPU backend of annealed importance sampling: an OpenMP loop over particles, each running
// the per-particle steps of estimate/hais.hpp over a range of temperatures. Particles are
// independent until the final reduction, so the loop needs no synchronisation between
// temperatures. State is [particle][dim] (each thread walks its own contiguous rows).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"

namespace myriad {

template <class Target, class T>
class CpuAisBackend final : public AisBackend<T> {
 public:
  CpuAisBackend(const Target& target, AisLayout<T> layout)
      : target_(target), layout_(std::move(layout)) {
    const auto n = static_cast<std::size_t>(layout_.particles());
    const auto values = n * static_cast<std::size_t>(layout_.dim);
    for (auto* array : {&position_, &momentum_, &gradient_, &proposal_, &proposal_momentum_,
                        &proposal_gradient_})
      array->assign(values, T(0));
    target_log_density_.assign(n, T(0));
    base_log_density_.assign(n, T(0));
    log_weight_.assign(n, 0.0);
  }

  const AisLayout<T>& layout() const override { return layout_; }

  std::string device_name() const override { return cpu_device_name(); }

  std::int64_t start(std::uint64_t seed, bool reverse) override {
    if (reverse) require_exact_samples(target_);
    seed_ = seed;
    reverse_ = reverse;
    const std::int64_t total = layout_.particles();
    const AnnealingBase<T> base = base_view();
    const AisBatch batch = this->batch();
    std::int64_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed)
    for (std::int64_t i = 0; i < total; ++i)
      if (!start_batch_particle(target_, base, particle(i), batch, i, reverse)) ++failed;
    return failed;
  }

  IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin,
                     std::uint32_t k_end) override {
    MYRIAD_EXPECTS(k_begin >= 1 && k_begin <= k_end &&
                       k_end <= static_cast<std::uint32_t>(layout_.temperatures()) + 1,
                   "steps [", k_begin, ", ", k_end, ") lie outside 1 .. ",
                   layout_.temperatures());
    const std::int64_t total = layout_.particles();
    const AnnealingBase<T> base = base_view();
    const AnnealingPath path{layout_.beta.data(), layout_.temperatures(), reverse_};
    const AisBatch batch = this->batch();
    IterationStats stats;
#pragma omp parallel for schedule(static) reduction(merge_stats : stats)
    for (std::int64_t i = 0; i < total; ++i)
      stats += anneal_batch_particle(target_, base, particle(i), batch, i, path, k_begin, k_end,
                                     settings);
    return stats;
  }

  std::vector<double> log_weights() const override { return log_weight_; }

  std::vector<T> positions() const override { return position_; }

 private:
  AisBatch batch() const { return {seed_, layout_.particles_per_problem, layout_.particles()}; }

  AnnealingBase<T> base_view() const {
    const auto data_or_null = [](const std::vector<T>& v) {
      return v.empty() ? nullptr : v.data();
    };
    return {layout_.dim, data_or_null(layout_.base_mean), data_or_null(layout_.base_scale),
            data_or_null(layout_.lower), data_or_null(layout_.upper)};
  }

  AisParticle<T> particle(std::int64_t i) {
    const std::int64_t offset = i * layout_.dim;
    const auto row = [&](std::vector<T>& a) { return ChainVector<T>{a.data() + offset, 1, layout_.dim}; };
    return {row(position_),          row(momentum_),          row(gradient_),
            row(proposal_),          row(proposal_momentum_), row(proposal_gradient_),
            &target_log_density_[i], &base_log_density_[i],   &log_weight_[i]};
  }

  Target target_;
  AisLayout<T> layout_;
  std::uint64_t seed_ = 0;
  bool reverse_ = false;
  std::vector<T> position_, momentum_, gradient_, proposal_, proposal_momentum_,
      proposal_gradient_;
  std::vector<T> target_log_density_, base_log_density_;
  std::vector<double> log_weight_;
};

template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cpu_ais_backend(const Target& target, AisLayout<T> layout) {
  return std::make_unique<CpuAisBackend<Target, T>>(target, std::move(layout));
}

}  // namespace myriad
