#pragma once
// One No-U-Turn transition for one chain (Hoffman & Gelman 2014, with Betancourt's 2017
// multinomial sampling and generalised U-turn criterion, as Stan runs it), written without
// recursion so that it runs as one GPU thread per chain and in the CPU backend's loop alike
// (DESIGN.md, rule 1).
//
// The trajectory doubles: at depth j a subtree of 2^j leapfrog steps grows from the end in a
// random direction (ε < 0 backwards; momenta keep their forward-time sign). Every point z of the
// trajectory weighs w(z) = exp(H₀ − H(z)).
//  - Within a subtree the proposal is drawn by progressive multinomial sampling: leaf z replaces
//    the subtree's proposal with probability w(z) / Σ_subtree w.
//  - A finished subtree replaces the tree's proposal with probability min(1, Σ_new w / Σ_old w)
//    (Stan's biased progressive sampling, which favours later, farther points).
//  - Generalised U-turn (Betancourt 2017, §A.4.2): a (sub)tree with end momenta p₋, p₊ and
//    momentum sum ρ turns when (M⁻¹p₋)·ρ ≤ 0 or (M⁻¹p₊)·ρ ≤ 0. Every subtree of every subtree
//    must not turn; they are checked without recursion from checkpoints as in NumPyro's
//    iterative NUTS (Phan & Pradhan 2019): at even leaf n the momentum and running ρ are stored
//    at index popcount(n); at odd leaf n the subtrees ending there (one per trailing 1 bit of n)
//    are checked against the checkpoints popcount(n) − 1 down to popcount(n) − trailing_ones(n).
//  - Stan's extra checks across the two halves of each merge (Stan ≥ 2.21): a merged (sub)tree
//    also turns when its left half extended by the right half's first leaf, or its right half
//    extended by the left half's last leaf, turns. Without them NUTS misses U-turns on targets
//    that the metric makes isotropic: the momentum sum over a whole period is ≈ 0, and the tree
//    doubles on (a 10-D standard normal at ε = 0.82: 48.7 steps per tree instead of under 7,
//    trees to depth 9). The right half's first leaf is the next checkpoint; the left half's last
//    leaf is kept at the odd leaf that ends it (checkpoint_end_momentum), and the tree's old end at
//    each doubling (junction_momentum).
//  - A leaf whose energy error exceeds max_energy_error (or is not finite) is divergent: the
//    subtree is discarded and the tree stops, as does a turning subtree; the tree also stops when
//    the whole trajectory turns or reaches 2^max_depth − 1 steps (tree depth max_depth).
//
// The step-size adaptation statistic is Stan's: the mean over all leaves built of
// min(1, exp(H₀ − H(z))).
//
// Scratch: the chain's proposal/proposal_gradient arrays (HmcChain) hold the subtree's proposal
// and its momentum array the whole trajectory's ρ; the tree arrays (NutsTree) the two ends,
// the subtree's ρ and the checkpoints, (7 + 2 max_depth) · dim values per chain.

#include <cmath>
#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/mcmc/metric.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// Stan's default cap on the tree depth, and the largest accepted (2^15 − 1 leapfrog steps).
constexpr int kDefaultMaxTreeDepth = 10;
constexpr int kLargestMaxTreeDepth = 15;

/// Values per chain and dimension of NUTS's tree scratch (NutsTree) at a depth cap.
MYRIAD_HD constexpr int nuts_tree_vectors(int max_depth) { return 8 + 3 * max_depth; }

/// One chain's NUTS scratch, sliced from one vector of nuts_tree_vectors(max_depth) · dim values
/// (one ChainVector of the ensemble's tree array, either layout).
template <class T>
struct NutsTree {
  ChainVector<T> all;
  int dim;

  /// The k-th dim-vector of the scratch.
  MYRIAD_HD ChainVector<T> vector(int k) const {
    return {all.data + static_cast<std::int64_t>(k) * dim * all.stride, all.stride, dim};
  }
  MYRIAD_HD ChainVector<T> position(int side) const { return vector(3 * side); }
  MYRIAD_HD ChainVector<T> momentum(int side) const { return vector(3 * side + 1); }
  MYRIAD_HD ChainVector<T> gradient(int side) const { return vector(3 * side + 2); }
  MYRIAD_HD ChainVector<T> subtree_rho() const { return vector(6); }
  /// The end a doubling grows from, as it was before the new subtree's first step.
  MYRIAD_HD ChainVector<T> junction_momentum() const { return vector(7); }
  /// Checkpoint k: the momentum and running ρ at the first leaf of a pending subtree, and the
  /// momentum at the last leaf of its left half.
  MYRIAD_HD ChainVector<T> checkpoint_momentum(int k) const { return vector(8 + 3 * k); }
  MYRIAD_HD ChainVector<T> checkpoint_rho(int k) const { return vector(9 + 3 * k); }
  MYRIAD_HD ChainVector<T> checkpoint_end_momentum(int k) const { return vector(10 + 3 * k); }
};

