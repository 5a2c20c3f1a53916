#pragma once
// The CPU backend: an OpenMP loop over the per-chain bodies of detail/hmc_chain_bodies.hpp, the
// same functions the CUDA kernels loop over. State is stored [chain][dim] (each chain's vectors
// contiguous), and each chain runs all iterations of a call before the next chain starts, so its
// state stays in cache. The results are those of the GPU's [dim][chain] layout because every
// random number is keyed by (seed, chain, iteration, purpose, draw) and the step count by
// (seed, iteration).
//
// Where the model's gradient is written over its element type (model_gradient_in_lanes), HMC's
// iterations run W chains at a time in SIMD lanes (detail/hmc_lane_blocks.hpp): the same
// transition with a batch of W chains as its element type, at the widest instruction set the
// machine runs for the built-in models. NUTS runs one chain at a time.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/detail/cpu_draw_chunks.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/detail/hmc_lane_blocks.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

template <class Model, class T>
class CpuHmcBackend final : public CpuEnsemble<Model, HmcBackend<T>>,
                            public LaneKernelChoice<HmcLaneFamily, Model, T> {
 public:
  CpuHmcBackend(const Model& model, std::int64_t chains, bool simd_lanes = true)
      : CpuEnsemble<Model, HmcBackend<T>>(model, chains),
        LaneKernelChoice<HmcLaneFamily, Model, T>(simd_lanes),
        dim_(model.dim()),
        rows_(EnsembleLayout::chain_major(chains)) {
    check_hmc_ensemble_size(chains, dim_);
    state_.allocate(rows_, dim_);
    state_.metric.assign(static_cast<std::size_t>(dim_), T(1));
  }

  int dim() const override { return dim_; }

  /// The CPU's threads and, where HMC runs in SIMD lanes, their instruction set and width.
  std::string device_name() const override { return this->lane_device_name("HMC", "chains"); }

  std::int64_t initialize(std::uint64_t seed, T radius, int max_tries,
                          std::int64_t chains_per_init) override {
    check_chains_per_init(chains_per_init);
    const HmcEnsembleView<T> state = ensemble_view();
    std::int64_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      if (!initialize_chain_at(this->model_, state.position, state.gradient, state.log_density, c,
                               seed, radius, max_tries, chains_per_init))
        ++failed;
    }
    return failed;
  }

  std::int64_t set_positions(const std::vector<T>& positions) override {
    check_position_count(positions, this->chains_, dim_);
    const HmcEnsembleView<T> state = ensemble_view();
    std::int64_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      if (!place_chain_at(this->model_, state.position, state.gradient, state.log_density,
                          positions.data(), c))
        ++failed;
    }
    return failed;
  }

  void set_inverse_metric(const std::vector<T>& inverse_metric) override {
    state_.metric = metric_storage(inverse_metric, dim_);
    state_.dense_metric = inverse_metric.size() != static_cast<std::size_t>(dim_);
  }

  IterationStats run(const HmcSettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations, EnsembleMoments* moments) override {
    check_max_tree_depth(settings.max_tree_depth);
    if (settings.max_tree_depth > 0) reserve_tree(settings.max_tree_depth);
    const IterationStats total = run_in_draw_chunks(
        num_iterations, chunk_iterations, this->num_quantities(), this->chains_, sink, first_draw,
        chunk_, [&](int done, int n, T* recorded) {
          return run_chunk(settings, first_iteration + static_cast<std::uint32_t>(done), n,
                           recorded);
        });
    if (moments) {
      ensemble_moments_cpu(state_.position_view(rows_, dim_), *moments);
    }
    return total;
  }

  IterationStats run_with_criterion(const HmcSettings<T>& settings, std::uint32_t iteration,
                                    const CriterionRequest<T>& request,
                                    std::vector<double>& criterion_sums,
                                    EnsembleMoments& moments) override {
    check_criterion_request(request, dim_);
    const int rows = criterion_term_count(request.criterion, dim_);
    criterion_terms_.resize(static_cast<std::size_t>(rows) * this->chains_);
    const CriterionProbe<T> probe{request.criterion, request.centre.data(),
                                  request.direction.empty() ? nullptr : request.direction.data()};
    const CriterionTerms terms{criterion_terms_.data(), this->chains_};
    const HmcEnsembleView<T> state = ensemble_view();
    IterationStats stats;
    if (this->lanes_.width > 0) {
      stats = over_lane_groups([&](LaneGroup<T>& group, std::int64_t first, std::int64_t last) {
        return hmc_lane_criterion_iteration(this->model_, this->lanes_, group, state, first, last,
                                            settings, state_.metric_view(dim_), iteration, probe,
                                            terms);
      });
    } else {
#pragma omp parallel for schedule(static) reduction(merge_stats : stats)
      for (std::int64_t c = 0; c < this->chains_; ++c) {
        const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
        stats +=
            hmc_chain_criterion_iteration(this->model_, state.chain(c), rng, settings,
                                          state_.metric_view(dim_), iteration, probe, terms, c);
      }
    }
    sum_criterion_terms(criterion_terms_, this->chains_, rows, criterion_sums);
    ensemble_moments_cpu(state_.position_view(rows_, dim_), moments);
    return stats;
  }

  void position_covariance(EnsembleCovariance& out) override {
    ensemble_covariance_cpu(state_.position_view(rows_, dim_), out);
  }

  std::vector<T> positions() const override { return to_dim_major(state_.position); }

  HmcChainState<T> chain_state() const override {
    return {positions(), to_dim_major(state_.gradient), state_.log_density};
  }

  void restore_chain_state(const HmcChainState<T>& state) override {
    check_chain_state(state, this->chains_, dim_);
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      for (int d = 0; d < dim_; ++d) {
        const std::size_t from = static_cast<std::size_t>(d) * this->chains_ + c;
        state_.position[c * dim_ + d] = state.position[from];
        state_.gradient[c * dim_ + d] = state.gradient[from];
      }
    }
    state_.log_density = state.log_density;
  }

  std::vector<T> log_densities() const override { return state_.log_density; }

  void copy_chains(const std::vector<std::int64_t>& source) override {
    check_chain_sources(source, this->chains_);
    const HmcEnsembleView<T> state = ensemble_view();
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < this->chains_; ++c) copy_chain_state_at(state, source.data(), c);
  }

 private:
  /// A [chain][dim] array in the interface's layout, [dim][chain].
  std::vector<T> to_dim_major(const std::vector<T>& chain_major) const {
    std::vector<T> out(chain_major.size());
    for (std::int64_t c = 0; c < this->chains_; ++c)
      for (int d = 0; d < dim_; ++d)
        out[static_cast<std::size_t>(d) * this->chains_ + c] = chain_major[c * dim_ + d];
    return out;
  }

  HmcEnsembleView<T> ensemble_view() { return state_.view(rows_, dim_); }

  /// NUTS scratch for trees up to max_depth deep ([chain][vector][dim]).
  void reserve_tree(int max_depth) {
    if (const std::size_t size = state_.tree_shortfall(rows_, dim_, max_depth))
      state_.tree.assign(size, T(0));
  }

  IterationStats run_chunk(const HmcSettings<T>& settings, std::uint32_t first_iteration, int n,
                           T* recorded) {
    if (settings.max_tree_depth > 0) return run_nuts_chunk(settings, first_iteration, n, recorded);
    const HmcEnsembleView<T> state = ensemble_view();
    const int quantities = this->num_quantities();
    if (this->lanes_.width > 0) {
      return over_lane_groups([&](LaneGroup<T>& group, std::int64_t first, std::int64_t last) {
        return hmc_lane_iterations(this->model_, this->lanes_, group, state, first, last, settings,
                                   state_.metric_view(dim_), first_iteration, n, recorded,
                                   quantities);
      });
    }
    IterationStats stats;
#pragma omp parallel for schedule(static) reduction(merge_stats : stats)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
      stats += hmc_chain_iterations(this->model_, state.chain(c), rng, settings,
                                    state_.metric_view(dim_), first_iteration, n, recorded,
                                    quantities, this->chains_, c);
    }
    return stats;
  }

  /// NUTS over groups of kWarpLanes consecutive chains, each group on one thread, so that the
  /// group's most leapfrog steps per iteration give the lockstep count a GPU warp would pay
  /// (IterationStats::lockstep_gradient_evaluations; the CUDA kernel counts its real warps).
  IterationStats run_nuts_chunk(const HmcSettings<T>& settings, std::uint32_t first_iteration,
                                int n, T* recorded) {
    const HmcEnsembleView<T> state = ensemble_view();
    const int quantities = this->num_quantities();
    const std::int64_t chains = this->chains_;
    const std::int64_t groups = (chains + kWarpLanes - 1) / kWarpLanes;
    IterationStats stats;
#pragma omp parallel reduction(merge_stats : stats)
    {
      std::vector<int> steps(static_cast<std::size_t>(n)), most(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
      for (std::int64_t group = 0; group < groups; ++group) {
        std::fill(most.begin(), most.end(), 0);
        const std::int64_t first = group * kWarpLanes;
        const std::int64_t last = std::min(chains, first + kWarpLanes);
        for (std::int64_t c = first; c < last; ++c) {
          const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
          stats += nuts_chain_iterations(this->model_, state.chain(c), state.nuts_tree(c), rng,
                                         settings, state_.metric_view(dim_), first_iteration, n,
                                         recorded, quantities, chains, c, steps.data());
          for (int i = 0; i < n; ++i) most[i] = std::max(most[i], steps[i]);
        }
        for (int i = 0; i < n; ++i) stats.lockstep_gradient_evaluations += (last - first) * most[i];
      }
    }
    return stats;
  }

  /// body(group, first, last) over the lane groups of all chains, in parallel, each thread with
  /// its own group scratch; the sum of the statistics it returns.
  template <class Body>
  IterationStats over_lane_groups(const Body& body) {
    const std::int64_t width = this->lanes_.width;
    const std::int64_t groups = (this->chains_ + width - 1) / width;
    IterationStats stats;
#pragma omp parallel reduction(merge_stats : stats)
    {
      LaneGroup<T> group = hmc_lane_group<T>(dim_, this->lanes_.width);
#pragma omp for schedule(static)
      for (std::int64_t g = 0; g < groups; ++g)
        stats += body(group, g * width, std::min(this->chains_, (g + 1) * width));
    }
    return stats;
  }

  /// Lanes of a GPU warp, for the lockstep count.
  static constexpr std::int64_t kWarpLanes = 32;

  int dim_;
  EnsembleLayout rows_;  ///< [chain][dim]
  HmcEnsembleArrays<HostVector, T> state_;
  std::vector<T> chunk_;
  std::vector<double> criterion_terms_;  ///< [row][chain] (mcmc/trajectory_criterion.hpp)
};

/// The CPU backend for any model.
template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_cpu_hmc_backend(const Model& model, std::int64_t chains,
                                                    bool simd_lanes = true) {
  return std::make_unique<CpuHmcBackend<Model, T>>(model, chains, simd_lanes);
}

}  // namespace myriad
