#pragma once
// The per-chain bodies of the CUDA constrained-HMC kernels (kernels/chmc_kernels.cuh) and the
// device views they read, in a header every compiler can include: the kernels are grid-stride
// loops over these functions, and a host loop runs exactly the same code on host arrays in the
// device layout (tests/unit/test_chmc_chain_bodies.cpp checks it against the CPU backend without
// a GPU, for both chain mappings).
//
// Two placements of the scratch workspaces (ChmcScratchPlacement), one per chain mapping
// (backend/chmc_backend.hpp, ChmcChainMapping):
//   thread per chain: [element][chain] with the padded stride, so a warp reads element e of 32
//                     consecutive chains in one transaction;
//   warp per chain:   [chain][element], each chain's block padded to whole 32-byte sectors, so
//                     the 32 lanes of one chain read 32 consecutive elements in one transaction.
// The state (u, ∇φ, φ) is [element][chain] in both: it is read and written once per transition,
// and recorded draws and positions() need no second layout.

#include <cstdint>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/constrained_hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad::kernels {

/// Where element e of chain c's scratch lives: array[c · chain_step + e · element_step], with one
/// chain step per workspace array (T, Dual<T>, Dual<Dual<T>>).
struct ChmcScratchPlacement {
  std::int64_t element_step;
  std::int64_t work_chain_step;
  std::int64_t dual_chain_step;
  std::int64_t nested_chain_step;
  bool contiguous_chains;  ///< each chain's scratch one block: [chain][element]

  /// [element][chain] with stride `stride` (thread per chain).
  static ChmcScratchPlacement interleaved(std::int64_t stride) { return {stride, 1, 1, 1, false}; }

  /// [chain][element], blocks of whole 32-byte sectors (warp per chain).
  template <class T>
  static ChmcScratchPlacement chain_major(const ChmcLayout& layout) {
    return {1, sector_padded<T>(layout.size()), sector_padded<Dual<T>>(layout.dual_size()),
            sector_padded<Dual<Dual<T>>>(layout.nested_size()), true};
  }

  /// Values of each array that `chains` chains with padded stride `stride` occupy.
  std::int64_t work_values(const ChmcLayout& layout, std::int64_t chains,
                           std::int64_t stride) const {
    return values(layout.size(), work_chain_step, chains, stride);
  }
  std::int64_t dual_values(const ChmcLayout& layout, std::int64_t chains,
                           std::int64_t stride) const {
    return values(layout.dual_size(), dual_chain_step, chains, stride);
  }
  std::int64_t nested_values(const ChmcLayout& layout, std::int64_t chains,
                             std::int64_t stride) const {
    return values(layout.nested_size(), nested_chain_step, chains, stride);
  }

 private:
  template <class V>
  static std::int64_t sector_padded(std::int64_t elements) {
    constexpr std::int64_t per_sector = sizeof(V) >= 32 ? 1 : 32 / sizeof(V);
    return (elements + per_sector - 1) / per_sector * per_sector;
  }
  std::int64_t values(std::int64_t per_chain, std::int64_t chain_step, std::int64_t chains,
                      std::int64_t stride) const {
    return contiguous_chains ? chains * chain_step : per_chain * stride;
  }
};

/// Device views of the constrained-HMC ensemble: the state [element][chain] with the padded
/// stride (position and gradient have N elements per chain, potential one) and the three scratch
/// workspaces (layout.size(), dual_size() and nested_size() elements per chain) placed by
/// `scratch`.
template <class T>
struct ChmcEnsembleView {
  EnsembleView<T> position;    ///< u, on the manifold
  EnsembleView<T> gradient;    ///< ∇φ(u)
  T* potential;                ///< φ(u), one per chain
  T* work;                     ///< ChmcLayout::size() elements per chain
  Dual<T>* dual_work;          ///< ChmcLayout::dual_size() elements per chain
  Dual<Dual<T>>* nested_work;  ///< ChmcLayout::nested_size() elements per chain
  ChmcScratchPlacement scratch;

  /// The per-chain views that ConstrainedChain takes.
  MYRIAD_HD ChmcChain<T> chain(std::int64_t c) const {
    const std::int64_t step = scratch.element_step;
    return {position.chain(c),
            gradient.chain(c),
            potential + c,
            ChainWorkspace<T>{work + c * scratch.work_chain_step, step},
            ChainWorkspace<Dual<T>>{dual_work + c * scratch.dual_chain_step, step},
            ChainWorkspace<Dual<Dual<T>>>{nested_work + c * scratch.nested_chain_step, step}};
  }
};

