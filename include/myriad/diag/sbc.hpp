#pragma once
// The statistics of simulation-based calibration (SBC): Talts, Betancourt, Simpson, Vehtari &
// Gelman (2018), "Validating Bayesian inference algorithms with simulation-based calibration",
// arXiv:1804.06788, and the graphical uniformity test of Säilynoja, Bürkner & Vehtari (2022),
// "Graphical test for discrete uniformity and its applications in goodness-of-fit evaluation
// and multiple sample comparison", Statistics and Computing 32:32.
//
// If θ̃ ~ π(θ), ỹ ~ π(y | θ̃) and θ_1 … θ_L are draws from the exact posterior π(θ | ỹ), the
// rank of θ̃ among them is uniform on {0, …, L} (Talts et al., Theorem 1). A sampler is checked
// by computing that rank in N replications and testing the N ranks for discrete uniformity:
//   - rank_histogram: the rank histogram of Talts et al. with Pearson's chi-square test;
//   - ecdf_difference_bands: the ECDF of the fractional ranks minus the uniform CDF, inside
//     simultaneous 1 − α bands (Säilynoja et al., Sec. 2), which shows *how* the ranks fail
//     (∪: posterior too narrow; ∩: too wide; one-sided: biased) and keeps its level however
//     finely it is evaluated.
// Both tests assume the N ranks independent; ranks among autocorrelated MCMC draws are uniform
// only in expectation, so L should not exceed the draws' effective sample size (Talts et al.
// thin the chains to L draws for that reason).
//
// Host code (src/diag/sbc.cpp). The binomial and chi-square tails come from Boost.Math, used
// only in that file: this header needs nothing beyond the standard library.

#include <cstdint>
#include <vector>

namespace myriad::diag {

/// The rank of `truth` among the `count` draws draws[i·stride], i < count: the number of draws
/// below truth, plus, for the t draws equal to truth, ⌊tie_uniform · (t + 1)⌋ — the position of
/// truth among its ties drawn uniformly from {0, …, t}, so that discrete quantities (for which
/// ties have positive probability) keep uniform ranks; counting ties as below (or above) would
/// pile the ranks up at one end. Lies in 0 … count. tie_uniform must lie in [0, 1)
/// (e.g. RandomStream::uniform); throws myriad::invalid_argument for count < 0, stride < 1, a
/// NaN truth or draw, or tie_uniform outside [0, 1).
std::int64_t sbc_rank(const double* draws, std::int64_t count, std::int64_t stride, double truth,
                      double tie_uniform);

/// Histogram of N ranks with Pearson's chi-square test of uniformity.
struct RankHistogram {
  int bins = 0;
  std::int64_t max_rank = 0;         ///< L: ranks lie in 0 … L
  std::vector<std::int64_t> counts;  ///< counts[b]: ranks r with ⌊r / ((L + 1)/bins)⌋ = b
  double chi_square = 0;             ///< X² = Σ_b (counts[b] − N/bins)² / (N/bins)
  int degrees_of_freedom = 0;        ///< bins − 1
  double p_value = 1;                ///< P(χ²_{bins−1} ≥ X²), upper tail
};

/// Groups ranks in 0 … max_rank into `bins` bins of (max_rank + 1)/bins consecutive rank values
/// each and tests the counts against equal expected counts N/bins: X² is asymptotically
/// χ²_{bins−1} under uniformity (its expected count per bin should be ≳ 5). Bins of unequal
/// numbers of rank values would have unequal expected counts and make a flat histogram the
/// wrong reference (Talts et al. ask for bins that divide L + 1), so (max_rank + 1) % bins ≠ 0
/// throws myriad::invalid_argument, as do bins < 2, max_rank < 1, no ranks, or a rank outside 0 …
/// L.
RankHistogram rank_histogram(const std::vector<std::int64_t>& ranks, std::int64_t max_rank,
                             int bins);

/// ECDF difference of N fractional ranks with its simultaneous 1 − α bands, at K − 1 points.
struct EcdfBands {
  /// z_i, i = 1 … K − 1: the evaluation points, z_i = c_i / (L + 1) with c_i = ⌊i (L + 1)/K⌋
  /// (= i/K when K divides L + 1): the CDF of the uniform ranks at a rank boundary.
  std::vector<double> z;
  std::vector<double> ecdf_difference;  ///< F̂(z_i) − z_i, F̂(z_i) = #{rank < c_i} / N
  std::vector<double> lower;            ///< q_i(γ/2)/N − z_i, q_i the Binomial(N, z_i) quantile
  std::vector<double> upper;            ///< q_i(1 − γ/2)/N − z_i
  // [lower_i, upper_i] is exactly {x/N − z_i : 2·min(P(X ≤ x), P(X ≥ x)) ≥ γ}: a count whose
  // tail equals γ/2 (γ is such an atom) is inside, as in the simulation that chose γ.
  double alpha = 0;    ///< the simultaneous level asked for
  double gamma = 0;    ///< the adjusted pointwise level (see below)
  bool inside = true;  ///< lower_i ≤ ecdf_difference_i ≤ upper_i for every i
};

/// The graphical test of Säilynoja et al. (2022) for ranks in 0 … max_rank. Under uniformity
/// the fractional ranks u = (rank + 1)/(L + 2) have an ECDF whose scaled value N·F̂(z_i) at a
/// point is Binomial(N, z_i) (Sec. 2); each point gets the central binomial interval of level
/// 1 − γ, [q_i(γ/2), q_i(1 − γ/2)], and γ is adjusted down from α until the probability that
/// *all* K − 1 points lie in their intervals is 1 − α (Sec. 2). γ comes from their simulation
/// method: `simulations` (M) samples of N uniform ranks, the smallest over i of each sample's
/// two-sided binomial tail probability 2·min(P(X ≤ x_i), P(X ≥ x_i)) (capped at 1), and γ the
/// α-quantile of these M minima (the ⌊αM⌋-th smallest, counting from 0, so that at most a
/// fraction α of the simulated samples fall outside). Its Monte Carlo error in the achieved
/// level is about sqrt(α(1 − α)/M): 0.003 at α = 0.05 and the default M = 5000. The
/// simulation draws from Philox streams keyed by (seed, sample), so a seed fixes γ; γ depends
/// on N, K, L, α, M and the seed only, not on the ranks. Cost: M·N uniform draws (OpenMP
/// threads share the samples; the result does not depend on their number), about 15 ms for
/// N = 200 and 0.1 s for N = 2000 (K = 100) on one core.
///
/// Discrete ranks: with K dividing L + 1 and z_i = i/K, u ≤ z_i exactly when rank < i(L + 1)/K,
/// an event of probability z_i under uniform ranks — the ECDF of the fractional ranks at z_i
/// is exactly Binomial(N, z_i)/N, with no continuity correction. For other K the points are
/// moved down to the rank boundaries z_i = ⌊i(L + 1)/K⌋/(L + 1), where the same holds; points
/// between rank boundaries would compare a step function with a continuous one and show a
/// difference of up to 1/(L + 1) under exact uniformity.
///
/// points (K) ≤ 0 selects min(L + 1, max(N, 2)); otherwise 2 ≤ K ≤ L + 1 is required. Throws
/// myriad::invalid_argument for max_rank < 1, no ranks, a rank outside 0 … L, α outside (0, 1),
/// or simulations < 1.
EcdfBands ecdf_difference_bands(const std::vector<std::int64_t>& ranks, std::int64_t max_rank,
                                double alpha, int points, std::uint64_t seed,
                                int simulations = 5000);

}  // namespace myriad::diag
