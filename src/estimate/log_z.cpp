// Estimators from AIS log weights (hais.md §3, §6, §7); see include/myriad/estimate/log_z.hpp.

#include "myriad/estimate/log_z.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"

namespace myriad {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Log weights are finite or −inf (zero weight); NaN and +inf name their index. `particles` > 0
// reports the index as (problem, particle) of a [problem][particle] layout.
void check_log_values(const char* function, const char* name, const double* x, std::int64_t n,
                      std::int64_t particles = 0) {
  MYRIAD_EXPECTS(n > 0, function, ": ", name, " is empty (", n, " values); at least one is needed");
  MYRIAD_EXPECTS(x != nullptr, function, ": ", name, " is a null pointer");
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i]) || x[i] == kInf) {
      if (particles > 0) {
        throw invalid_argument(detail::concat(
            function, ": ", name, "[problem ", i / particles, ", particle ", i % particles, "] is ",
            x[i], "; log weights must be finite or -inf (a zero weight)"));
      }
      throw invalid_argument(
          detail::concat(function, ": ", name, "[", i, "] is ", x[i],
                         "; log weights must be finite or -inf (a zero weight)"));
    }
  }
}

void check_replicates(const char* function, int replicates) {
  MYRIAD_EXPECTS(replicates == 0 || replicates >= 2, function,
                 ": bootstrap_replicates must be 0 (no bootstrap) or at least 2, got ", replicates);
}

// Index of the largest value; its value is −inf when every entry is.
std::int64_t arg_max(const double* x, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

// Σ_{i≠top} exp(x_i − x_top): LSE = x_top + log1p(rest) (hais.md §3), which keeps the digits of
// the small terms that m + log(1 + rest) would round away.
double rest_of_shifted_sum(const double* x, std::int64_t n, std::int64_t top) {
  double rest = 0.0;
  const double m = x[top];
  for (std::int64_t i = 0; i < n; ++i) {
    if (i != top) rest += std::exp(x[i] - m);  // exp(−inf) = 0 for zero weights
  }
  return rest;
}

// The bootstrap-independent statistics of one set of log weights (hais.md §3).
struct WeightStats {
  double max;       // m = max ℓ
  double log_mean;  // log-mean-exp(ℓ); −inf when every weight is zero
  double se_delta;  // sd_b(w̃) / (√B mean(w̃)), divisor B − 1
  double ess;       // (Σ w̃)² / Σ w̃²
};

WeightStats weight_stats(const double* x, std::int64_t n) {
  const std::int64_t top = arg_max(x, n);
  const double m = x[top];
  const double b = static_cast<double>(n);
  if (m == -kInf) return {m, -kInf, kNaN, 0.0};
  const double rest = rest_of_shifted_sum(x, n, top);
  const double sum = 1.0 + rest;
  double sum_sq = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double w = std::exp(x[i] - m);
    sum_sq += w * w;
  }
  WeightStats s{m, m + std::log1p(rest) - std::log(b), kNaN, sum * sum / sum_sq};
  if (n > 1) {
    // Two passes: Σ (w̃ − mean)² rather than Σ w̃² − B mean², which cancels when ESS ≈ B.
    const double mean = sum / b;
    double ss = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = std::exp(x[i] - m) - mean;
      ss += d * d;
    }
    s.se_delta = std::sqrt(ss / (b - 1.0)) / (std::sqrt(b) * mean);
  }
  return s;
}

// High 64 bits of a·b: the index floor(u·n / 2^64) is uniform on [0, n) up to a bias of n/2^64
// (Lemire's multiply-shift), with no division and no rejection loop.
std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo;
  const std::uint64_t lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

// sd over R replicates of log-mean-exp of the log weights resampled with replacement. The
// replicates share the shift m, which cancels in the sd, so each one is log(mean of w̃*). Each
// Philox block (key (seed, problem), counter (replicate, purpose, j)) gives two 64-bit words,
// i.e. the indices 2j and 2j + 1 of a replicate; replicates are independent of the thread that
// computes them, so the result does not depend on the OpenMP team.
double bootstrap_se(const double* x, std::int64_t n, double m, std::uint64_t seed,
                    std::uint32_t problem, int replicates, Purpose purpose) {
  if (replicates == 0 || n == 1 || m == -kInf) return kNaN;
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) w[static_cast<std::size_t>(i)] = std::exp(x[i] - m);
  std::vector<double> log_means(static_cast<std::size_t>(replicates));
  const RandomStream rng(seed, problem);
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const double log_b = std::log(static_cast<double>(n));
  const bool parallel = static_cast<double>(replicates) * static_cast<double>(n) > 1e5;
