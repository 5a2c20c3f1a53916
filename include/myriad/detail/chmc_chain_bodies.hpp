#pragma once
// The per-chain bodies of constrained HMC and the ensemble views they read, in a header every
// compiler can include: the CUDA kernels (kernels/chmc_kernels.cuh) are grid-stride loops over
// these functions and the CPU backend (backend/cpu_chmc_backend.hpp) an OpenMP loop over them,
// in the CPU's layout ([chain][element] throughout); tests/unit/test_chmc_chain_bodies.cpp runs
// them on host arrays in the device layouts, for both chain mappings, against the CPU backend.
//
// Two placements of the scratch workspaces (ChmcScratchPlacement), one per chain mapping
// (backend/chmc_backend.hpp, ChmcChainMapping):
//   thread per chain: [element][chain] with the padded stride, so a warp reads element e of 32
//                     consecutive chains in one transaction;
//   warp per chain:   [chain][element], each chain's block padded to whole 32-byte sectors, so
//                     the 32 lanes of one chain read 32 consecutive elements in one transaction.
// The state (u, ∇φ, φ) is [element][chain] in both: it is read and written once per transition,
// and recorded draws and positions() need no second layout.
//
// Two ways to factor the Gram matrices (GramFactorization, backend/gram_factorization.hpp):
//   in the chain:  chain_iterations_at runs whole transitions, each chain's team factoring its
//                  own Gram matrices (ChmcMachine::transition);
//   batched:       the transition in phases (ChmcMachine::begin_transition and
//                  resume_transition): begin_transition_at, then, 1 + N_s · N_g times, a batched
//                  Cholesky of every chain's pending Gram matrix (linalg/batched_cholesky.hpp)
//                  followed by resume_transition_at. The Gram matrices live outside the scratch
//                  in two column-major batches (ChmcEnsembleView::gram), the progress records in
//                  an array of ChmcProgress.

#include <cstddef>
#include <cstdint>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"
#include "myriad/detail/chain_statistics.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/mcmc/step_back_off.hpp"
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
  /// Null (the Gram matrices in the scratch), or the batched factorisation's two batches of
  /// `chains` column-major gram_order × gram_order matrices: factor w of chain c at
  /// gram + (w · chains + c) · gram_order² (ChmcLayout::external_gram).
  T* gram = nullptr;
  int gram_order = 0;
  /// Each chain's step back-off h_c (ChmcSettings::step_back_off, mcmc/step_back_off.hpp); may
  /// be null when back-off is never on.
  std::uint8_t* step_halvings = nullptr;

  /// The per-chain views that ChmcMachine takes.
  MYRIAD_HD ChmcChain<T> chain(std::int64_t c) const {
    const std::int64_t step = scratch.element_step;
    const std::int64_t matrix = static_cast<std::int64_t>(gram_order) * gram_order;
    return {position.chain(c),
            gradient.chain(c),
            potential + c,
            ChainWorkspace<T>{work + c * scratch.work_chain_step, step},
            ChainWorkspace<Dual<T>>{dual_work + c * scratch.dual_chain_step, step},
            ChainWorkspace<Dual<Dual<T>>>{nested_work + c * scratch.nested_chain_step, step},
            gram != nullptr ? gram + c * matrix : nullptr,
            position.chains * matrix};
  }

  /// Factor `which`'s matrices of every chain: one batch for linalg::batched_cholesky_*.
  MYRIAD_HD T* gram_batch(int which) const {
    return gram + static_cast<std::int64_t>(which) * position.chains * gram_order * gram_order;
  }

  /// Whether factor `which` of chain c was factored: the batched Cholesky's info[c] is 0 and
  /// every pivot is finite and positive. (cuSOLVER's potrfBatched need not flag a NaN pivot; a
  /// NaN anywhere in G reaches a pivot through the Cholesky recurrences.)
  MYRIAD_HD bool gram_factored(int which, std::int64_t c, int info) const {
    if (info != 0) return false;
    const T* l = gram_batch(which) + c * gram_order * gram_order;
    for (int i = 0; i < gram_order; ++i) {
      const T pivot = l[static_cast<std::int64_t>(i) * (gram_order + 1)];
      if (!(pivot > T(0)) || !myriad::isfinite(pivot)) return false;
    }
    return true;
  }
};

