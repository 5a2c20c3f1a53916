#pragma once
// CUDA kernels of the many-chain constrained-HMC backend (kernels/cuda_chmc_backend.cuh launches
// them).
//
// Like the HMC kernels (hmc_kernels.cuh), each kernel is a grid-stride loop over chains that
// calls the per-chain code of mcmc/constrained_hmc.hpp, the same functions the CPU backend
// (backend/cpu_chmc_backend.hpp) calls in its OpenMP loop, so a chain's arithmetic does not
// depend on the launch configuration. Every per-chain array is [element][chain] with one padded
// stride: state (u, ∇φ), φ, and the three scratch workspaces (T, Dual<T>, Dual<Dual<T>>) whose
// element e of chain c lives at array[e · stride + c] (linalg/matrix_view.hpp, ChainWorkspace
// with base = array + c). A warp therefore reads element e of 32 consecutive chains in one
// coalesced transaction, whatever the generator's M and N.
//
// Lockstep: N_s is drawn per iteration from the ensemble stream (uniform_trajectory_steps), so
// every thread runs the same outer loop; projections whose Newton counts differ per chain, and
// chains whose trajectory failed, diverge inside a warp and are masked by the hardware until the
// warp reconverges (DESIGN.md, rule 4). A failed chain returns at once: its remaining lanes idle.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/constrained_hmc.hpp"
#include "myriad/model/concept.hpp"
#include "reduction.cuh"

namespace myriad::kernels {

/// Device views of the constrained-HMC ensemble: every array is [element][chain] with the same
/// padded stride (position and gradient have N elements per chain, potential one, and the
/// workspaces layout.size(), dual_size() and nested_size()).
template <class T>
struct ChmcEnsembleView {
  EnsembleView<T> position;    ///< u, on the manifold
  EnsembleView<T> gradient;    ///< ∇φ(u)
  T* potential;                ///< φ(u), one per chain
  T* work;                     ///< ChmcLayout::size() elements per chain
  Dual<T>* dual_work;          ///< ChmcLayout::dual_size() elements per chain
  Dual<Dual<T>>* nested_work;  ///< ChmcLayout::nested_size() elements per chain

  /// The per-chain views that ConstrainedChain takes.
  MYRIAD_HD ChmcChain<T> chain(std::int64_t c) const {
    const std::int64_t stride = position.stride;
    return {position.chain(c),
            gradient.chain(c),
            potential + c,
            ChainWorkspace<T>{work + c, stride},
            ChainWorkspace<Dual<T>>{dual_work + c, stride},
            ChainWorkspace<Dual<Dual<T>>>{nested_work + c, stride}};
  }
};

/// Per-chain statistics of constrained HMC accumulated over the iterations of one backend call,
/// one entry per chain (definitions as in CpuChmcBackend::run_chunk); each thread updates only
/// its own chain's entries, so no atomics are needed.
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
};

/// Reads the statistics of chain c as one StatisticsTotals term (reduction.cuh).
struct LoadChmcStatistics {
  ChmcStatisticsView stats;
  __device__ StatisticsTotals operator()(std::int64_t c) const {
    StatisticsTotals t{};
    t.accept_prob_fixed = stats.accept_prob_fixed[c];
    t.accepted = stats.accepted[c];
    t.divergent = stats.divergent[c];
    t.non_finite = stats.non_finite[c];
    t.gradient_evaluations = stats.gradient_evaluations[c];
    t.not_converged = stats.not_converged[c];
    t.not_reversible = stats.not_reversible[c];
    t.cholesky_failures = stats.cholesky_failures[c];
    t.newton_iterations = stats.newton_iterations[c];
    return t;
  }
};

// ---------------------------------------------------------------------------------------------
// Per-chain bodies of the kernels: MYRIAD_HD, so that the kernels below are nothing but
// grid-stride loops over them and a host loop can run exactly the same code on host arrays in
// the device layout (tests/cuda/test_chmc_kernel_body.cu checks it against the CPU backend
// without a GPU).

/// Places chain c on the manifold (mcmc/constrained_hmc.hpp, initialize_constrained_chain) and
/// returns whether it succeeded. Chains with equal c / chains_per_init use the random stream of
/// the superchain's first chain, (c / chains_per_init) · chains_per_init, and so share their
/// initial point (ChmcBackend::initialize), exactly as the CPU backend does.
template <class Generator, class T>
MYRIAD_HD bool initialize_chain_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   std::uint64_t seed, int max_tries, std::int64_t chains_per_init,
                                   std::int64_t c) {
  const std::int64_t init_stream = (c / chains_per_init) * chains_per_init;
  const RandomStream rng(seed, static_cast<std::uint64_t>(init_stream));
  return initialize_constrained_chain(generator, state.chain(c), rng, max_tries);
}

/// Runs iterations first_iteration … first_iteration + n_iterations − 1 of chain c. N_s of each
/// iteration comes from uniform_trajectory_steps (the same for every chain). When `recorded` is
/// not null, quantity q of chain c after iteration i goes to
/// recorded[(i · n_quantities + q) · chains + c], the layout DrawSink::consume expects.
/// Statistics are added to chain c's entries of `stats` with the CPU backend's definitions
/// (CpuChmcBackend::run_chunk): one count per transition whose status has the flag set.
template <class Generator, class T>
MYRIAD_HD void chain_iterations_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                                   int n_iterations, T* recorded, int n_quantities,
                                   const ChmcStatisticsView& stats, std::int64_t c) {
  const std::int64_t chains = state.position.chains;
  const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
  const ChmcChain<T> chain = state.chain(c);
  ConstrainedChain<Generator, T> machine(generator, chain);
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
      const ChainVector<T> slot{recorded + static_cast<std::int64_t>(i) * n_quantities * chains + c,
                                chains, n_quantities};
      record_quantities(generator, chain.position, slot);
    }
  }
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

// ---------------------------------------------------------------------------------------------
// Kernels: grid-stride loops over chains, one chain per thread.

/// initialize_chain_at for every chain; initialized[c] = 1 on success, else 0.
template <class Generator, class T>
MYRIAD_KERNEL void __launch_bounds__(kChainBlockSize)
    initialize_constrained_chains_kernel(Generator generator, ChmcEnsembleView<T> state,
                                         std::uint8_t* initialized, std::uint64_t seed,
                                         int max_tries, std::int64_t chains_per_init) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    initialized[c] =
        initialize_chain_at(generator, state, seed, max_tries, chains_per_init, c) ? 1 : 0;
  }
}

/// chain_iterations_at for every chain: one launch runs a whole chunk of iterations (fused:
/// launch overhead is paid once per chunk, and a chain's state stays put between iterations).
template <class Generator, class T>
MYRIAD_KERNEL void __launch_bounds__(kChainBlockSize)
    chmc_iterations_kernel(Generator generator, ChmcEnsembleView<T> state, ChmcSettings<T> settings,
                           std::uint32_t first_iteration, int n_iterations, T* recorded,
                           int n_quantities, ChmcStatisticsView stats) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    chain_iterations_at(generator, state, settings, first_iteration, n_iterations, recorded,
                        n_quantities, stats, c);
  }
}

}  // namespace myriad::kernels
