#pragma once
// The CUDA backend of annealed importance sampling (backend/ais_backend.hpp): particle state in
// device memory, laid out for the particle mapping (ais_kernels.cuh) chosen at construction:
//   thread  [dim][particle], the particle count padded to a multiple of 32 so each dimension's
//           row is 128-byte aligned and a warp's 32 particles coalesce;
//   warp    [particle][dim], the dimension padded to a multiple of 4, so a warp's lanes read
//           consecutive coordinates of their particle; plus the target's team scratch.
// AisParticleMapping::automatic picks warp when the target has a team gradient
// (model/team_density.hpp) and one warp per particle still fits one resident wave of the warp
// kernel (particles · 32 ≤ its occupancy's resident threads: about 1600 particles of the product
// of experts in double on an H100, by ptxas's register count), else thread: below
// that many particles, threads per particle leave most of the device idle, and the team gradient
// spreads a costly evaluation over 32 lanes. The crossover is a design estimate, not yet
// measured (bench/bm_ais.cpp has both mappings' rows).
// Launches cover chunks of temperatures: long enough to amortise the launch, short enough that
// progress can be reported and a display watchdog is never hit.
//
// The library instantiates make_cuda_ais_backend for its built-in targets
// (kernels/builtin_instances.cmake). For a target of your own, include this header in a .cu file
// compiled by nvcc and instantiate
//
//   template std::unique_ptr<myriad::AisBackend<double>>
//   myriad::make_cuda_ais_backend<MyTarget, double>(const MyTarget&, myriad::AisLayout<double>);
//
// Device memory: 6 · dim + 2 values (6 · padded dim in the warp mapping, plus the team scratch)
// and one double per particle, 80 bytes of counters per particle, and the schedule (N + 1
// doubles).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ais_kernels.cuh"
#include "cuda_buffers.cuh"
#include "cuda_ensemble.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/team_density.hpp"
#include "reduction.cuh"

namespace myriad {

template <class Target, class T>
class CudaAisBackend final : public AisBackend<T>, cuda_detail::PassedToKernels<Target> {
 public:
  /// The problems' density model, whose team gradient the warp mapping uses.
  using Problem = std::decay_t<decltype(problem_target(std::declval<const Target&>(), 0))>;

  CudaAisBackend(const Target& target, AisLayout<T> layout)
      : target_(target),
        layout_(std::move(layout)),
        total_(layout_.particles()),
        ensemble_(cuda_detail::current_device_or_throw()) {
    // Lanes of the warp kernel resident at once: its registers, not the SM's thread limit, bound
    // it (ptxas: 168 registers per thread for the product of experts in double, 6 blocks per SM).
    mapping_ = resolve_mapping(
        layout_.mapping, total_,
        cuda_detail::resident_blocks(kernels::ais_steps_warp_kernel<Target, T>,
                                     kernels::kWarpBlockSize, ensemble_.sm_count()) *
            kernels::kWarpBlockSize);
    device_name_ = ensemble_.name() + ", one " + to_string(mapping_) + " per particle";
    if (mapping_ == AisParticleMapping::warp) {
      // [particle][dim]: element d of particle i at i · round_up(dim, 4) + d.
      rows_ = EnsembleLayout::chain_major(total_, 4);
      if constexpr (model_has_team_gradient<Problem>) {
        state_.scratch_size = particle_team_scratch_size(target_);
      }
    } else {
      // [dim][particle]: element d of particle i at d · round_up(particles, 32) + i.
      rows_ = EnsembleLayout::dim_major(total_, 32);
    }
    state_.allocate(rows_, layout_.dim);
    started_ = DeviceArray<std::uint8_t>(static_cast<std::size_t>(total_));
    stats_ = DeviceArray<IterationStats>(static_cast<std::size_t>(total_));
    beta_ = DeviceArray<double>(layout_.beta);
    const auto upload = [](const std::vector<T>& host, DeviceArray<T>& device) {
      if (!host.empty()) device = DeviceArray<T>(host);
    };
    upload(layout_.base_mean, base_mean_);
    upload(layout_.base_scale, base_scale_);
    upload(layout_.lower, lower_);
    upload(layout_.upper, upper_);
    for (DeviceArray<T>* array : state_.vectors()) ensemble_.zero(*array);
    ensemble_.zero(state_.scratch);
    if (mapping_ == AisParticleMapping::warp) {
      start_grid_ = ensemble_.warp_grid(kernels::ais_start_warp_kernel<Target, T>,
                                        kernels::kWarpBlockSize, total_);
      steps_grid_ = ensemble_.warp_grid(kernels::ais_steps_warp_kernel<Target, T>,
                                        kernels::kWarpBlockSize, total_);
    } else {
      start_grid_ = ensemble_.chain_grid(kernels::ais_start_kernel<Target, T>, total_);
      steps_grid_ = ensemble_.chain_grid(kernels::ais_steps_kernel<Target, T>, total_);
    }
  }

  /// The mapping `requested` resolves to for `particles` particles on a device with
  /// `resident_threads` threads resident at once (the file comment's rule). Throws
  /// myriad::invalid_argument for an unknown value.
  static AisParticleMapping resolve_mapping(AisParticleMapping requested, std::int64_t particles,
                                            std::int64_t resident_threads) {
    switch (requested) {
      case AisParticleMapping::thread:
      case AisParticleMapping::warp:
        return requested;
      case AisParticleMapping::automatic:
        return model_has_team_gradient<Problem> &&
                       particles * kernels::WarpTeam::kLanes <= resident_threads
                   ? AisParticleMapping::warp
                   : AisParticleMapping::thread;
    }
    throw invalid_argument(
        detail::concat("unknown AIS particle mapping ", static_cast<int>(requested)));
  }