#pragma omp parallel for schedule(static) if (parallel)
  for (int r = 0; r < replicates; ++r) {
    double sum = 0.0;
    for (std::int64_t j = 0; j < n; j += 2) {
      const auto block =
          rng.block(static_cast<std::uint32_t>(r), purpose, static_cast<std::uint32_t>(j / 2));
      const std::uint64_t u0 = (static_cast<std::uint64_t>(block.v[0]) << 32) | block.v[1];
      sum += w[static_cast<std::size_t>(mul_high(u0, range))];
      if (j + 1 < n) {
        const std::uint64_t u1 = (static_cast<std::uint64_t>(block.v[2]) << 32) | block.v[3];
        sum += w[static_cast<std::size_t>(mul_high(u1, range))];
      }
    }
    log_means[static_cast<std::size_t>(r)] = sum > 0.0 ? std::log(sum) - log_b : -kInf;
  }
  double mean = 0.0;
  for (const double v : log_means) {
    if (v == -kInf) return kInf;  // a replicate of only zero weights: unbounded spread
    mean += v;
  }
  mean /= replicates;
  double ss = 0.0;
  for (const double v : log_means) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / (replicates - 1));
}

void check_bootstrap_size(const char* function, std::int64_t n, int replicates) {
  // The Philox draw index is 32 bits and each block serves two particles.
  MYRIAD_EXPECTS(replicates == 0 || n <= (std::int64_t{1} << 33), function,
                 ": the bootstrap supports at most 2^33 particles per problem, got ", n);
}

LogZEstimate forward_estimate(const double* log_w, std::int64_t n, std::uint64_t seed,
                              int replicates, std::uint32_t problem) {
  const WeightStats s = weight_stats(log_w, n);
  return {s.log_mean, s.se_delta,
          bootstrap_se(log_w, n, s.max, seed, problem, replicates, kLogZBootstrapPurpose), s.ess,
          n};
}

// hais.md §7: log Ẑ_upper = log Z_q − log-mean-exp(r); its se is that of log-mean-exp(r).
LogZEstimate upper_estimate(double log_z_q, const double* log_r, std::int64_t n, std::uint64_t seed,
                            int replicates, std::uint32_t problem) {
  const WeightStats s = weight_stats(log_r, n);
  return {log_z_q - s.log_mean, s.se_delta,
          bootstrap_se(log_r, n, s.max, seed, problem, replicates, kLogZUpperBootstrapPurpose),
          s.ess, n};
}

void check_segments(const char* function, std::int64_t problems, std::int64_t particles) {
  MYRIAD_EXPECTS(problems > 0, function, ": problems must be positive, got ", problems);
  MYRIAD_EXPECTS(particles > 0, function, ": particles must be positive, got ", particles);
  MYRIAD_EXPECTS(problems <= std::int64_t{0xFFFFFFFF}, function,
                 ": problems must fit the 32-bit stream index, got ", problems);
  MYRIAD_EXPECTS(particles <= std::numeric_limits<std::int64_t>::max() / problems, function,
                 ": problems x particles overflows (", problems, " x ", particles, ")");
}

// The checks of every estimator's n log values and bootstrap settings. `particles` > 0: the
// values are a [problem][particle] layout, bootstrapped per problem of `particles` values.
void check_estimator_inputs(const char* function, const char* name, const double* x, std::int64_t n,
                            int replicates, std::int64_t particles = 0) {
  check_log_values(function, name, x, n, particles);
  check_replicates(function, replicates);
  check_bootstrap_size(function, particles > 0 ? particles : n, replicates);
}

