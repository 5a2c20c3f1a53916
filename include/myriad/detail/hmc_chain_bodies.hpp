#pragma once
// The per-chain bodies of many-chain HMC and the checks of its backends' arguments, in a header
// every compiler can include: the CPU backend (backend/cpu_hmc_backend.hpp) is an OpenMP loop
// over these functions and the CUDA kernels (kernels/hmc_kernels.cuh) are grid-stride loops over
// them, so the two backends cannot drift apart (DESIGN.md rule 1). They differ only in the
// layout of the ensemble arrays the views describe: [chain][dim] on the CPU, so that a chain's
// vectors share cache lines; [dim][chain] with a padded stride on the GPU, so that a warp's
// threads read consecutive addresses.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/mcmc/metric.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// Views of the ensemble state of HMC, all with one layout.
template <class T>
struct HmcEnsembleView {
  EnsembleView<T> position;           ///< current points
  EnsembleView<T> gradient;           ///< ∇ log π at the current points
  EnsembleView<T> proposal;           ///< scratch: trajectory position
  EnsembleView<T> momentum;           ///< scratch: trajectory momentum
  EnsembleView<T> proposal_gradient;  ///< scratch: ∇ log π along the trajectory
  T* log_density;                     ///< log π at the current points, one per chain
  /// NUTS scratch (mcmc/nuts.hpp): nuts_tree_vectors(max depth) · dim values per chain; empty
  /// (dim 0) until a backend first runs NUTS.
  EnsembleView<T> tree;

  /// The per-chain view that hmc_transition takes.
  MYRIAD_HD HmcChain<T> chain(std::int64_t c) const {
    return {position.chain(c), gradient.chain(c), log_density + c,
            proposal.chain(c), momentum.chain(c), proposal_gradient.chain(c)};
  }

  /// The NUTS scratch of chain c.
  MYRIAD_HD NutsTree<T> nuts_tree(std::int64_t c) const { return {tree.chain(c), position.dim}; }
};

/// The ensemble state of HMC as a backend owns it, in its layout: Array is HostVector on the CPU
/// and DeviceArray on a GPU (core/device_memory.hpp). Both backends size and view it with these
/// functions.
template <template <class> class Array, class T>
struct HmcEnsembleArrays {
  Array<T> position, gradient, proposal, momentum, proposal_gradient;
  Array<T> log_density;
  Array<T> tree;  ///< NUTS scratch (nuts_tree_vectors(max depth) · dim per chain); empty until NUTS
  Array<T> metric;  ///< metric_storage: the diagonal, or dense M⁻¹ and its factor
  bool dense_metric = false;

  /// Every array but the tree sized for `dim` (Array(n): zeros on the CPU, undefined on a GPU).
  void allocate(const EnsembleLayout& layout, int dim) {
    for (Array<T>* array : vectors()) *array = Array<T>(layout.values(dim));
    log_density = Array<T>(layout.values(1));
  }
  /// The five per-chain vectors.
  std::array<Array<T>*, 5> vectors() {
    return {&position, &gradient, &proposal, &momentum, &proposal_gradient};
  }
  /// The values the NUTS scratch needs for trees up to max_depth deep where it holds fewer, else
  /// 0 (the scratch is large enough).
  std::size_t tree_shortfall(const EnsembleLayout& layout, int dim, int max_depth) const {
    const std::size_t needed = layout.values(nuts_tree_vectors(max_depth) * dim);
    return tree.size() < needed ? needed : 0;
  }
  HmcEnsembleView<T> view(const EnsembleLayout& layout, int dim) {
    const auto rows = [&](Array<T>& array, int n) { return layout.view(array.data(), n); };
    return {rows(position, dim),
            rows(gradient, dim),
            rows(proposal, dim),
            rows(momentum, dim),
            rows(proposal_gradient, dim),
            log_density.data(),
            rows(tree, layout.dim_of(tree.size()))};
  }
  MetricView<T> metric_view(int dim) const {
    return MetricView<T>::from_storage(metric.data(), dim, dense_metric);
  }
  /// The current points, read-only (the ensemble moments).
  EnsembleView<const T> position_view(const EnsembleLayout& layout, int dim) const {
    return layout.view(static_cast<const T*>(position.data()), dim);
  }
};