/// The ensemble's state and scratch as a backend owns them: Array is HostVector on the CPU and
/// DeviceArray on a GPU (core/device_memory.hpp). Both backends size and view them with these
/// functions: the state in the backend's EnsembleLayout, the scratch in its placement.
template <template <class> class Array, class T>
struct ChmcEnsembleArrays {
  Array<T> position, gradient, potential, work;
  Array<Dual<T>> dual_work;
  Array<Dual<Dual<T>>> nested_work;
  Array<std::uint8_t> step_halvings;  ///< each chain's step back-off h_c
  Array<T> gram;  ///< a batched factorisation's two batches of chains · M² values; else empty

  /// Every array sized (Array(n): zeros on the CPU, undefined on a GPU); `gram` only where the
  /// Gram matrices are factored in batches.
  void allocate(const EnsembleLayout& ensemble, const ChmcLayout& layout,
                const ChmcScratchPlacement& scratch, bool batched_gram) {
    const std::int64_t chains = ensemble.chains, columns = ensemble.columns();
    position = Array<T>(ensemble.values(layout.n));
    gradient = Array<T>(ensemble.values(layout.n));
    potential = Array<T>(ensemble.values(1));
    work = Array<T>(static_cast<std::size_t>(scratch.work_values(layout, chains, columns)));
    dual_work =
        Array<Dual<T>>(static_cast<std::size_t>(scratch.dual_values(layout, chains, columns)));
    nested_work = Array<Dual<Dual<T>>>(
        static_cast<std::size_t>(scratch.nested_values(layout, chains, columns)));
    step_halvings = Array<std::uint8_t>(static_cast<std::size_t>(chains));
    if (batched_gram) gram = Array<T>(2 * static_cast<std::size_t>(chains) * layout.m * layout.m);
  }

  ChmcEnsembleView<T> view(const EnsembleLayout& ensemble, const ChmcLayout& layout,
                           const ChmcScratchPlacement& scratch) {
    return {ensemble.view(position.data(), layout.n),
            ensemble.view(gradient.data(), layout.n),
            potential.data(),
            work.data(),
            dual_work.data(),
            nested_work.data(),
            scratch,
            gram.size() > 0 ? gram.data() : nullptr,
            layout.m,
            step_halvings.data()};
  }
};

/// f(array, name) for the arrays of `arrays` (a ChmcEnsembleArrays) that every backend's
/// checkpoint holds first, in order (ChmcBackend::chain_state); a backend appends the scratch it
/// keeps between calls. The names are those restore_chain_state's errors give.
template <class Arrays, class F>
void for_each_checkpointed(Arrays& arrays, F&& f) {
  f(arrays.position, "u");
  f(arrays.gradient, "the gradient");
  f(arrays.potential, "phi");
  f(arrays.step_halvings, "the step back-offs");
  f(arrays.work, "the workspace");
}

/// One transition's outcome counted in a chain's own totals: one count per transition whose
/// status has the flag set.
template <class T>
MYRIAD_HD void record_outcome(IterationStats& totals, const ChmcOutcome<T>& out) {
  totals.record(static_cast<double>(out.accept_prob), out.accepted, out.status,
                out.gradient_evaluations, out.newton_iterations);
}

/// The recorded quantities of chain c at its current position into recorded_iteration[q ·
/// chains + c] (one iteration's block of DrawSink::consume's layout), on lane 0. The caller has
/// fenced the writes to the position.
template <class Generator, class T, class Team>
MYRIAD_HD void record_chain_at(const Generator& generator, const ChmcChain<T>& chain,
                               T* recorded_iteration, int num_quantities, std::int64_t chains,
                               std::int64_t c, const Team& team) {
  on_lane_zero(team, [&] {
    const ChainVector<T> slot{recorded_iteration + c, chains, num_quantities};
    record_quantities(generator, chain.position, slot);
  });
}