// The segmented estimators: the layout, the checks of check_estimator_inputs, then
// estimate_problem(first log value of problem p, p) for each problem in turn.
template <class EstimateProblem>
std::vector<LogZEstimate> estimate_per_problem(const char* function, const char* name,
                                               const double* x, std::int64_t problems,
                                               std::int64_t particles, int replicates,
                                               const EstimateProblem& estimate_problem) {
  check_segments(function, problems, particles);
  check_estimator_inputs(function, name, x, problems * particles, replicates, particles);
  std::vector<LogZEstimate> out;
  out.reserve(static_cast<std::size_t>(problems));
  for (std::int64_t p = 0; p < problems; ++p)
    out.push_back(estimate_problem(x + p * particles, static_cast<std::uint32_t>(p)));
  return out;
}

}  // namespace

double log_sum_exp(const double* x, std::int64_t n) {
  check_log_values("log_sum_exp", "x", x, n);
  const std::int64_t top = arg_max(x, n);
  if (x[top] == -kInf) return -kInf;
  return x[top] + std::log1p(rest_of_shifted_sum(x, n, top));
}

double log_mean_exp(const double* x, std::int64_t n) {
  check_log_values("log_mean_exp", "x", x, n);
  const std::int64_t top = arg_max(x, n);
  if (x[top] == -kInf) return -kInf;
  return x[top] + std::log1p(rest_of_shifted_sum(x, n, top)) - std::log(static_cast<double>(n));
}

LogZEstimate estimate_log_z(const double* log_w, std::int64_t n, std::uint64_t seed,
                            int bootstrap_replicates, std::uint32_t problem) {
  check_estimator_inputs("estimate_log_z", "log_w", log_w, n, bootstrap_replicates);
  return forward_estimate(log_w, n, seed, bootstrap_replicates, problem);
}

std::vector<LogZEstimate> estimate_log_z_segmented(const double* log_w, std::int64_t problems,
                                                   std::int64_t particles, std::uint64_t seed,
                                                   int bootstrap_replicates) {
  return estimate_per_problem("estimate_log_z_segmented", "log_w", log_w, problems, particles,
                              bootstrap_replicates, [&](const double* x, std::uint32_t p) {
                                return forward_estimate(x, particles, seed, bootstrap_replicates,
                                                        p);
                              });
}

LogZEstimate estimate_log_z_upper(double log_z_q, const double* log_r, std::int64_t n,
                                  std::uint64_t seed, int bootstrap_replicates,
                                  std::uint32_t problem) {
  const char* function = "estimate_log_z_upper";
  MYRIAD_EXPECTS(std::isfinite(log_z_q), function, ": log_z_q must be finite, got ", log_z_q);
  check_estimator_inputs(function, "log_r", log_r, n, bootstrap_replicates);
  return upper_estimate(log_z_q, log_r, n, seed, bootstrap_replicates, problem);
}

std::vector<LogZEstimate> estimate_log_z_upper_segmented(double log_z_q, const double* log_r,
                                                         std::int64_t problems,
                                                         std::int64_t particles, std::uint64_t seed,
                                                         int bootstrap_replicates) {
  const char* function = "estimate_log_z_upper_segmented";
  MYRIAD_EXPECTS(std::isfinite(log_z_q), function, ": log_z_q must be finite, got ", log_z_q);
  return estimate_per_problem(function, "log_r", log_r, problems, particles, bootstrap_replicates,
                              [&](const double* x, std::uint32_t p) {
                                return upper_estimate(log_z_q, x, particles, seed,
                                                      bootstrap_replicates, p);
                              });
}

TestSetAverage average_over_test_set(const std::vector<LogZEstimate>& per_point) {
  const std::int64_t points = static_cast<std::int64_t>(per_point.size());
  MYRIAD_EXPECTS(points > 0, "average_over_test_set: no per-point estimates (empty test set)");
  for (std::int64_t i = 0; i < points; ++i) {
    MYRIAD_EXPECTS(!std::isnan(per_point[static_cast<std::size_t>(i)].log_z),
                   "average_over_test_set: per_point[", i, "].log_z is nan");
  }
  const double d = static_cast<double>(points);
  double sum = 0.0, se_sq = 0.0;
  for (const LogZEstimate& e : per_point) {
    sum += e.log_z;
    se_sq += e.se_delta * e.se_delta;
  }
  const double mean = sum / d;
  // hais.md §3: Monte Carlo error √(Σ se_x²)/|D|, data-sampling error sd_x(log Ẑ_x)/√|D|.
  double data_error = kNaN;
  if (points > 1 && std::isfinite(mean)) {
    double ss = 0.0;
    for (const LogZEstimate& e : per_point) ss += (e.log_z - mean) * (e.log_z - mean);
    data_error = std::sqrt(ss / (d - 1.0)) / std::sqrt(d);
  }
  return {mean, std::sqrt(se_sq) / d, data_error, points};
}