/// One chain's counters over the iterations of one call, summed in the chain's own variables
/// (registers on a GPU); integers, acceptance in 2^-32 fixed point, so that any order of summing
/// chains gives the same totals. Only the counters HMC and NUTS set: with a whole IterationStats
/// as the running tally (AcceptProbTotal's two words, the transitions and the four
/// constrained-HMC counters that HMC never sets) ptxas spilled 24–64 more bytes per thread in
/// hmc_iterations_kernel at sm_90 (scripts/kernel-resources), the kernel whose leapfrog loop
/// bounds HMC's speed. HMC's outcomes have tree depth 0, so in its kernel the depth sums are
/// constants the compiler folds.
struct HmcChainTotals {
  std::int64_t accept_prob_fixed = 0;
  std::int64_t inverse_accept_fixed = 0;
  std::int64_t accepted = 0;
  std::int64_t divergent = 0;
  std::int64_t non_finite = 0;
  std::int64_t gradient_evaluations = 0;
  std::int64_t tree_depth_sum = 0;
  int tree_depth_max = 0;
  std::int64_t tree_depth_capped = 0;

  template <class T>
  MYRIAD_HD void add(const HmcOutcome<T>& out) {
    accept_prob_fixed += accept_prob_to_fixed(static_cast<double>(out.accept_prob));
    inverse_accept_fixed +=
        accept_prob_to_fixed(scaled_inverse_accept(static_cast<double>(out.accept_prob)));
    accepted += out.accepted ? 1 : 0;
    divergent += (out.status & kStatusDivergent) != 0 ? 1 : 0;
    non_finite += (out.status & kStatusNonFinite) != 0 ? 1 : 0;
    gradient_evaluations += out.gradient_evaluations;
    tree_depth_sum += out.tree_depth;
    tree_depth_max = out.tree_depth > tree_depth_max ? out.tree_depth : tree_depth_max;
    tree_depth_capped += out.tree_depth_capped ? 1 : 0;
  }

  /// The totals as IterationStats, over `transitions` transitions.
  MYRIAD_HD IterationStats stats(std::int64_t transitions) const {
    IterationStats s;
    s.accept_prob_fixed += accept_prob_fixed;
    s.inverse_accept_fixed += inverse_accept_fixed;
    s.transitions = transitions;
    s.accepted = accepted;
    s.divergent = divergent;
    s.non_finite = non_finite;
    s.gradient_evaluations = gradient_evaluations;
    s.tree_depth_sum = tree_depth_sum;
    s.tree_depth_max = tree_depth_max;
    s.tree_depth_capped = tree_depth_capped;
    return s;
  }
};

/// Draws chain c's initial point (mcmc/hmc.hpp, initialize_chain) into the ensemble arrays;
/// true when a finite one was found. Chains c with equal c / chains_per_init draw from the stream
/// of the superchain's first chain and so share their initial point (HmcBackend::initialize).
template <class Model, class T>
MYRIAD_HD bool initialize_chain_at(const Model& model, const EnsembleView<T>& position,
                                   const EnsembleView<T>& gradient, T* log_density, std::int64_t c,
                                   std::uint64_t seed, T radius, int max_tries,
                                   std::int64_t chains_per_init) {
  const std::int64_t init_stream = (c / chains_per_init) * chains_per_init;
  const RandomStream rng(seed, static_cast<std::uint64_t>(init_stream));
  return initialize_chain(model, position.chain(c), gradient.chain(c), log_density + c, rng, radius,
                          max_tries, init_stream);
}

/// Places chain c at point c of `points` ([dim][chain], `chains` apart: the layout positions()
/// returns) and evaluates log density and gradient there (HmcBackend::set_positions); true when
/// both are finite.
template <class Model, class T>
MYRIAD_HD bool place_chain_at(const Model& model, const EnsembleView<T>& position,
                              const EnsembleView<T>& gradient, T* log_density, const T* points,
                              std::int64_t c) {
  const ChainVector<T> x = position.chain(c);
  for (int d = 0; d < x.size; ++d)
    x[d] = points[static_cast<std::int64_t>(d) * position.chains + c];
  return evaluate_chain(model, x, gradient.chain(c), log_density + c);
}

/// Chain c takes chain source[c]'s point, gradient and log density (HmcBackend::copy_chains);
/// the trajectory arrays are scratch, rewritten by the next transition. No source moves
/// (check_chain_sources), so the chains may copy in any order, in parallel.
template <class T>
MYRIAD_HD void copy_chain_state_at(const HmcEnsembleView<T>& state, const std::int64_t* source,
                                   std::int64_t c) {
  const std::int64_t s = source[c];
  if (s == c) return;
  const ChainVector<T> from_x = state.position.chain(s), to_x = state.position.chain(c);
  const ChainVector<T> from_g = state.gradient.chain(s), to_g = state.gradient.chain(c);
  for (int d = 0; d < to_x.size; ++d) {
    to_x[d] = from_x[d];
    to_g[d] = from_g[d];
  }
  state.log_density[c] = state.log_density[s];
}

