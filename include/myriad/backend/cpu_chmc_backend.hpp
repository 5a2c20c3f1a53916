#pragma once
// The CPU backend for constrained HMC: an OpenMP loop over chains calling the per-chain
// transition (mcmc/constrained_hmc.hpp). State and scratch are [chain][element], so each chain's
// Jacobian and Gram factor are contiguous.

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/ensemble_checks.hpp"
#include "myriad/backend/omp_statistics.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/constrained_hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

template <class Generator, class T>
class CpuChmcBackend final : public ChmcBackend<T> {
 public:
  CpuChmcBackend(const Generator& g, std::int64_t chains)
      : g_(g), chains_(chains), layout_(chmc_layout<Generator, T>(g)) {
    check_chain_count(chains);
    MYRIAD_EXPECTS(layout_.m >= 1 && layout_.m <= layout_.n,
                   "a generator needs 1 <= M <= N, got M = ", layout_.m, ", N = ", layout_.n);
    const auto c = static_cast<std::size_t>(chains);
    position_.assign(c * layout_.n, T(0));
    gradient_.assign(c * layout_.n, T(0));
    potential_.assign(c, T(0));
    work_.assign(c * layout_.size(), T(0));
    dual_work_.assign(c * layout_.dual_size(), Dual<T>(T(0)));
    nested_work_.assign(c * layout_.nested_size(), Dual<Dual<T>>(Dual<T>(T(0))));
    halvings_.assign(c, 0);
  }

  std::int64_t chains() const override { return chains_; }
  int input_dim() const override { return layout_.n; }
  int num_quantities() const override { return recorded_quantity_count(g_); }
  std::vector<std::string> quantity_names() const override { return recorded_quantity_names(g_); }
  std::string device_name() const override {
    return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
  }

  std::int64_t initialize(std::uint64_t seed, int max_tries,
                          std::int64_t chains_per_init) override {
    check_chains_per_init(chains_per_init);
    std::int64_t failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : failed)
    for (std::int64_t c = 0; c < chains_; ++c) {
      const RandomStream rng(seed,
                             static_cast<std::uint64_t>((c / chains_per_init) * chains_per_init));
      if (!initialize_constrained_chain(g_, chain(c), rng, max_tries)) ++failed;
    }
    std::fill(halvings_.begin(), halvings_.end(), std::uint8_t(0));
    return failed;
  }

  IterationStats run(const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                     int n_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations) override {
    check_iteration_count(n_iterations);
    IterationStats total;
    if (chunk_iterations <= 0) chunk_iterations = std::max(n_iterations, 1);
    const int quantities = num_quantities();
    for (int done = 0; done < n_iterations; done += chunk_iterations) {
      const int n = std::min(chunk_iterations, n_iterations - done);
      if (sink) chunk_.resize(static_cast<std::size_t>(n) * quantities * chains_);
      total += run_chunk(settings, first_iteration + static_cast<std::uint32_t>(done), n,
                         sink ? chunk_.data() : nullptr, quantities);
      if (sink) sink->consume(chunk_.data(), first_draw + done, n);
    }
    return total;
  }

  std::vector<T> positions() const override {
    std::vector<T> out(position_.size());
    for (std::int64_t c = 0; c < chains_; ++c)
      for (int d = 0; d < layout_.n; ++d)
        out[static_cast<std::size_t>(d) * chains_ + c] = position_[c * layout_.n + d];
    return out;
  }

  std::vector<std::uint8_t> step_halvings() const override { return halvings_; }

 private:
  ChmcChain<T> chain(std::int64_t c) {
    return {ChainVector<T>{position_.data() + c * layout_.n, 1, layout_.n},
            ChainVector<T>{gradient_.data() + c * layout_.n, 1, layout_.n},
            potential_.data() + c,
            ChainWorkspace<T>{work_.data() + c * layout_.size(), 1},
            ChainWorkspace<Dual<T>>{dual_work_.data() + c * layout_.dual_size(), 1},
            ChainWorkspace<Dual<Dual<T>>>{nested_work_.data() + c * layout_.nested_size(), 1}};
  }

  IterationStats run_chunk(const ChmcSettings<T>& settings, std::uint32_t first_iteration, int n,
                           T* recorded, int quantities) {
    std::vector<int> steps(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      steps[i] = uniform_trajectory_steps(settings.seed, first_iteration + i, settings.min_steps,
                                          settings.max_steps);
    IterationStats stats;
#pragma omp parallel for schedule(dynamic) reduction(merge_stats : stats)
    for (std::int64_t c = 0; c < chains_; ++c) {
      const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
      const ChmcChain<T> state = chain(c);
      ConstrainedChain<Generator, T> machine(g_, state);
      for (int i = 0; i < n; ++i) {
        ChmcStep<T> step = settings.step;
        step.steps = steps[i];
        std::uint8_t& halvings = halvings_[static_cast<std::size_t>(c)];
        if (settings.step_back_off) step.step_size *= step_back_off_scale<T>(halvings);
        const ChmcOutcome<T> out = machine.transition(rng, first_iteration + i, step);
        if (settings.step_back_off) halvings = next_step_halvings(halvings, out);
        stats.record(static_cast<double>(out.accept_prob), out.accepted, out.status,
                     out.gradient_evaluations, out.newton_iterations);
        if (recorded) {
          ChainVector<T> slot{recorded + static_cast<std::int64_t>(i) * quantities * chains_ + c,
                              chains_, quantities};
          record_quantities(g_, state.position, slot);
        }
      }
    }
    return stats;
  }

  Generator g_;
  std::int64_t chains_;
  ChmcLayout layout_;
  std::vector<T> position_, gradient_, potential_, work_;
  std::vector<Dual<T>> dual_work_;
  std::vector<Dual<Dual<T>>> nested_work_;
  std::vector<T> chunk_;
  std::vector<std::uint8_t> halvings_;  ///< step back-off h_c of each chain
};

template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cpu_chmc_backend(const Generator& g, std::int64_t chains) {
  return std::make_unique<CpuChmcBackend<Generator, T>>(g, chains);
}

}  // namespace myriad