/// Places chain c on the manifold (mcmc/chmc.hpp, initialize_chmc_chain) and
/// returns whether it succeeded. Chains with equal c / chains_per_init use the random stream of
/// the superchain's first chain, (c / chains_per_init) · chains_per_init, and so share their
/// initial point (ChmcBackend::initialize), exactly as the CPU backend does.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD bool initialize_chain_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   std::uint64_t seed, int max_tries, std::int64_t chains_per_init,
                                   std::int64_t c, const Team& team = Team{}) {
  const std::int64_t init_stream = (c / chains_per_init) * chains_per_init;
  const RandomStream rng(seed, static_cast<std::uint64_t>(init_stream));
  return initialize_chmc_chain(generator, state.chain(c), rng, max_tries, team);
}

/// Chain c takes chain source[c]'s point u and step back-off (ChmcBackend::copy_chains), then
/// evaluates J, the Gram factor, φ and ∇φ there in its own workspace, as initialisation does (a
/// transition starts from the factor of the current point). No source moves
/// (check_chain_sources), so chains may restart in any order, in parallel. Returns whether the
/// evaluation succeeded (it did at the same point for the source); chains with source[c] == c
/// are left alone and return true.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD bool restart_chain_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                const std::int64_t* source, std::int64_t c,
                                const Team& team = Team{}) {
  const std::int64_t s = source[c];
  if (s == c) return true;
  on_lane_zero(team, [&] {
    const ChainVector<T> from = state.position.chain(s), to = state.position.chain(c);
    for (int d = 0; d < to.size; ++d) to[d] = from[d];
    if (state.step_halvings != nullptr) state.step_halvings[c] = state.step_halvings[s];
  });
  ChmcMachine<Generator, T, Team> machine(generator, state.chain(c), team);
  return machine.evaluate_current() == kStatusOk;
}

/// The settings of the transitions at `iteration`: the ensemble's, with N_s drawn by
/// uniform_trajectory_steps, which depends on (seed, iteration) only, so every chain (thread,
/// lane) computes the same N_s. Each chain then scales step_size by its own back-off.
template <class T>
MYRIAD_HD ChmcStep<T> iteration_step(const ChmcSettings<T>& settings, std::uint32_t iteration) {
  ChmcStep<T> step = settings.step;
  step.steps =
      uniform_trajectory_steps(settings.seed, iteration, settings.min_steps, settings.max_steps);
  return step;
}

/// Runs iterations first_iteration … first_iteration + num_iterations − 1 of chain c with `team`
/// and returns the chain's statistics over them (one count per transition whose status has the
/// flag set). N_s of each iteration comes from uniform_trajectory_steps (the same for every
/// chain). When `recorded` is not null, quantity q of chain c after iteration i goes to
/// recorded[(i · num_quantities + q) · chains + c], the layout DrawSink::consume expects. Lane 0
/// writes the recorded quantities and the chain's step back-off.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD IterationStats chain_iterations(const Generator& generator,
                                          const ChmcEnsembleView<T>& state,
                                          const ChmcSettings<T>& settings,
                                          std::uint32_t first_iteration, int num_iterations,
                                          T* recorded, int num_quantities, std::int64_t c,
                                          const Team& team = Team{}) {
  const std::int64_t chains = state.position.chains;
  const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
  const ChmcChain<T> chain = state.chain(c);
  ChmcMachine<Generator, T, Team> machine(generator, chain, team);
  IterationStats tally;
  // Every lane keeps its own copy of the back-off and updates it from the same outcome, so the
  // lanes agree on δt without a barrier; lane 0 stores it at the end.
  std::uint8_t halvings = settings.step_back_off ? state.step_halvings[c] : 0;
  for (int i = 0; i < num_iterations; ++i) {
    const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
    ChmcStep<T> step = iteration_step(settings, iteration);
    step.step_size *= step_back_off_scale<T>(halvings);
    const ChmcOutcome<T> out = machine.transition(rng, iteration, step);
    if (settings.step_back_off) halvings = next_step_halvings(halvings, out);
    record_outcome(tally, out);
    // The transition ended with its lanes' writes to the position fenced.
    if (recorded != nullptr) {
      record_chain_at(generator, chain,
                      recorded + static_cast<std::int64_t>(i) * num_quantities * chains,
                      num_quantities, chains, c, team);
    }
  }
  if (settings.step_back_off && team.rank() == 0) state.step_halvings[c] = halvings;
  return tally;
}