std::vector<WeightedMoments> weighted_moments(const double* particles, std::int64_t num_particles,
                                              std::int64_t dims, const double* log_w) {
  const char* function = "weighted_moments";
  MYRIAD_EXPECTS(num_particles > 0, function, ": num_particles must be positive, got ",
                 num_particles);
  MYRIAD_EXPECTS(dims > 0, function, ": dims must be positive, got ", dims);
  MYRIAD_EXPECTS(particles != nullptr, function, ": particles is a null pointer");
  check_log_values(function, "log_w", log_w, num_particles);

  const std::size_t d_count = static_cast<std::size_t>(dims);
  const std::int64_t top = arg_max(log_w, num_particles);
  const double m = log_w[top];
  if (m == -kInf) {
    return std::vector<WeightedMoments>(d_count, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 0.0});
  }

  // Normalised weights of the positive-weight particles, in particle order.
  std::vector<std::int64_t> live;
  std::vector<double> w;
  double rest = 0.0;  // Σ_{b≠top} w̃_b, summed directly (see the sd denominator below)
  for (std::int64_t b = 0; b < num_particles; ++b) {
    const double wb = std::exp(log_w[b] - m);
    if (wb > 0.0) {
      live.push_back(b);
      w.push_back(wb);
      if (b != top) rest += wb;
    }
  }
  const double total = 1.0 + rest;
  double sum_sq = 0.0;
  for (double& wb : w) {
    sum_sq += wb * wb;
    wb /= total;
  }
  const double ess = total * total / sum_sq;
  // 1 − Σ w̄² = Σ_b w̄_b (1 − w̄_b), with 1 − w̄_top = rest/total computed from the others:
  // the direct form cancels catastrophically when one weight dominates, the AIS failure mode.
  double one_minus_sum_sq = 0.0;
  for (std::size_t k = 0; k < live.size(); ++k) {
    one_minus_sum_sq += w[k] * (live[k] == top ? rest / total : 1.0 - w[k]);
  }

  std::vector<WeightedMoments> out(d_count);
  const std::int64_t n_live = static_cast<std::int64_t>(live.size());
#pragma omp parallel for schedule(dynamic) if (dims > 1 && n_live > 1000)
  for (std::int64_t d = 0; d < dims; ++d) {
    std::vector<std::pair<double, double>> sorted;  // (value, w̄) of the live particles
    sorted.reserve(live.size());
    bool finite = true;
    double mean = 0.0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      const double v = particles[live[k] * dims + d];
      finite = finite && std::isfinite(v);
      mean += w[k] * v;
      sorted.emplace_back(v, w[k]);
    }
    double ss = 0.0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      const double dev = sorted[k].first - mean;
      ss += w[k] * dev * dev;
    }
    WeightedMoments& s = out[static_cast<std::size_t>(d)];
    s.mean = mean;
    s.sd = std::sqrt(ss / one_minus_sum_sq);  // 0/0 = NaN for a single live particle
    s.mcse_mean = s.sd / std::sqrt(ess);
    s.ess = ess;
    s.q5 = s.q50 = s.q95 = kNaN;
    if (!finite) continue;  // sorting NaN is undefined; an inf would make the CDF meaningless
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    // Inverse of F̂(t) = Σ_{x_b ≤ t} w̄_b. The threshold is q times the sum accumulated in the
    // same order, so q = 1 reaches the last value whatever the rounding.
    double cdf_total = 0.0;
    for (const auto& vw : sorted) cdf_total += vw.second;
    const double probs[3] = {0.05, 0.5, 0.95};
    double* targets[3] = {&s.q5, &s.q50, &s.q95};
    for (int q = 0; q < 3; ++q) {
      const double threshold = probs[q] * cdf_total;
      double cdf = 0.0;
      for (const auto& vw : sorted) {
        cdf += vw.second;
        if (cdf >= threshold) {
          *targets[q] = vw.first;
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace myriad
