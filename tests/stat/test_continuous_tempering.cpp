// Continuous tempering against exact answers (issue 26's first workload): a Gaussian target
// p̃ = Z N(m 1, s² I) with a standard normal base, where log Z, the target's moments and the
// β-marginal p(β) ∝ z(β) e^{−β log ζ} are closed form (tests/common/tempering_targets.hpp).
// Gibbs CT (Alg. 14), CT-HMC (Alg. 15) and simulated tempering (Alg. 7 with Gibbs index updates,
// 11 linear inverse temperatures), the transitions of estimate/continuous_tempering.hpp and
// simulated_tempering.hpp run by the CPU tempering backend's per-chain bodies (the CUDA kernels'
// too), chains independent and in parallel. Simulated tempering's index marginal is
// p(k) ∝ z(β_k) e^{−β_k log ζ}, tested like β's bins.
//
// Tolerances: every estimate is a ratio of per-chain sums over 64 independent chains with its
// delta-method standard error (estimate/tempering_estimate.hpp): log Ẑ within 4 SE (the issue's
// bound), moments within 5 SE; the β-marginal's bin probabilities within 5 SE of the spread of
// the chains' bin fractions. ζ is set one nat below Z so that p(β) is not flat.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/tempering_targets.hpp"
#include "myriad/backend/cpu_tempering_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {
namespace {

using testing::ShiftedGaussian;
using Base = AnnealingBase<double>;

constexpr int kChains = 64;
constexpr int kWarmup = 300;
constexpr int kDraws = 3000;
constexpr int kBins = 8;

constexpr int kTemperatures = 11;  ///< simulated tempering's ladder, linear

using Method = TemperMethod;

/// β's bins (continuous tempering) or the ladder's indices (simulated tempering).
int categories(Method method) {
  return method == Method::simulated_tempering ? kTemperatures : kBins;
}

struct Run {
  TemperingSums sums;
  std::vector<double> bin_fraction;  ///< [chain][category]
};

/// The chains run by the CPU tempering backend (backend/cpu_tempering_backend.hpp, the per-chain
/// bodies the CUDA kernels run) in two calls, its β trace binned (or, for simulated tempering,
/// mapped back to the index).
Run run(Method method, const ShiftedGaussian& target, double log_zeta, std::uint64_t seed) {
  TemperConfig config;
  config.method = method;
  config.chains = kChains;
  config.warmup = kWarmup;
  config.draws = kDraws;
  config.seed = seed;
  config.step_size = method == Method::ct_hmc ? 0.25 : 0.35;
  config.leapfrog_steps = 10;
  config.log_zeta = log_zeta;
  config.temperatures = kTemperatures;
  config.schedule = ScheduleKind::linear;
  config.initial_u = -2.0;  // CT-HMC; Gibbs CT starts at β = 0, simulated tempering at index 0
  const TemperingSetup setup = make_tempering_setup(target, config);
  CpuTemperingBackend<ShiftedGaussian> backend(target, setup);
  EXPECT_EQ(backend.start(), 0);
  constexpr int kFirstCall = 1000;  // mid-draws: the second call resumes every chain
  IterationStats stats = backend.run(0, kFirstCall);
  stats += backend.run(kFirstCall, kWarmup + kDraws - kFirstCall);
  EXPECT_EQ(stats.transitions, std::int64_t{kChains} * kDraws);
  EXPECT_EQ(stats.non_finite, 0);
  TemperingOutputs out = backend.outputs();
  EXPECT_EQ(out.dropped, 0);
  const int bins = categories(method);
  Run r{std::move(out.sums), std::vector<double>(static_cast<std::size_t>(kChains * bins), 0.0)};
  for (int c = 0; c < kChains; ++c) {
    for (int i = 0; i < kDraws; ++i) {
      const double b = out.beta_trace[static_cast<std::size_t>(i * kChains + c)];
      const int bin = method == Method::simulated_tempering
                          ? static_cast<int>(std::lround(b * (kTemperatures - 1)))
                          : std::min(kBins - 1, static_cast<int>(b * kBins));
      r.bin_fraction[static_cast<std::size_t>(c * bins + bin)] += 1.0 / kDraws;
    }
  }
  return r;
}

/// The β-marginal's probability of each of kBins equal bins (Simpson's rule on p(β) ∝ z(β)/ζ^β).
std::vector<double> beta_bin_probabilities(const ShiftedGaussian& target, double log_zeta) {
  constexpr int kPerBin = 200;  // even
  std::vector<double> mass(kBins, 0.0);
  double total = 0;
  for (int b = 0; b < kBins; ++b) {
    const double h = 1.0 / (kBins * kPerBin);
    double sum = 0;
    for (int k = 0; k <= kPerBin; ++k) {
      const double beta = (b * kPerBin + k) * h;
      const double weight = (k == 0 || k == kPerBin) ? 1 : (k % 2 ? 4 : 2);
      sum += weight * std::exp(target.log_tempered_normaliser(beta) - beta * log_zeta);
    }
    mass[b] = sum * h / 3;
    total += mass[b];
  }
  for (double& m : mass) m /= total;
  return mass;
}

/// Simulated tempering's index marginal, p(k) ∝ z(β_k) e^{−β_k log ζ} (ω_k = −β_k log ζ).
std::vector<double> index_probabilities(const ShiftedGaussian& target, double log_zeta) {
  const std::vector<double> beta = make_schedule(ScheduleKind::linear, kTemperatures - 1, 0);
  std::vector<double> p(beta.size());
  double total = 0;
  for (std::size_t k = 0; k < beta.size(); ++k) {
    p[k] = std::exp(target.log_tempered_normaliser(beta[k]) - beta[k] * log_zeta);
    total += p[k];
  }
  for (double& v : p) v /= total;
  return p;
}

void expect_exact(Method method, const std::string& name) {
  const ShiftedGaussian target{2, 1.2, 0.6, 3.0};
  const double log_zeta = target.log_z - 1.0;
  const Run r = run(method, target, log_zeta, 20261129);

  const EstimateWithError log_z = r.sums.log_z(log_zeta);
  EXPECT_NEAR(log_z.value, target.log_z, 4 * log_z.se) << name;
  EXPECT_LT(log_z.se, 0.05) << name << ": the test has power";
  for (int q = 0; q < 2; ++q) {
    const EstimateWithError mean = r.sums.target_mean(q);
    EXPECT_NEAR(mean.value, target.mean, 5 * mean.se) << name << " target mean " << q;
    EXPECT_LT(mean.se, 0.05) << name;
    const EstimateWithError base_mean = r.sums.base_mean(q);  // the built-in check: q = N(0, I)
    EXPECT_NEAR(base_mean.value, 0.0, 5 * base_mean.se) << name << " base mean " << q;
  }

  const std::vector<double> expected = method == Method::simulated_tempering
                                           ? index_probabilities(target, log_zeta)
                                           : beta_bin_probabilities(target, log_zeta);
  const int bins = categories(method);
  for (int b = 0; b < bins; ++b) {
    double sum = 0, sum_sq = 0;
    for (int c = 0; c < kChains; ++c) {
      const double f = r.bin_fraction[static_cast<std::size_t>(c * bins + b)];
      sum += f;
      sum_sq += f * f;
    }
    const double mean = sum / kChains;
    const double se = std::sqrt((sum_sq / kChains - mean * mean) / (kChains - 1));
    EXPECT_NEAR(mean, expected[b], 5 * se)
        << name << " β bin or index " << b << " expected " << expected[b];
  }
}

TEST(StatContinuousTempering, GibbsCtRecoversZMomentsAndTheBetaMarginalOfAGaussian) {
  expect_exact(Method::gibbs_ct, "gibbs-ct");
}

TEST(StatContinuousTempering, CtHmcRecoversZMomentsAndTheBetaMarginalOfAGaussian) {
  expect_exact(Method::ct_hmc, "ct-hmc");
}

TEST(StatSimulatedTempering, RecoversZMomentsAndTheIndexMarginalOfAGaussian) {
  expect_exact(Method::simulated_tempering, "simulated tempering");
}

}  // namespace
}  // namespace myriad