/// chain_iterations for the kernels: lane 0 adds the statistics to chain c's entries of `stats`.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD void chain_iterations_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                                   int num_iterations, T* recorded, int num_quantities,
                                   const ChainStatisticsView& stats, std::int64_t c,
                                   const Team& team = Team{}) {
  const IterationStats tally = chain_iterations(generator, state, settings, first_iteration,
                                                num_iterations, recorded, num_quantities, c, team);
  if (team.rank() == 0) stats.add(c, tally);
}

/// The batched factorisation's first launch of a transition (see the file comment): J and the
/// Gram matrix at chain c's position into factor 0, and a fresh progress[c].
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD void begin_transition_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                   ChmcProgress<T>* progress, std::int64_t c,
                                   const Team& team = Team{}) {
  ChmcMachine<Generator, T, Team> machine(generator, state.chain(c), team);
  ChmcProgress<T> record;
  machine.begin_transition(record);
  if (team.rank() == 0) progress[c] = record;
}

/// The batched factorisation's launch after factorisation number `phase` (0 … N_s · N_g) of the
/// transition at `iteration`, whose steps (step.steps = N_s, drawn by the host with
/// uniform_trajectory_steps) every chain shares; with `step_back_off`, chain c runs at its own
/// δt · 2^−h_c, and its last phase updates h_c. info[c] is the batched Cholesky's status of
/// chain c's pending factor. The last phase (`last`) adds the transition's outcome to chain c's
/// statistics and, when `recorded_iteration` is not null, records its quantities there
/// (record_chain_at).
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD void resume_transition_at(const Generator& generator, const ChmcEnsembleView<T>& state,
                                    std::uint64_t seed, std::uint32_t iteration,
                                    const ChmcStep<T>& step, bool step_back_off, int phase,
                                    const int* info, ChmcProgress<T>* progress, bool last,
                                    T* recorded_iteration, int num_quantities,
                                    const ChainStatisticsView& stats, std::int64_t c,
                                    const Team& team = Team{}) {
  const ChmcChain<T> chain = state.chain(c);
  ChmcMachine<Generator, T, Team> machine(generator, chain, team);
  ChmcProgress<T> record = progress[c];
  // h_c changes only in the last phase, after every lane has read it here.
  const std::uint8_t halvings = step_back_off ? state.step_halvings[c] : 0;
  ChmcStep<T> chain_step = step;
  chain_step.step_size *= step_back_off_scale<T>(halvings);
  // Every lane holds the record before lane 0 may overwrite it below.
  team.sync();
  const bool factored = state.gram_factored(record.pending, c, info[c]);
  machine.resume_transition(record, phase, RandomStream(seed, static_cast<std::uint64_t>(c)),
                            iteration, chain_step, factored);
  if (team.rank() == 0) progress[c] = record;
  if (!last) return;
  if (recorded_iteration != nullptr) {
    record_chain_at(generator, chain, recorded_iteration, num_quantities, state.position.chains, c,
                    team);
  }
  if (team.rank() == 0) {
    IterationStats tally;
    record_outcome(tally, record.out);
    stats.add(c, tally);
    if (step_back_off) state.step_halvings[c] = next_step_halvings(halvings, record.out);
  }
}

/// The host's schedule of one iteration with the batched factorisation (the CUDA backend's
/// launches and their host twin in tests/unit/test_chmc_chain_bodies.cpp): N_s drawn for the
/// iteration, then begin() (the begin launch) and, for each of the 1 + N_s · N_g phases,
/// factor(which) (the batched Cholesky of every chain's factor `which`: the pending factor
/// alternates 0, 1, 0, … the same in every chain) followed by resume(step, phase, last).
template <class T, class Begin, class Factor, class Resume>
void run_phased_iteration(const ChmcSettings<T>& settings, std::uint32_t iteration, Begin begin,
                          Factor factor, Resume resume) {
  const ChmcStep<T> step = iteration_step(settings, iteration);
  const int phases = 1 + step.steps * step.inner_steps;
  begin();
  for (int phase = 0; phase < phases; ++phase) {
    factor(phase % 2);
    resume(step, phase, phase + 1 == phases);
  }
}

}  // namespace myriad::kernels
