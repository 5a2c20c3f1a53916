#pragma once
// Estimators that turn annealed-importance-sampling log weights into results (hais.md §3, §6,
// §7): log Ẑ with delta-method and bootstrap standard errors and the effective sample size, per
// problem of a two-level batch, test-set averages, the reverse (BDMC) upper bound, and
// self-normalised moments and quantiles of the final particles (the AIS posterior sample).
//
// Conventions of every host function here:
//  * Log weights are double. −inf is a legal log weight (a particle with zero weight, e.g. one
//    whose chain failed); NaN and +inf are misuse and throw myriad::invalid_argument naming the
//    function and the index. Empty inputs, null pointers and non-positive sizes throw too.
//  * No log weight is exponentiated unshifted: with m = max_b ℓ_b, w̃_b = exp(ℓ_b − m) ∈ [0, 1]
//    and the largest w̃ is exactly 1, so nothing overflows and the sums cannot underflow to 0.
//  * A statistic that the input cannot determine (a standard error from one particle, anything
//    from weights that are all zero) is NaN, never a throw; each field says when.

#include <cmath>
#include <cstdint>
#include <vector>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"

namespace myriad {

/// Philox purpose tag of the bootstrap resampling of forward log weights (estimate_log_z):
/// stream key (seed, problem), iteration = replicate, draw = index pair.
inline constexpr Purpose kLogZBootstrapPurpose = static_cast<Purpose>(user_purpose(40));
/// The same for reverse log ratios (estimate_log_z_upper), so that a forward and a reverse
/// bootstrap of one (seed, problem) resample independently.
inline constexpr Purpose kLogZUpperBootstrapPurpose = static_cast<Purpose>(user_purpose(41));

/// Streaming log Σ exp(x) for reductions that cannot hold all values at once (a per-thread or
/// per-block partial of the segmented LSE of hais.md §6); host and device. The sum is kept
/// relative to the running maximum, so no exp of an unshifted value is taken. −inf values are
/// no-ops (zero weights); NaN and +inf are not checked (device code never throws) and make
/// value() NaN or +inf. The host functions below use two passes (max, then sum), which round
/// less; prefer them when the values are in one array.
struct LogSumExp {
  double max = -INFINITY;  ///< largest value added so far
  double sum = 0.0;        ///< Σ exp(x − max) over the values added; ≥ 1 once one is finite

  MYRIAD_HD void add(double x) {
    if (x == -INFINITY) return;
    if (x > max) {
      sum = sum * myriad::exp(max - x) + 1.0;  // exp(−inf) = 0 for the first value
      max = x;
    } else {
      sum += myriad::exp(x - max);
    }
  }

  MYRIAD_HD void merge(const LogSumExp& other) {
    if (other.max == -INFINITY) return;
    if (other.max > max) {
      sum = sum * myriad::exp(max - other.max) + other.sum;
      max = other.max;
    } else {
      sum += other.sum * myriad::exp(other.max - max);
    }
  }

