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
//    Stan's extra checks across the two halves of each merge (since 2.21) are not made, as in
//    NumPyro.
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
MYRIAD_HD constexpr int nuts_tree_vectors(int max_depth) { return 7 + 2 * max_depth; }

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
  MYRIAD_HD ChainVector<T> checkpoint_momentum(int k) const { return vector(7 + 2 * k); }
  MYRIAD_HD ChainVector<T> checkpoint_rho(int k) const { return vector(8 + 2 * k); }
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

/// The generalised U-turn criterion: true when (M⁻¹p₋)·ρ ≤ 0 or (M⁻¹p₊)·ρ ≤ 0.
template <class T, class Vec>
MYRIAD_HD bool is_turning(const MetricView<T>& metric, const Vec& p_minus, const Vec& p_plus,
                          const Vec& rho) {
  T minus = T(0), plus = T(0);
  for (int i = 0; i < metric.dim; ++i) {
    minus += metric.velocity(p_minus, i) * rho[i];
    plus += metric.velocity(p_plus, i) * rho[i];
  }
  return !(minus > T(0)) || !(plus > T(0));
}

/// The U-turn check of a subtree [m, n] from its checkpoint at leaf m: ρ[m, n] = ρ_n − ρ_m + p_m
/// (the running sums include their own leaves).
template <class T>
MYRIAD_HD bool checkpoint_turning(const MetricView<T>& metric, const NutsTree<T>& tree, int k,
                                  const ChainVector<T>& p_end, const ChainVector<T>& rho_end) {
  const ChainVector<T> p_start = tree.checkpoint_momentum(k), rho_start = tree.checkpoint_rho(k);
  T start = T(0), end = T(0);
  for (int i = 0; i < metric.dim; ++i) {
    const T rho = rho_end[i] - rho_start[i] + p_start[i];
    // velocity(p, i) reads all of p; ρ is formed entry by entry.
    start += metric.velocity(p_start, i) * rho;
    end += metric.velocity(p_end, i) * rho;
  }
  return !(start > T(0)) || !(end > T(0));
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

/// Copies n values.
template <class T>
MYRIAD_HD void copy_vector(const ChainVector<T>& to, const ChainVector<T>& from) {
  for (int i = 0; i < to.size; ++i) to[i] = from[i];
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
        const int newest = count_ones(n) - 1;
        const int oldest = newest - trailing_ones(n) + 1;
        for (int k = newest; k >= oldest && subtree_valid; --k)
          subtree_valid = !checkpoint_turning(metric, tree, k, p, subtree_rho);
        if (!subtree_valid) break;
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
    for (int i = 0; i < dim; ++i) rho[i] += subtree_rho[i];
    stop = is_turning(metric, tree.momentum(0), tree.momentum(1), rho);
  }
  outcome.tree_depth = depth;
  outcome.tree_depth_capped = depth == max_depth;
  outcome.accept_prob =
      outcome.gradient_evaluations > 0 ? accept_sum / T(outcome.gradient_evaluations) : T(0);
  return outcome;
}

}  // namespace myriad