/// The settings of one iteration. The step count depends on (seed, iteration) only, so every
/// chain takes the same number and a warp stays converged through the leapfrog loop.
template <class T>
MYRIAD_HD HmcStep<T> iteration_step(const HmcSettings<T>& settings, const MetricView<T>& metric,
                                    std::uint32_t iteration) {
  return {settings.step_size,
          jittered_leapfrog_steps(settings.seed, iteration, settings.max_leapfrog_steps,
                                  settings.jitter, settings.quasi_random_jitter),
          metric, settings.max_energy_error};
}

/// Records chain c's quantities after the i-th iteration of a call into `recorded` (when not
/// null): quantity q goes to recorded[(i · num_quantities + q) · chains + c], the layout
/// DrawSink::consume expects.
template <class Model, class T>
MYRIAD_HD void record_chain_quantities(const Model& model, const ChainVector<T>& position,
                                       T* recorded, int i, int num_quantities, std::int64_t chains,
                                       std::int64_t c) {
  if (recorded == nullptr) return;
  const ChainVector<T> slot{recorded + static_cast<std::int64_t>(i) * num_quantities * chains + c,
                            chains, num_quantities};
  record_quantities(model, position, slot);
}

/// Runs iterations first_iteration … first_iteration + num_iterations − 1 of chain c, whose views
/// and random stream the caller has formed (HmcEnsembleView::chain, RandomStream(seed, c)),
/// recording its quantities into `recorded` when not null (record_chain_quantities).
template <class Model, class T>
MYRIAD_HD IterationStats hmc_chain_iterations(
    const Model& model, const HmcChain<T>& chain, const RandomStream& rng,
    const HmcSettings<T>& settings, const MetricView<T>& metric, std::uint32_t first_iteration,
    int num_iterations, T* recorded, int num_quantities, std::int64_t chains, std::int64_t c) {
  HmcChainTotals totals;
  for (int i = 0; i < num_iterations; ++i) {
    const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
    totals.add(
        hmc_transition(model, chain, rng, iteration, iteration_step(settings, metric, iteration)));
    record_chain_quantities(model, chain.position, recorded, i, num_quantities, chains, c);
  }
  return totals.stats(num_iterations);
}

/// NUTS (mcmc/nuts.hpp) in place of hmc_chain_iterations, at settings.max_tree_depth, with the
/// chain's tree scratch. steps[i], when steps is not null, receives iteration i's leapfrog steps
/// (the backends' lockstep accounting).
template <class Model, class T>
MYRIAD_HD IterationStats nuts_chain_iterations(const Model& model, const HmcChain<T>& chain,
                                               const NutsTree<T>& tree, const RandomStream& rng,
                                               const HmcSettings<T>& settings,
                                               const MetricView<T>& metric,
                                               std::uint32_t first_iteration, int num_iterations,
                                               T* recorded, int num_quantities, std::int64_t chains,
                                               std::int64_t c, int* steps) {
  HmcChainTotals totals;
  for (int i = 0; i < num_iterations; ++i) {
    const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
    const HmcOutcome<T> outcome =
        nuts_transition(model, chain, tree, rng, iteration,
                        iteration_step(settings, metric, iteration), settings.max_tree_depth);
    totals.add(outcome);
    if (steps != nullptr) steps[i] = outcome.gradient_evaluations;
    record_chain_quantities(model, chain.position, recorded, i, num_quantities, chains, c);
  }
  return totals.stats(num_iterations);
}

/// One warm-up iteration of chain c that also writes its terms of the requested trajectory
/// criterion (mcmc/trajectory_criterion.hpp; HmcBackend::run_with_criterion). The transition is
/// hmc_transition itself: S at the start is taken before it moves the chain, and the proposal
/// and final momentum it leaves in its scratch vectors are the trajectory's end.
template <class Model, class T>
MYRIAD_HD IterationStats hmc_chain_criterion_iteration(
    const Model& model, const HmcChain<T>& chain, const RandomStream& rng,
    const HmcSettings<T>& settings, const MetricView<T>& metric, std::uint32_t iteration,
    const CriterionProbe<T>& probe, const CriterionTerms& terms, std::int64_t c) {
  const double start_square = criterion_square(probe, chain.position, metric);
  const HmcOutcome<T> outcome =
      hmc_transition(model, chain, rng, iteration, iteration_step(settings, metric, iteration));
  write_criterion_terms(probe, terms, c, start_square, static_cast<double>(outcome.accept_prob),
                        chain.proposal, chain.momentum, chain.position, metric);
  HmcChainTotals totals;
  totals.add(outcome);
  return totals.stats(1);
}