/// Number of 1 bits of n.
MYRIAD_HD inline int count_ones(std::uint32_t n) {
  int count = 0;
  for (; n != 0; n &= n - 1) ++count;
  return count;
}

/// Number of trailing 1 bits of n.
MYRIAD_HD inline int trailing_ones(std::uint32_t n) {
  int count = 0;
  for (; (n & 1u) != 0; n >>= 1) ++count;
  return count;
}

/// The generalised U-turn criterion for a span with end momenta p₋, p₊ and momentum sum ρ
/// (rho(i) gives its entries): true when (M⁻¹p₋)·ρ ≤ 0 or (M⁻¹p₊)·ρ ≤ 0.
template <class T, class Vec, class Rho>
MYRIAD_HD bool span_turning(const MetricView<T>& metric, const Vec& p_minus, const Vec& p_plus,
                            Rho rho) {
  T minus = T(0), plus = T(0);
  for (int i = 0; i < metric.dim; ++i) {
    const T r = rho(i);  // velocity(p, i) reads all of p; ρ is formed entry by entry
    minus += metric.velocity(p_minus, i) * r;
    plus += metric.velocity(p_plus, i) * r;
  }
  return !(minus > T(0)) || !(plus > T(0));
}

/// The U-turn checks at odd leaf n of the subtree of 2^k leaves [a, n] (k ≥ 1) whose first leaf
/// is checkpoint s, with p and ρ at n: the whole span, ρ[a, n] = ρ_n − ρ_a + p_a (the running
/// sums include their own leaves), and for k ≥ 2 Stan's checks across its halves [a, m − 1] and
/// [m, n], where m is checkpoint s + 1: [a, m] and [m − 1, n].
template <class T>
MYRIAD_HD bool subtree_turning(const MetricView<T>& metric, const NutsTree<T>& tree, int s, int k,
                               const ChainVector<T>& p_end, const ChainVector<T>& rho_end) {
  const ChainVector<T> p_a = tree.checkpoint_momentum(s), rho_a = tree.checkpoint_rho(s);
  if (span_turning(metric, p_a, p_end, [&](int i) { return rho_end[i] - rho_a[i] + p_a[i]; }))
    return true;
  if (k < 2) return false;  // the halves are single leaves: the same span
  const ChainVector<T> p_m = tree.checkpoint_momentum(s + 1), rho_m = tree.checkpoint_rho(s + 1);
  const ChainVector<T> p_left_end = tree.checkpoint_end_momentum(s);
  return span_turning(metric, p_a, p_m, [&](int i) { return rho_m[i] - rho_a[i] + p_a[i]; }) ||
         span_turning(metric, p_left_end, p_end,
                      [&](int i) { return rho_end[i] - rho_m[i] + p_m[i] + p_left_end[i]; });
}

/// log(e^a + e^b), with e^−∞ = 0.
template <class T>
MYRIAD_HD T log_add_exp(T a, T b) {
  if (a == T(-INFINITY)) return b;
  if (b == T(-INFINITY)) return a;
  const T high = a > b ? a : b;
  const T low = a > b ? b : a;
  return high + myriad::log1p(myriad::exp(low - high));
}

