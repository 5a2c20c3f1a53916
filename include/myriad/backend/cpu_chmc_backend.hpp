#pragma once
// The CPU backend for constrained HMC: an OpenMP loop over the per-chain bodies of
// detail/chmc_chain_bodies.hpp, the same functions the CUDA kernels loop over. State and
// scratch are [chain][element], so each chain's Jacobian and Gram factor are contiguous and stay
// in cache while the chain runs all iterations of a call.
//
// Where the generator is written over its element type (generator_in_lanes, model/generator.hpp)
// the iterations run W chains at a time in SIMD lanes (detail/chmc_lane_blocks.hpp): the same
// transition, each lane's decisions a mask, each group's scratch in the thread's cache.
// Initialisation and restarts run one chain at a time (once per run, not per iteration), and so
// does an ensemble smaller than one group (its idle lanes would cost as much as busy ones).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/chmc_chain_bodies.hpp"
#include "myriad/detail/chmc_lane_blocks.hpp"
#include "myriad/detail/cpu_draw_chunks.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

template <class Generator, class T>
class CpuChmcBackend final : public CpuEnsemble<Generator, ChmcBackend<T>>,
                             public LaneKernelChoice<ChmcLaneFamily, Generator, T> {
 public:
  CpuChmcBackend(const Generator& g, std::int64_t chains, bool simd_lanes = true)
      : CpuEnsemble<Generator, ChmcBackend<T>>(g, chains),
        LaneKernelChoice<ChmcLaneFamily, Generator, T>(simd_lanes),
        layout_(chmc_layout<Generator, T>(g)),
        rows_(EnsembleLayout::chain_major(chains)),
        scratch_(kernels::ChmcScratchPlacement::chain_major<T>(layout_)) {
    check_chain_count(chains);
    MYRIAD_EXPECTS(layout_.m >= 1 && layout_.m <= layout_.n,
                   "a generator needs 1 <= M <= N, got M = ", layout_.m, ", N = ", layout_.n);
    state_.allocate(rows_, layout_, scratch_, /*batched_gram=*/false);
    if (this->lanes_.width > chains) this->lanes_ = ChmcLaneKernel<Generator, T>{};
  }

  int input_dim() const override { return layout_.n; }

  /// The CPU's threads and, where the transitions run in SIMD lanes, their instruction set and
  /// width.
  std::string device_name() const override {
    return this->lane_device_name("constrained HMC", "chains");
  }

  std::int64_t initialize(std::uint64_t seed, int max_tries,
                          std::int64_t chains_per_init) override {
    check_chains_per_init(chains_per_init);
    std::int64_t failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      if (!kernels::initialize_chain_at(this->model_, state_view(), seed, max_tries,
                                        chains_per_init, c))
        ++failed;
    }
    std::fill(state_.step_halvings.begin(), state_.step_halvings.end(), std::uint8_t(0));
    return failed;
  }

  IterationStats run(const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations) override {
    const int quantities = this->num_quantities();
    return run_in_draw_chunks(num_iterations, chunk_iterations, quantities, this->chains_, sink,
                              first_draw, chunk_, [&](int done, int n, T* recorded) {
                                return run_chunk(settings,
                                                 first_iteration + static_cast<std::uint32_t>(done),
                                                 n, recorded, quantities);
                              });
  }

  std::vector<T> positions() const override {
    std::vector<T> out(state_.position.size());
    for (std::int64_t c = 0; c < this->chains_; ++c)
      for (int d = 0; d < layout_.n; ++d)
        out[static_cast<std::size_t>(d) * this->chains_ + c] = state_.position[c * layout_.n + d];
    return out;
  }

  std::vector<std::uint8_t> step_halvings() const override { return state_.step_halvings; }

  /// The state and the workspaces, the dual ones included.
  ChmcChainState chain_state() const override {
    ChmcChainState out;
    const auto save = [&out](const auto& array, const char*) {
      out.arrays.push_back(state_bytes(array));
    };
    kernels::for_each_checkpointed(state_, save);
    save(state_.dual_work, "");
    save(state_.nested_work, "");
    return out;
  }

  void restore_chain_state(const ChmcChainState& state) override {
    MYRIAD_EXPECTS(state.arrays.size() == 7, "restore_chain_state: ", state.arrays.size(),
                   " arrays, the CPU backend holds 7 (a state of another backend)");
    std::size_t next = 0;
    const auto restore = [&](auto& array, const char* name) {
      restore_state_bytes(array, state.arrays[next++], name);
    };
    kernels::for_each_checkpointed(state_, restore);
    restore(state_.dual_work, "the dual workspace");
    restore(state_.nested_work, "the nested workspace");
  }

  std::vector<T> log_densities() const override {
    std::vector<T> out(state_.potential.size());
    for (std::size_t c = 0; c < out.size(); ++c) out[c] = -state_.potential[c];
    return out;
  }

  std::int64_t copy_chains(const std::vector<std::int64_t>& source) override {
    check_chain_sources(source, this->chains_);
    std::int64_t failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      if (!kernels::restart_chain_at(this->model_, state_view(), source.data(), c)) ++failed;
    }
    return failed;
  }

 private:
  /// The ensemble in the CPU's layout: [chain][element] for the state and the scratch.
  kernels::ChmcEnsembleView<T> state_view() { return state_.view(rows_, layout_, scratch_); }

  IterationStats run_chunk(const ChmcSettings<T>& settings, std::uint32_t first_iteration, int n,
                           T* recorded, int quantities) {
    const kernels::ChmcEnsembleView<T> state = state_view();
    IterationStats stats;
    if (this->lanes_.width > 0) {
      const std::int64_t width = this->lanes_.width;
      const std::int64_t groups = (this->chains_ + width - 1) / width;
#pragma omp parallel reduction(merge_stats : stats)
      {
        LaneGroup<T> group = chmc_lane_group<T>(layout_, this->lanes_.width);
#pragma omp for schedule(dynamic)
        for (std::int64_t g = 0; g < groups; ++g) {
          stats += chmc_lane_iterations(this->model_, this->lanes_, group, state, g * width,
                                        std::min(this->chains_, (g + 1) * width), settings,
                                        first_iteration, n, recorded, quantities);
        }
      }
      return stats;
    }
#pragma omp parallel for schedule(dynamic) reduction(merge_stats : stats)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      stats += kernels::chain_iterations(this->model_, state, settings, first_iteration, n,
                                         recorded, quantities, c);
    }
    return stats;
  }

  ChmcLayout layout_;
  EnsembleLayout rows_;  ///< the state's: [chain][element]
  kernels::ChmcScratchPlacement scratch_;
  kernels::ChmcEnsembleArrays<HostVector, T> state_;
  std::vector<T> chunk_;
};

template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cpu_chmc_backend(const Generator& g, std::int64_t chains,
                                                      bool simd_lanes = true) {
  return std::make_unique<CpuChmcBackend<Generator, T>>(g, chains, simd_lanes);
}

}  // namespace myriad