/// The criterion's sums over chains from the per-chain terms, in chain order (the CPU backend;
/// the CUDA backend sums the same rows with its dimension reductions).
inline void sum_criterion_terms(const std::vector<double>& terms, std::int64_t chains, int rows,
                                std::vector<double>& sums) {
  sums.assign(static_cast<std::size_t>(rows), 0.0);
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < chains; ++c)
      sum += terms[static_cast<std::size_t>(r * chains + c)];
    sums[static_cast<std::size_t>(r)] = sum;
  }
}

/// A criterion request fit for the ensemble: a centre of dim finite values, and for SNAPER a
/// direction of dim finite values.
template <class T>
void check_criterion_request(const CriterionRequest<T>& request, int dim) {
  MYRIAD_EXPECTS(static_cast<int>(request.centre.size()) == dim, "criterion centre has length ",
                 request.centre.size(), ", expected ", dim);
  if (request.criterion == TrajectoryCriterion::snaper)
    MYRIAD_EXPECTS(static_cast<int>(request.direction.size()) == dim,
                   "SNAPER direction has length ", request.direction.size(), ", expected ", dim);
}

// ---------------------------------------------------------------------------------------------
// The arguments every HMC backend checks beyond those of detail/ensemble_checks.hpp.

/// A chain count check_chain_count accepts and a positive dimension.
inline void check_hmc_ensemble_size(std::int64_t chains, int dim) {
  check_chain_count(chains);
  MYRIAD_EXPECTS(dim > 0, "model dimension must be positive, got ", dim);
}

/// A NUTS depth cap HmcSettings accepts: 0 (HMC) or 1 … kLargestMaxTreeDepth.
inline void check_max_tree_depth(int max_tree_depth) {
  MYRIAD_EXPECTS(max_tree_depth >= 0 && max_tree_depth <= kLargestMaxTreeDepth,
                 "max tree depth must lie in [1, ", kLargestMaxTreeDepth, "] (0: HMC), got ",
                 max_tree_depth);
}

/// The inverse metric as the backends store it, one copy shared by every chain
/// (MetricView::from_storage reads it): a diagonal of `dim` positive, finite entries, kept as
/// given; or a dense M⁻¹ of dim² entries (row-major, symmetric positive definite, dim at most
/// kMaxDenseMetricDim), kept followed by its Cholesky factor L. Throws invalid_argument
/// otherwise.
template <class T>
std::vector<T> metric_storage(const std::vector<T>& inverse_metric, int dim) {
  const auto n = static_cast<std::int64_t>(inverse_metric.size());
  const auto d = static_cast<std::int64_t>(dim);
  MYRIAD_EXPECTS(n == d || (n == d * d && dim > 1), "inverse metric has ", n, " entries: expected ",
                 dim, " (diagonal) or ", d * d, " (dense)");
  for (std::int64_t i = 0; i < n; ++i)
    MYRIAD_EXPECTS(std::isfinite(static_cast<double>(inverse_metric[i])), "inverse metric entry ",
                   i, " is not finite");
  if (n == d) {
    for (int i = 0; i < dim; ++i)
      MYRIAD_EXPECTS(inverse_metric[i] > 0, "inverse metric entry ", i, " must be positive, got ",
                     inverse_metric[i]);
    return inverse_metric;
  }
  MYRIAD_EXPECTS(dim <= kMaxDenseMetricDim, "a dense metric supports dimensions up to ",
                 kMaxDenseMetricDim, ", got ", dim);
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < i; ++j)
      MYRIAD_EXPECTS(inverse_metric[i * d + j] == inverse_metric[j * d + i],
                     "dense inverse metric is not symmetric at (", i, ", ", j, ")");
  std::vector<T> storage(inverse_metric);
  storage.insert(storage.end(), inverse_metric.begin(), inverse_metric.end());
  MYRIAD_EXPECTS(linalg::cholesky_in_place(dense_matrix(storage.data() + d * d, dim, dim)),
                 "dense inverse metric is not positive definite");
  return storage;
}

}  // namespace myriad