  CudaAisBackend(const CudaAisBackend&) = delete;
  CudaAisBackend& operator=(const CudaAisBackend&) = delete;
  ~CudaAisBackend() override { cudaStreamSynchronize(ensemble_.stream()); }

  const AisLayout<T>& layout() const override { return layout_; }
  std::string device_name() const override { return device_name_; }

  std::int64_t start(std::uint64_t seed, bool reverse) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    if (reverse) require_exact_samples(target_);
    seed_ = seed;
    reverse_ = reverse;
    if (mapping_ == AisParticleMapping::warp) {
      kernels::ais_start_warp_kernel<Target, T>
          <<<start_grid_, kernels::kWarpBlockSize, 0, ensemble_.stream()>>>(
              target_, state_view(), base_view(), batch(), reverse, started_.data());
    } else {
      kernels::ais_start_kernel<Target, T>
          <<<start_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              target_, state_view(), base_view(), batch(), reverse, started_.data());
    }
    MYRIAD_CHECK_LAUNCH();
    return ensemble_.reduce_sum<std::int64_t>(total_,
                                              kernels::LoadInitializationFailure{started_.data()});
  }

  IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin,
                     std::uint32_t k_end) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    MYRIAD_EXPECTS(k_begin >= 1 && k_begin <= k_end &&
                       k_end <= static_cast<std::uint32_t>(layout_.temperatures()) + 1,
                   "steps [", k_begin, ", ", k_end, ") lie outside 1 .. ", layout_.temperatures());
    ensemble_.zero(stats_);
    const AnnealingPath path{beta_.data(), layout_.temperatures(), reverse_};
    if (mapping_ == AisParticleMapping::warp) {
      kernels::ais_steps_warp_kernel<Target, T>
          <<<steps_grid_, kernels::kWarpBlockSize, 0, ensemble_.stream()>>>(
              target_, state_view(), base_view(), batch(), path, k_begin, k_end, settings,
              stats_.data());
    } else {
      kernels::ais_steps_kernel<Target, T>
          <<<steps_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              target_, state_view(), base_view(), batch(), path, k_begin, k_end, settings,
              stats_.data());
    }
    MYRIAD_CHECK_LAUNCH();
    // Particles whose start failed skip their transitions: the kernels count them.
    return ensemble_.reduce_sum<IterationStats>(total_,
                                                kernels::LoadParticleStatistics{stats_.data()});
  }

  std::vector<double> log_weights() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return ensemble_.rows_to_host(state_.log_weight.data(), total_, total_, 1);
  }

  std::vector<T> positions() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    if (mapping_ == AisParticleMapping::warp) {
      // [particle][padded dim] on the device → [particle][dim] on the host.
      return ensemble_.rows_to_host(state_.position.data(), layout_.dim, rows_.row(layout_.dim),
                                    total_);
    }
    // [dim][padded particle] on the device → [particle][dim] on the host.
    const std::vector<T> by_dim =
        ensemble_.rows_to_host(state_.position.data(), total_, rows_.padded_chains, layout_.dim);
    std::vector<T> out(by_dim.size());
    for (std::int64_t i = 0; i < total_; ++i)
      for (int d = 0; d < layout_.dim; ++d)
        out[static_cast<std::size_t>(i) * layout_.dim + d] =
            by_dim[static_cast<std::size_t>(d) * total_ + i];
    return out;
  }

 private:
  AisBatch batch() const { return {seed_, layout_.particles_per_problem, total_}; }
  AisEnsembleView<T> state_view() { return state_.view(rows_, layout_.dim); }
  AnnealingBase<T> base_view() const {
    const auto data_or_null = [](const DeviceArray<T>& a) -> const T* {
      return a.size() ? a.data() : nullptr;
    };
    return {layout_.dim, data_or_null(base_mean_), data_or_null(base_scale_), data_or_null(lower_),
            data_or_null(upper_)};
  }

  Target target_;
  AisLayout<T> layout_;
  std::int64_t total_;
  // Device, stream and reduction scratch; declared before the arrays so that the stream is
  // destroyed after them (the destructor body has already waited for it).
  cuda_detail::EnsembleDevice ensemble_;
  AisParticleMapping mapping_ = AisParticleMapping::thread;  ///< resolved: thread or warp
  EnsembleLayout rows_;      ///< the particle arrays' layout, by the mapping
  std::string device_name_;  ///< the device's, with the particle mapping
  int start_grid_ = 1;
  int steps_grid_ = 1;
  std::uint64_t seed_ = 0;
  bool reverse_ = false;

  AisEnsembleArrays<DeviceArray, T> state_;
  DeviceArray<std::uint8_t> started_;  ///< 1 where the start was finite
  DeviceArray<IterationStats> stats_;
  DeviceArray<double> beta_;
  DeviceArray<T> base_mean_, base_scale_, lower_, upper_;
};

template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cuda_ais_backend(const Target& target, AisLayout<T> layout) {
  return std::make_unique<CudaAisBackend<Target, T>>(target, std::move(layout));
}

}  // namespace myriad