  /// log Σ exp(x) over the values added; −inf when none (or only −inf) was added.
  MYRIAD_HD double value() const { return max == -INFINITY ? -INFINITY : max + myriad::log(sum); }
};

/// log Σ_i exp(x_i), max-shifted (hais.md §3): m + log1p(Σ_{i≠argmax} exp(x_i − m)). Entries of
/// −inf contribute nothing; all −inf gives −inf. Throws for n < 1, a null pointer, NaN or +inf.
double log_sum_exp(const double* x, std::int64_t n);

/// log((1/n) Σ_i exp(x_i)) = log_sum_exp(x, n) − log n; the same conventions.
double log_mean_exp(const double* x, std::int64_t n);

/// A log-normaliser estimate from B importance weights (hais.md §3), or the reverse (BDMC) upper
/// bound (§7); see estimate_log_z and estimate_log_z_upper for what log_z is.
struct LogZEstimate {
  /// The estimate: log Ẑ = LSE_b(ℓ_b) − log B. −inf (forward) or +inf (upper bound) when every
  /// weight is zero.
  double log_z;
  /// Delta-method standard error of log_z, sd_b(w̃) / (√B mean_b(w̃)) with the B − 1 divisor
  /// in sd (the unbiased estimate of Var(w̃), the usual standard-error convention and the one of
  /// diag::VariableSummary::sd; the plug-in divisor B would differ by √(B/(B−1))). Equivalently
  /// √((B/ESS − 1)/(B − 1)). NaN when B = 1 or every weight is zero.
  double se_delta;
  /// Bootstrap standard error: the sd (divisor R − 1) over R replicates of log-mean-exp of B
  /// log weights resampled with replacement. Reproducible: indices come from Philox keyed by
  /// (seed, problem), iteration = replicate. NaN when R = 0, B = 1 or every weight is zero; +inf
  /// when some replicate drew only zero-weight particles (its log Ẑ* is −inf).
  double se_bootstrap;
  /// Kish effective sample size (Σ w̃)² / Σ w̃², in [1, B]; 0 when every weight is zero.
  double ess;
  /// B, the number of particles (zero-weight ones included).
  std::int64_t particles;
};

/// log Z from forward AIS log weights ℓ_b = log w_b of n particles (hais.md §3), where
/// log w = log Z_q − Σ_n Δβ_n [E_p(x_n) − E_q(x_n)] already contains log Z_q (§2, §8), so that
/// E[w] = Z_p. E[log Ẑ] ≤ log Z_p (Jensen): a stochastic lower bound.
/// `bootstrap_replicates` R = 0 skips the bootstrap (se_bootstrap NaN); R = 1 or R < 0 throws.
/// `problem` selects the bootstrap stream (seed, problem), so estimate_log_z_segmented's entry p
/// equals this function with problem = p.
LogZEstimate estimate_log_z(const double* log_w, std::int64_t n, std::uint64_t seed,
                            int bootstrap_replicates = 1000, std::uint32_t problem = 0);

/// estimate_log_z for each problem of a two-level batch (hais.md §6): log_w is laid out
/// [problem][particle], `problems` × `particles` contiguous values; entry p is
/// estimate_log_z(log_w + p·particles, particles, seed, bootstrap_replicates, p), i.e. problem
/// p bootstraps with stream key (seed, p). Errors name the problem and the particle.
std::vector<LogZEstimate> estimate_log_z_segmented(const double* log_w, std::int64_t problems,
                                                   std::int64_t particles, std::uint64_t seed,
                                                   int bootstrap_replicates = 1000);

/// The reverse (BDMC) stochastic upper bound on log Z_p (hais.md §7) from reverse log ratios
/// r_b = Σ_{n=N..1} Δβ_n [E_p(a_b^(n)) − E_q(a_b^(n))] of n reverse runs started at exact
/// posterior samples. r_b does NOT contain log Z_q: REVERSE_HAIS in §8 starts r at 0, and
/// E[exp(r)] = Z_q / Z_p where Z_q is the normaliser of exp(−E_q), the same log Z_q that the
/// forward weights start from. Pass that log Z_q (finite) separately:
///   log_z        = log Z_q − (LSE_b(r_b) − log B), with E[log_z] ≥ log Z_p (Jensen);
///   se_delta     = the delta-method se of log-mean-exp(r) (log Z_q is a constant);
///   se_bootstrap = the bootstrap se of log-mean-exp(r), purpose kLogZUpperBootstrapPurpose;
///   ess          = the Kish ESS of the weights exp(r_b).
/// −inf ratios are zero weights as in the forward case; all −inf gives log_z = +inf.
LogZEstimate estimate_log_z_upper(double log_z_q, const double* log_r, std::int64_t n,
                                  std::uint64_t seed, int bootstrap_replicates = 1000,
                                  std::uint32_t problem = 0);

/// estimate_log_z_upper per problem, log_r laid out [problem][particle] as in
/// estimate_log_z_segmented; one log Z_q for all problems (the base q does not depend on the
/// data point, hais.md §6).
std::vector<LogZEstimate> estimate_log_z_upper_segmented(double log_z_q, const double* log_r,
                                                         std::int64_t problems,
                                                         std::int64_t particles, std::uint64_t seed,
                                                         int bootstrap_replicates = 1000);

/// Average of per-data-point log Ẑ_x over a test set D (hais.md §3, §6), with its two errors
/// kept separate.
struct TestSetAverage {
  /// (1/|D|) Σ_x log Ẑ_x: for forward estimates of a generative model, a stochastic lower bound
  /// on the test log-likelihood. ±inf if some log Ẑ_x is.
  double mean;
  /// Monte Carlo error √(Σ_x se_x²) / |D| from the per-point se_delta: the spread that rerunning
  /// AIS on the same points would show. NaN if some se_delta is (e.g. a single particle).
  double mc_error;
  /// Data-sampling error sd_x(log Ẑ_x) / √|D| (sd with divisor |D| − 1): the spread over test
  /// sets drawn from the data distribution. NaN for |D| = 1 or a non-finite log Ẑ_x.
  double data_error;
  /// |D|. 64-bit like LogZEstimate::particles, although test sets are small.
  std::int64_t points;
};

/// The test-set average of `per_point` (one estimate per data point, e.g. the output of
/// estimate_log_z_segmented). Throws when empty or when some log_z is NaN (naming the index).
TestSetAverage average_over_test_set(const std::vector<LogZEstimate>& per_point);

/// Self-normalised importance-sampling summary of one coordinate of the AIS posterior sample
/// (hais.md §2: x_N with weight w is an importance sample from p), the columns of summary.csv.
struct WeightedMoments {
  /// Σ_b w̄_b x_b with w̄_b = w̃_b / Σ w̃.
  double mean;
  /// √(Σ_b w̄_b (x_b − mean)² / (1 − Σ_b w̄_b²)): the "reliability weights" correction, which for
  /// equal weights is the sample sd with divisor B − 1 (as diag::VariableSummary::sd). NaN when
  /// only one particle has positive weight.
  double sd;
  /// Monte Carlo standard error of the mean ≈ sd / √ESS. This is the usual approximation (Kong
  /// 1992; Owen 2013, ch. 9): it treats the estimate as a mean of ESS independent draws and
  /// ignores any relation between the weights and the values, so it is rough when the weights
  /// are degenerate.
  double mcse_mean;
  /// 5%, 50%, 95% quantiles of the weighted empirical distribution: the smallest x_b with
  /// Σ_{x_c ≤ x_b} w̄_c ≥ q (the inverse of the self-normalised CDF estimate, Glynn 1996). With
  /// equal weights this is the type-1 sample quantile (diag::summarize uses type 7; the two
  /// differ by under one order-statistic spacing). NaN if a positive-weight value is non-finite.
  double q5;
  double q50;
  double q95;
  /// Kish ESS of the weights (Σ w̃)² / Σ w̃², the same for every column.
  double ess;
};

/// Weighted moments and quantiles of each column of `particles`, laid out [particle][dim]
/// (num_particles × dims, C order), with weights exp(log_w[b]) (log_w unnormalised, as from AIS).
/// Zero-weight particles (log_w = −inf) are ignored entirely, their values may be anything
/// (NaN included). A non-finite value of a positive-weight particle makes its column's
/// quantiles NaN and its mean/sd/mcse follow IEEE arithmetic. All weights zero: every field NaN
/// and ess 0. Throws for non-positive sizes, null pointers, NaN or +inf log weights.
std::vector<WeightedMoments> weighted_moments(const double* particles, std::int64_t num_particles,
                                              std::int64_t dims, const double* log_w);

}  // namespace myriad