/// One NUTS transition of one chain at `iteration`. step.leapfrog_steps is not used; the tree
/// stops at depth max_depth (1 … kLargestMaxTreeDepth). outcome.tree_depth is the depth of the
/// final tree (Stan's treedepth__; capped when it equals max_depth, as Stan counts), and
/// outcome.gradient_evaluations its leapfrog steps (n_leapfrog__).
template <class Model, class T>
MYRIAD_HD HmcOutcome<T> nuts_transition(const Model& model, const HmcChain<T>& chain,
                                        const NutsTree<T>& tree, const RandomStream& rng,
                                        std::uint32_t iteration, const HmcStep<T>& step,
                                        int max_depth) {
  const int dim = model.dim();
  const MetricView<T>& metric = step.metric;
  const ChainVector<T> rho = chain.momentum;  // the whole trajectory's momentum sum
  const ChainVector<T> subtree_rho = tree.subtree_rho();

  // p₀ ~ N(0, M) into the left end; both ends start at the current point.
  const ChainVector<T> p0 = tree.momentum(0);
  rng.fill_normal<T>(iteration, Purpose::momentum, p0, dim);
  metric.momentum_from_normal(p0);
  const T initial_energy = -*chain.log_density + metric.kinetic_energy(p0);
  for (int side = 0; side < 2; ++side) {
    copy_vector(tree.position(side), chain.position);
    copy_vector(tree.gradient(side), chain.gradient);
    if (side == 1) copy_vector(tree.momentum(1), p0);
  }
  copy_vector(rho, p0);

  HmcOutcome<T> outcome{T(0), false, kStatusOk, 0};
  T log_weight = T(0);  // log Σ w over the tree: the start weighs exp(0)
  T accept_sum = T(0);
  std::uint32_t leaf_number = 0;  // keys the leaves' uniforms across the whole trajectory
  bool stop = false;
  int depth = 0;
  while (depth < max_depth && !stop) {
    // Direction of this doubling (draw 2·depth) and its merge uniform (draw 2·depth + 1).
    const int side =
        rng.uniform<T>(iteration, Purpose::tree, static_cast<std::uint32_t>(2 * depth)) < T(0.5)
            ? 0
            : 1;
    const T eps = side == 1 ? step.step_size : -step.step_size;
    const T half_eps = T(0.5) * eps;
    const ChainVector<T> q = tree.position(side), p = tree.momentum(side), g = tree.gradient(side);
    copy_vector(tree.junction_momentum(), p);

    // Build the subtree of 2^depth leaves from this end, in place.
    T subtree_log_weight = T(-INFINITY);
    T subtree_log_density = T(0);
    bool subtree_valid = true;
    const std::uint32_t leaves = 1u << depth;
    for (std::uint32_t n = 0; n < leaves; ++n) {
      for (int i = 0; i < dim; ++i) p[i] += half_eps * g[i];
      metric.drift(q, p, eps);
      const T log_density = log_density_and_gradient(model, q, g);
      for (int i = 0; i < dim; ++i) p[i] += half_eps * g[i];
      ++outcome.gradient_evaluations;

      const T energy = -log_density + metric.kinetic_energy(p);
      const T energy_error = energy - initial_energy;
      if (!myriad::isfinite(energy_error)) {
        outcome.status |= kStatusNonFinite | kStatusDivergent;
        subtree_valid = false;
        break;
      }
      // Stan's statistic counts every leaf, the divergent one included.
      accept_sum += energy_error <= T(0) ? T(1) : myriad::exp(-energy_error);
      if (energy_error > step.max_energy_error) {
        outcome.status |= kStatusDivergent;
        subtree_valid = false;
        break;
      }
      // Progressive multinomial sampling within the subtree.
      const T leaf_log_weight = -energy_error;
      subtree_log_weight = log_add_exp(subtree_log_weight, leaf_log_weight);
      const T u = rng.uniform<T>(iteration, Purpose::tree_leaf, leaf_number++);
      if (u < myriad::exp(leaf_log_weight - subtree_log_weight)) {
        copy_vector(chain.proposal, q);
        copy_vector(chain.proposal_gradient, g);
        subtree_log_density = log_density;
      }
      // ρ of the subtree so far, checkpoints and the U-turn checks of the subtrees ending here.
      for (int i = 0; i < dim; ++i) subtree_rho[i] = (n == 0 ? T(0) : subtree_rho[i]) + p[i];
      if ((n & 1u) == 0) {
        const int k = count_ones(n);
        copy_vector(tree.checkpoint_momentum(k), p);
        copy_vector(tree.checkpoint_rho(k), subtree_rho);
      } else {
        // The subtrees of 2, 4, …, 2^t leaves end here (t trailing 1 bits); the one of 2^k
        // leaves starts at checkpoint popcount(n) − k.
        const int ones = count_ones(n), t = trailing_ones(n);
        for (int k = 1; k <= t && subtree_valid; ++k)
          subtree_valid = !subtree_turning(metric, tree, ones - k, k, p, subtree_rho);
        if (!subtree_valid) break;
        // The subtree of 2^t leaves ending here is a left half (bit t of n is 0): its parent
        // starts at the same checkpoint.
        copy_vector(tree.checkpoint_end_momentum(ones - t), p);
      }
    }
    if (!subtree_valid) break;  // a turning or divergent subtree is discarded

    ++depth;
    // Biased progressive sampling: the subtree's proposal replaces the tree's with probability
    // min(1, Σ_new w / Σ_old w).
    const T u_merge =
        rng.uniform<T>(iteration, Purpose::tree, static_cast<std::uint32_t>(2 * depth - 1));
    if (u_merge < myriad::exp(subtree_log_weight - log_weight)) {
      copy_vector(chain.position, chain.proposal);
      copy_vector(chain.gradient, chain.proposal_gradient);
      *chain.log_density = subtree_log_density;
      outcome.accepted = true;
    }
    log_weight = log_add_exp(log_weight, subtree_log_weight);
    // The whole trajectory, then Stan's checks across the old tree and the new subtree: the old
    // tree with the subtree's first leaf (checkpoint 0), the subtree with the old end.
    const ChainVector<T> far = tree.momentum(1 - side), junction = tree.junction_momentum();
    const ChainVector<T> first = tree.checkpoint_momentum(0);
    stop = span_turning(metric, far, p, [&](int i) { return rho[i] + subtree_rho[i]; }) ||
           span_turning(metric, far, first, [&](int i) { return rho[i] + first[i]; }) ||
           span_turning(metric, junction, p, [&](int i) { return subtree_rho[i] + junction[i]; });
    for (int i = 0; i < dim; ++i) rho[i] += subtree_rho[i];
  }
  outcome.tree_depth = depth;
  outcome.tree_depth_capped = depth == max_depth;
  outcome.accept_prob =
      outcome.gradient_evaluations > 0 ? accept_sum / T(outcome.gradient_evaluations) : T(0);
  return outcome;
}

}  // namespace myriad