/// Per-chain statistics of constrained HMC accumulated over the iterations of one backend call,
/// one entry per chain (definitions as in CpuChmcBackend::run_chunk); each chain's entries are
/// written by one thread (lane 0 of its team), so no atomics are needed.
struct ChmcStatisticsView {
  std::int64_t* accept_prob_fixed;  ///< Σ accept_prob_to_fixed(min(1, e^{H0 − H1})), 2^-32 units
  std::int64_t* accepted;
  std::int64_t* divergent;
  std::int64_t* non_finite;
  std::int64_t* not_converged;
  std::int64_t* not_reversible;
  std::int64_t* cholesky_failures;
  std::int64_t* gradient_evaluations;
  std::int64_t* newton_iterations;  ///< position-projection iterations, forward and reverse

  /// The view of `counters` = kCounters × chains values, [counter][chain].
  static constexpr int kCounters = 9;
  static ChmcStatisticsView of(std::int64_t* counters, std::int64_t chains) {
    return {counters,
            counters + chains,
            counters + 2 * chains,
            counters + 3 * chains,
            counters + 4 * chains,
            counters + 5 * chains,
            counters + 6 * chains,
            counters + 7 * chains,
            counters + 8 * chains};
  }
};

/// Places chain c on the manifold (mcmc/constrained_hmc.hpp, initialize_constrained_chain) and
/// returns whether it succeeded. Chains with equal c / chains_per_init use the random stream of
/// the superchain's first chain, (c / chains_per_init) · chains_per_init, and so share their
/// initial point (ChmcBackend::initialize), exactly as the CPU backend does.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD bool initialize_chain_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   std::uint64_t seed, int max_tries, std::int64_t chains_per_init,
                                   std::int64_t c, const Team& team = Team{}) {
  const std::int64_t init_stream = (c / chains_per_init) * chains_per_init;
  const RandomStream rng(seed, static_cast<std::uint64_t>(init_stream));
  return initialize_constrained_chain(generator, state.chain(c), rng, max_tries, team);
}

/// Runs iterations first_iteration … first_iteration + n_iterations − 1 of chain c with `team`.
/// N_s of each iteration comes from uniform_trajectory_steps (the same for every chain). When
/// `recorded` is not null, quantity q of chain c after iteration i goes to
/// recorded[(i · n_quantities + q) · chains + c], the layout DrawSink::consume expects.
/// Statistics are added to chain c's entries of `stats` with the CPU backend's definitions
/// (CpuChmcBackend::run_chunk): one count per transition whose status has the flag set. Lane 0
/// writes the statistics and the recorded quantities.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD void chain_iterations_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                                   int n_iterations, T* recorded, int n_quantities,
                                   const ChmcStatisticsView& stats, std::int64_t c,
                                   const Team& team = Team{}) {
  const std::int64_t chains = state.position.chains;
  const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
  const ChmcChain<T> chain = state.chain(c);
  ConstrainedChain<Generator, T, Team> machine(generator, chain, team);
  std::int64_t accept_prob_fixed = 0, accepted = 0, divergent = 0, non_finite = 0,
               not_converged = 0, not_reversible = 0, cholesky_failures = 0, evaluations = 0,
               newton_iterations = 0;
  for (int i = 0; i < n_iterations; ++i) {
    const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
    ChmcStep<T> step = settings.step;
    // Depends on (seed, iteration) only: every thread computes the same N_s.
    step.steps =
        uniform_trajectory_steps(settings.seed, iteration, settings.min_steps, settings.max_steps);
    const ChmcOutcome<T> out = machine.transition(rng, iteration, step);
    accept_prob_fixed += accept_prob_to_fixed(static_cast<double>(out.accept_prob));
    accepted += out.accepted ? 1 : 0;
    divergent += (out.status & kStatusDivergent) != 0 ? 1 : 0;
    non_finite += (out.status & kStatusNonFinite) != 0 ? 1 : 0;
    not_converged += (out.status & kStatusNotConverged) != 0 ? 1 : 0;
    not_reversible += (out.status & kStatusNotReversible) != 0 ? 1 : 0;
    cholesky_failures += (out.status & kStatusCholeskyFailure) != 0 ? 1 : 0;
    evaluations += out.gradient_evaluations;
    newton_iterations += out.newton_iterations;
    if (recorded != nullptr) {
      // The transition ended with its lanes' writes to the position fenced.
      on_lane_zero(team, [&] {
        const ChainVector<T> slot{
            recorded + static_cast<std::int64_t>(i) * n_quantities * chains + c, chains,
            n_quantities};
        record_quantities(generator, chain.position, slot);
      });
    }
  }
  if (team.rank() != 0) return;
  stats.accept_prob_fixed[c] += accept_prob_fixed;
  stats.accepted[c] += accepted;
  stats.divergent[c] += divergent;
  stats.non_finite[c] += non_finite;
  stats.not_converged[c] += not_converged;
  stats.not_reversible[c] += not_reversible;
  stats.cholesky_failures[c] += cholesky_failures;
  stats.gradient_evaluations[c] += evaluations;
  stats.newton_iterations[c] += newton_iterations;
}

}  // namespace myriad::kernels
