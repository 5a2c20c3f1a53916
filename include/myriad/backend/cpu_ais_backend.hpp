#pragma once
// The CPU backend of annealed importance sampling: an OpenMP loop over the per-particle bodies of
// detail/ais_particle_bodies.hpp, the functions the CUDA kernels loop over, each particle running
// a range of temperatures. Particles are independent until the final reduction, so the loop
// needs no synchronisation between temperatures. State is [particle][dim] (each thread walks its
// own contiguous rows).
// Hamiltonian transitions run W particles of one problem at a time in SIMD lanes where the
// target's gradient is written over its element type (detail/ais_lane_blocks.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/ais_lane_blocks.hpp"
#include "myriad/detail/ais_particle_bodies.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"

namespace myriad {

template <class Target, class T>
class CpuAisBackend final : public AisBackend<T>,
                            public LaneKernelChoice<AisLaneFamily, Target, T> {
 public:
  /// simd_lanes = false anneals every particle alone.
  CpuAisBackend(const Target& target, AisLayout<T> layout, bool simd_lanes = true)
      : LaneKernelChoice<AisLaneFamily, Target, T>(simd_lanes),
        target_(target),
        layout_(std::move(layout)),
        rows_(EnsembleLayout::chain_major(layout_.particles())) {
    state_.allocate(rows_, layout_.dim);
    started_.assign(static_cast<std::size_t>(layout_.particles()), 0);
  }

  const AisLayout<T>& layout() const override { return layout_; }

  /// The CPU's threads and, where Hamiltonian AIS runs in SIMD lanes, their instruction set.
  std::string device_name() const override {
    return this->lane_device_name("Hamiltonian AIS", "particles");
  }

  std::int64_t start(std::uint64_t seed, bool reverse) override {
    if (reverse) require_exact_samples(target_);
    seed_ = seed;
    reverse_ = reverse;
    const std::int64_t total = layout_.particles();
    const AnnealingBase<T> base = base_view();
    const AisBatch batch = this->batch();
    const AisEnsembleView<T> state = state_.view(rows_, layout_.dim);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < total; ++i)
      start_particle_at(target_, state, base, batch, reverse, started_.data(), i);
    return std::count(started_.begin(), started_.end(), std::uint8_t{0});
  }

  IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin,
                     std::uint32_t k_end) override {
    MYRIAD_EXPECTS(k_begin >= 1 && k_begin <= k_end &&
                       k_end <= static_cast<std::uint32_t>(layout_.temperatures()) + 1,
                   "steps [", k_begin, ", ", k_end, ") lie outside 1 .. ", layout_.temperatures());
    const std::int64_t total = layout_.particles();
    const AnnealingBase<T> base = base_view();
    const AnnealingPath path{layout_.beta.data(), layout_.temperatures(), reverse_};
    const AisBatch batch = this->batch();
    if (this->lanes_.width > 0 && settings.transition == AisTransition::hamiltonian)
      return run_in_lanes(base, batch, path, k_begin, k_end, settings);
    const AisEnsembleView<T> state = state_.view(rows_, layout_.dim);
    IterationStats stats;
#pragma omp parallel for schedule(static) reduction(merge_stats : stats)
    for (std::int64_t i = 0; i < total; ++i)
      stats += anneal_particle_at(target_, state, base, batch, path, k_begin, k_end, settings,
                                  /*stats=*/nullptr, i);
    return stats;
  }

  std::vector<double> log_weights() const override { return state_.log_weight; }

  std::vector<T> positions() const override { return state_.position; }

 private:
  /// run() with the particles in groups of the lane kernel's width, each group within one
  /// problem (its particles share the problem's target), the groups in parallel.
  IterationStats run_in_lanes(const AnnealingBase<T>& base, const AisBatch& batch,
                              const AnnealingPath& path, std::uint32_t k_begin, std::uint32_t k_end,
                              const AisSettings<T>& settings) {
    const std::int64_t per_problem = layout_.particles_per_problem;
    const std::int64_t width = this->lanes_.width;
    const std::int64_t groups_per_problem = (per_problem + width - 1) / width;
    const std::int64_t groups = groups_per_problem * layout_.problems;
    const AisEnsembleView<T> state = state_.view(rows_, layout_.dim);
    IterationStats stats;
#pragma omp parallel reduction(merge_stats : stats)
    {
      LaneGroup<T> group = ais_lane_group<T>(layout_.dim, this->lanes_.width);
#pragma omp for schedule(static)
      for (std::int64_t g = 0; g < groups; ++g) {
        const int problem = static_cast<int>(g / groups_per_problem);
        const std::int64_t first = problem * per_problem + (g % groups_per_problem) * width;
        const std::int64_t last = std::min(first + width, (problem + 1) * per_problem);
        stats += ais_lane_anneal_range(target_, this->lanes_, group, state, base, batch, problem,
                                       first, last, path, k_begin, k_end, settings);
      }
    }
    return stats;
  }

  AisBatch batch() const { return {seed_, layout_.particles_per_problem, layout_.particles()}; }

  AnnealingBase<T> base_view() const {
    const auto data_or_null = [](const std::vector<T>& v) {
      return v.empty() ? nullptr : v.data();
    };
    return {layout_.dim, data_or_null(layout_.base_mean), data_or_null(layout_.base_scale),
            data_or_null(layout_.lower), data_or_null(layout_.upper)};
  }

  Target target_;
  AisLayout<T> layout_;
  EnsembleLayout rows_;  ///< [particle][dim]
  std::uint64_t seed_ = 0;
  bool reverse_ = false;
  AisEnsembleArrays<HostVector, T> state_;
  std::vector<std::uint8_t> started_;  ///< 1 where the particle's start was finite
};

template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cpu_ais_backend(const Target& target, AisLayout<T> layout,
                                                    bool simd_lanes = true) {
  return std::make_unique<CpuAisBackend<Target, T>>(target, std::move(layout), simd_lanes);
}

}  // namespace myriad
