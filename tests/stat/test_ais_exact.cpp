// Annealed importance sampling against exact answers (hais.md §2, §3, §7, §9): every built-in
// annealing target with a closed-form log Z, on the CPU and, when a device is present, on CUDA
// (the same targets through device_model(), the same seeds; CUDA agrees with the CPU to
// rounding, tests/cuda/test_cuda_ais.cpp). Fixed seeds; sizes chosen so that the CPU half of the
// file runs in about 15 s on one core.
//
// Tolerances (STYLE.md: from theory, never from a lucky run):
//  * |log Ẑ − log Z| < 4 se, se the estimator's delta-method standard error (log_z.hpp), for
//    the forward estimate and, on a long path, the reverse (BDMC upper) estimate. When the
//    weights have finite variance and B ≥ 300, log Ẑ is close to normal and one such check fails
//    by chance with probability ≈ 6e-5; this file makes about 20 per device, ≈ 1e-3 together.
//    The Jensen bias of log Ẑ, ≈ −se²/2 (hais.md §3), is below 0.005 at the se allowed here,
//    i.e. below 0.1 se: negligible against 4 se. Seed sweeps of every configuration below
//    (10–20 seeds each, not part of the suite) gave |deviation| ≤ 3.0 se throughout.
//  * se < kMaxSe = 0.1 in every exact check. AIS is unbiased for *any* transitions that leave the
//    bridging densities invariant, identity included, so a broken but invariant transition shows
//    up as variance, not bias; the se bound is what gives the test its power there. It also
//    makes the 4-se window (half-width ≤ 0.4) narrower than log 2 = 0.69: a missing factor of 2
//    in a normaliser (hais.md §12 lists two printed in the paper) would need a ≥ 2.9 se
//    fluctuation in the opposite direction to pass. And since se² = (B/ESS − 1)/(B − 1),
//    se < 0.1 implies a Kish ESS above B/(1 + 0.01 (B − 1)), at least 75 for the B ≥ 300 used
//    here, so the se itself rests on many effective particles.
//  * The delta-method se assumes weights of finite variance. Where the target's tails are much
//    heavier than the Gaussian base's the sample misses rare large weights, log Ẑ is skewed low
//    and the se is too small exactly when it matters: the complete Student-t POE at M = 36
//    (λ_l near 1.5, i.e. ≈ 2 degrees of freedom) gave a −4.2 se deviation with the smallest se
//    of 10 seeds at 2000 temperatures (400 particles); with λ_l ∈ [3, 6], or at M = 16 (20
//    seeds), the deviations are ~N(0, 1). Hence M = 16 for the Student-t POE below.
//  * BDMC on a short path (hais.md §7): see ForwardAndReverseBoundsBracketTheTruth.
//
// Sizes. The HAIS paper's validation runs use M = 36 and 10⁵ temperatures: the Laplace POE runs
// at M = L = 36 (complete, the only case with exact log Z), the Student-t POE at M = L = 16
// (above); linear_generative at M = 8, L = 6, σ_n = 0.3 (the default σ_n = 0.1 has posterior
// sd ≈ 0.05 and needs ε ≈ 0.05 and ~20 000 temperatures); boltzmann_relaxation with its default
// 12 units. ε = 0.2 and the linear schedule throughout (the paper's).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "myriad/backend/device.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/log_z.hpp"
#include "myriad/models/builtin_targets.hpp"
#include "myriad/run/ais.hpp"

namespace myriad {
namespace {

/// Upper bound on the standard error of an exact check (file comment).
constexpr double kMaxSe = 0.1;
/// Exact checks: |log Ẑ − log Z| < kExactSe · se (file comment).
constexpr double kExactSe = 4.0;
/// BDMC: each stochastic bound may sit at most kBracketSe of its se on the wrong side of log Z.
constexpr double kBracketSe = 2.0;

constexpr const char* kNoDeviceReason =
#if defined(MYRIAD_HAS_CUDA)
    "no CUDA device: the CUDA half of the exact AIS checks cannot run here";
#else
    "no CUDA device: myriad was built without CUDA";
#endif

const char* device_label(Device device) { return device == Device::cuda ? "cuda" : "cpu"; }

AisConfig config_for(std::int64_t particles, int temperatures, std::uint64_t seed) {
  AisConfig config;
  config.particles = particles;
  config.temperatures = temperatures;
  config.seed = seed;
  config.bootstrap_replicates = 0;  // the checks use the delta-method se
  config.keep_particles = false;
  return config;
}

/// Runs an owning model (host_model / device_model) on `device`.
template <class Data>
AisResult run_owned(Data& data, AisConfig config, Device device) {
  config.device = device;
  return device == Device::cuda ? ais(data.device_model(), config) : ais(data.host_model(), config);
}

/// Runs a model that owns no data (models::Gaussian) on `device`.
template <class Target>
AisResult run_plain(const Target& target, AisConfig config, Device device) {
  config.device = device;
  return ais(target, config);
}

/// One estimate within kExactSe se of the exact value, with se < kMaxSe; prints the deviation
/// in units of se.
void expect_estimate_exact(const LogZEstimate& e, double truth, const std::string& what) {
  ASSERT_TRUE(std::isfinite(truth)) << what << " has no exact log Z";
  ASSERT_TRUE(std::isfinite(e.log_z) && std::isfinite(e.se_delta)) << what;
  const double deviation = e.log_z - truth;
  std::printf(
      "[ ais exact ] %-44s log Z %10.4f, exact %10.4f, deviation %+.4f = %+.2f se "
      "(se %.4f, ESS %.0f of %lld)\n",
      what.c_str(), e.log_z, truth, deviation, deviation / e.se_delta, e.se_delta, e.ess,
      static_cast<long long>(e.particles));
  EXPECT_LT(std::fabs(deviation), kExactSe * e.se_delta)
      << what << ": log Z estimate " << e.log_z << " exact " << truth << " se " << e.se_delta
      << " ESS " << e.ess;
  EXPECT_LT(e.se_delta, kMaxSe) << what << ": the se is too large for the check to mean anything";
}

/// Every problem's forward estimate (and reverse estimate, when the run has one) exact.
void expect_exact(const AisResult& r, const std::string& what) {
  ASSERT_EQ(r.exact_log_z.size(), static_cast<std::size_t>(r.problems)) << what;
  ASSERT_EQ(r.forward.estimates.size(), static_cast<std::size_t>(r.problems)) << what;
  EXPECT_EQ(r.forward.failed_starts, 0) << what;
  EXPECT_EQ(r.forward.stats.non_finite, 0) << what;
  for (int p = 0; p < r.problems; ++p) {
    const std::string problem = what + " p" + std::to_string(p);
    expect_estimate_exact(r.forward.estimates[p], r.exact_log_z[p], problem + " forward");
    if (r.has_reverse)
      expect_estimate_exact(r.reverse.estimates[p], r.exact_log_z[p], problem + " reverse");
  }
  if (r.has_reverse) {
    EXPECT_EQ(r.reverse.failed_starts, 0) << what;
    EXPECT_EQ(r.reverse.stats.non_finite, 0) << what;
  }
  // The weighted posterior means against the exact ones, where the target knows them and the run
  // kept its particles, within 5 MCSE (WeightedMoments::mcse_mean, sd/√ESS).
  if (r.summary.empty()) return;
  for (const ExactMoment& e : r.exact) {
    const auto it = std::find(r.names.begin(), r.names.end(), e.name);
    ASSERT_NE(it, r.names.end()) << what << " " << e.name;
    const WeightedMoments& m = r.summary[static_cast<std::size_t>(it - r.names.begin())];
    EXPECT_NEAR(m.mean, e.mean, 5 * m.mcse_mean) << what << " " << e.name;
  }
}

/// Mean and standard error (sd / √n, divisor n − 1) of values[begin, begin + n).
struct MeanSe {
  double mean = 0, se = 0;
};
MeanSe mean_se(const std::vector<double>& values, std::size_t begin, std::size_t n, double shift,
               double sign) {
  double sum = 0, sum_sq = 0;
  for (std::size_t i = begin; i < begin + n; ++i) sum += shift + sign * values[i];
  const double mean = sum / static_cast<double>(n);
  for (std::size_t i = begin; i < begin + n; ++i) {
    const double d = shift + sign * values[i] - mean;
    sum_sq += d * d;
  }
  return {mean, std::sqrt(sum_sq / static_cast<double>(n - 1) / static_cast<double>(n))};
}

/// BDMC on a short path (see ForwardAndReverseBoundsBracketTheTruth).
void expect_bracket(const AisResult& r, const std::string& what) {
  ASSERT_TRUE(r.has_reverse) << what;
  ASSERT_EQ(r.reverse.estimates.size(), static_cast<std::size_t>(r.problems)) << what;
  EXPECT_EQ(r.forward.failed_starts, 0) << what;
  EXPECT_EQ(r.reverse.failed_starts, 0) << what;
  const auto particles = static_cast<std::size_t>(r.particles);
  for (int p = 0; p < r.problems; ++p) {
    const std::string problem = what + " p" + std::to_string(p);
    const double truth = r.exact_log_z[p];
    ASSERT_TRUE(std::isfinite(truth)) << problem;
    const std::size_t begin = static_cast<std::size_t>(p) * particles;
    // Per-particle stochastic bounds: log w_b (forward) and log Z_q − r_b (reverse).
    const MeanSe lower = mean_se(r.forward.log_weights, begin, particles, 0.0, 1.0);
    const MeanSe upper = mean_se(r.reverse.log_weights, begin, particles, r.log_z_base, -1.0);
    const LogZEstimate& forward = r.forward.estimates[p];
    const LogZEstimate& reverse = r.reverse.estimates[p];
    std::printf(
        "[ ais bdmc  ] %-34s relative to log Z = %.4f: mean log w %+.4f (se %.4f), "
        "reverse %+.4f (se %.4f); log Ẑ forward %+.4f, reverse %+.4f\n",
        problem.c_str(), truth, lower.mean - truth, lower.se, upper.mean - truth, upper.se,
        forward.log_z - truth, reverse.log_z - truth);
    EXPECT_LE(lower.mean, truth + kBracketSe * lower.se)
        << problem << ": the forward stochastic lower bound lies above log Z";
    EXPECT_GE(upper.mean, truth - kBracketSe * upper.se)
        << problem << ": the reverse stochastic upper bound lies below log Z";
    EXPECT_LT(lower.mean, upper.mean) << problem;
    // The reported bounds are log-mean-exp of the same numbers: exactly, and between the means.
    const double lme_forward =
        log_mean_exp(r.forward.log_weights.data() + begin, static_cast<std::int64_t>(particles));
    const double lme_reverse =
        log_mean_exp(r.reverse.log_weights.data() + begin, static_cast<std::int64_t>(particles));
    EXPECT_NEAR(forward.log_z, lme_forward, 1e-12 * (1 + std::fabs(lme_forward))) << problem;
    EXPECT_NEAR(reverse.log_z, r.log_z_base - lme_reverse,
                1e-12 * (1 + std::fabs(r.log_z_base - lme_reverse)))
        << problem;
    EXPECT_GE(forward.log_z, lower.mean - 1e-12 * (1 + std::fabs(lower.mean))) << problem;
    EXPECT_LE(reverse.log_z, upper.mean + 1e-12 * (1 + std::fabs(upper.mean))) << problem;
  }
}

/// The exact checks, once per device; the CUDA instance skips without a device (scripts/gpu-check
/// runs the stat suite on the GPU machine too).
class StatAisExact : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::cuda && !cuda_device_available()) GTEST_SKIP() << kNoDeviceReason;
  }
  std::string label(const char* model) const {
    return std::string(model) + " (" + device_label(GetParam()) + ")";
  }
  /// The run of `config` on an owning model, forward and reverse (the target has exact draws):
  /// both estimates exact.
  template <class Data>
  void expect_exact_both_ways(Data& data, AisConfig config, const char* model) const {
    config.reverse = true;
    expect_exact(run_owned(data, config, GetParam()), label(model));
  }
};

// N(1.5·1, 0.7²[(1 − ρ)I + ρ11ᵀ]), ρ = 0.5, in 8 dimensions: normalised, log Z = 0, and far
// enough from the unit base (mean offset 4.2 in norm, sd 0.49 across 1 and 1.5 along it) that
// the path matters. Forward and reverse (exact draws by the symmetric square root).
TEST_P(StatAisExact, Gaussian) {
  const auto target = models::Gaussian<double>::make(8, 0.5, 1.5, 0.7);
  AisConfig config = config_for(400, 500, 101);
  config.reverse = true;
  config.keep_particles = true;  // the weighted means against the exact ones
  expect_exact(run_plain(target, config, GetParam()), label("gaussian"));
}

// Complete product of Laplace experts at the paper's size, M = L = 36 (hais.md §9.3):
// log Z = 36 log 2 − log|det Φ|. Forward and reverse (exact draws u ~ Laplace, x = Φ⁻¹u).
TEST_P(StatAisExact, ProductOfLaplaceExperts) {
  auto data = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 36, 36);
  ASSERT_TRUE(data.has_exact());
  expect_exact_both_ways(data, config_for(400, 2000, 102), "poe_laplace M=36");
}

// Complete product of Student-t experts, M = L = 16, λ_l ∈ [1.5, 3] (the registry's range; why
// not M = 36: file comment). Forward and reverse (exact draws through Gamma variates).
TEST_P(StatAisExact, ProductOfStudentTExperts) {
  auto data = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::student_t, 16, 16,
                                                              1.5, 3.0);
  ASSERT_TRUE(data.has_exact());
  expect_exact_both_ways(data, config_for(300, 1000, 103), "poe_student_t M=16");
}

// Gaussian prior, four data points (four problems in one two-level batch, hais.md §6):
// log p(x_p) = log N(x_p; 0, ΦΦᵀ + σ_n² I). The posterior precision ΦᵀΦ/σ_n² + I has
// eigenvalues around 1 + (M/L)/σ_n² ≈ 16, so the posterior sd is ≈ 0.25. Forward and reverse
// (exact posterior draws μ_p + L_post z).
TEST_P(StatAisExact, LinearGenerativeGaussianPrior) {
  auto data = models::LinearGenerativeData<double>::synthetic(
      8, 6, 4, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  expect_exact_both_ways(data, config_for(500, 2000, 104), "linear_generative gaussian");
}

// Laplace prior at Φ = 0, the paper's sanity check for every generative model (hais.md §9.1):
// log p(x) = −‖x‖²/(2σ_n²) − (M/2) log(2πσ_n²); the annealing runs over the prior alone, so a
// wrong Laplace normaliser (2 instead of 2^L, §12) would show as an offset of (L − 1) log 2.
// Forward only: the model's "exact draw" is the generating latent, the same for every reverse
// particle, so reverse weights would be perfectly correlated and their se meaningless.
TEST_P(StatAisExact, LinearGenerativeLaplacePriorAtZeroPhi) {
  auto data = models::LinearGenerativeData<double>::synthetic(
      8, 6, 3, models::LinearGenerativePrior::laplace, 0.3, 0.0);
  expect_exact(run_owned(data, config_for(300, 300, 105), GetParam()),
               label("linear_generative laplace phi=0"));
}

// 12-unit Boltzmann-machine relaxation (thesis App. E): log Z by enumerating the 2^12 states,
// and E[x] = Qᵀ E[s]. Forward and reverse (exact draws: a state from the enumerated P(s), then
// x = Qᵀs + z).
TEST_P(StatAisExact, BoltzmannRelaxation) {
  auto data = models::BoltzmannRelaxationData<double>::synthetic(12);
  AisConfig config = config_for(600, 2000, 106);
  config.keep_particles = true;  // the weighted means against E[x] (E.10)
  expect_exact_both_ways(data, config, "boltzmann_relaxation");
}

// BDMC (hais.md §7) on every target with exact posterior draws, on a short path (30
// temperatures) where the forward and reverse runs are far from converged.
//
// What is checked, and why these quantities: each particle's log w_b is itself a stochastic
// lower bound, E[log w_b] ≤ log Z, and log Z_q − r_b a stochastic upper bound (Jensen, per
// particle); the gaps are the KL divergences between the forward and the reverse path
// distributions, which a short path makes large while their se, sd_b/√B, stays small and
// reliable (log weights are light-tailed even where the weights are not). So the means of the
// per-particle bounds must lie on their sides of log Z up to 2 se and in order; a wrong sign or a
// mis-indexed reverse path breaks these by many se. The reported bounds log Ẑ (log-mean-exp of
// the same numbers) are then checked exactly against those numbers, and lie between the means
// (log-mean-exp ≥ mean, deterministically).
//
// Why not "log Ẑ_forward ≤ log Z + 2 se, log Ẑ_reverse ≥ log Z − 2 se, log Ẑ_forward <
// log Ẑ_reverse" on the reported bounds directly: on a short path their weights are so
// heavy-tailed (ESS 1–20 of 300) that the delta-method se means little; over 40 seeds of this
// very configuration those checks failed by chance in 2–9 % of problems (the forward log Ẑ
// overshot log Z by up to 2.2 nats, the two bounds crossed for 8 of 40 Gaussian runs), while the
// per-particle bounds above cleared every check by ≥ 10 se. The bounds are guaranteed only in
// expectation (and by Markov's inequality, P(log Ẑ_forward > log Z + a) ≤ e^{−a}).
TEST_P(StatAisExact, ForwardAndReverseBoundsBracketTheTruth) {
  AisConfig config = config_for(300, 30, 107);
  config.reverse = true;
  const auto gaussian = models::Gaussian<double>::make(8, 0.5, 1.5, 0.7);
  expect_bracket(run_plain(gaussian, config, GetParam()), label("gaussian"));
  auto poe = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 16, 16);
  expect_bracket(run_owned(poe, config, GetParam()), label("poe_laplace M=16"));
  auto linear = models::LinearGenerativeData<double>::synthetic(
      8, 6, 4, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  expect_bracket(run_owned(linear, config, GetParam()), label("linear_generative"));
  auto boltzmann = models::BoltzmannRelaxationData<double>::synthetic(12);
  expect_bracket(run_owned(boltzmann, config, GetParam()), label("boltzmann"));
}

// The HAIS paper's two baselines (hais.md §10) are valid AIS too and converge on a built-in
// target, given more work per temperature (plain AIS: full momentum refresh, several leapfrog
// steps) or more temperatures (random-walk Metropolis): 8-dimensional complete Laplace POE.
TEST_P(StatAisExact, PlainHmcAndRandomWalkBaselinesConverge) {
  auto data = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 8, 8);
  AisConfig hmc = config_for(300, 500, 108);
  hmc.refresh = 1.0;
  hmc.steps = 5;
  const AisResult plain = run_owned(data, hmc, GetParam());
  expect_exact(plain, label("poe_laplace M=8 plain HMC AIS"));
  EXPECT_EQ(plain.forward.stats.gradient_evaluations, 300 * 499 * 5);

  AisConfig rwm = config_for(300, 2000, 109);
  rwm.transition = AisTransition::metropolis;
  // About 2.4/√M times the target's coordinate sd (0.7 … 2.8 here): a reasonable random walk.
  rwm.proposal_scale = 0.5;
  rwm.steps = 2;
  const AisResult walk = run_owned(data, rwm, GetParam());
  expect_exact(walk, label("poe_laplace M=8 random walk"));
  EXPECT_EQ(walk.forward.stats.transitions, 300 * 1999 * 2);
}

INSTANTIATE_TEST_SUITE_P(Devices, StatAisExact, ::testing::Values(Device::cpu, Device::cuda),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(device_label(info.param));
                         });

// hais.md §2: with one temperature (N = 1) AIS is plain importance sampling with proposal q,
// log w_b = log Z_q + log p̃(x_b) − log q̃(x_b) at the base draws x_b — checked particle by
// particle on a batch target (particle b of problem p is stream p·B + b), then as an estimator
// on a target close to the base, where importance sampling alone is accurate.
TEST(StatAisImportanceSampling, OneTemperatureIsImportanceSampling) {
  const auto data = models::LinearGenerativeData<double>::synthetic(
      8, 6, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  const auto model = data.host_model();
  AisConfig config = config_for(50, 1, 110);
  config.device = Device::cpu;
  const AisResult r = ais(model, config);
  EXPECT_EQ(r.forward.stats.transitions, 0);
  const int dim = model.dim();
  const AnnealingBase<double> base{dim};
  std::vector<double> x(dim), grad(dim);
  DenseVector<double> x_view{x.data(), dim}, grad_view{grad.data(), dim};
  for (int p = 0; p < 3; ++p) {
    for (int b = 0; b < 50; ++b) {
      const std::int64_t i = static_cast<std::int64_t>(p) * 50 + b;
      base.sample(RandomStream(config.seed, static_cast<std::uint64_t>(i)), 0,
                  Purpose::initial_point, x_view);
      const double log_p = log_density_and_gradient(model.problem(p), x_view, grad_view);
      const double expected = r.log_z_base + (log_p - base.log_density(x_view));
      EXPECT_DOUBLE_EQ(r.forward.log_weights[i], expected) << "problem " << p << " particle " << b;
    }
  }

  // N(0.3·1, 0.9²[(1 − ρ)I + ρ11ᵀ]), ρ = 0.2, in 4 dimensions, from N(0, I): the weights'
  // relative variance is about 1, so 4000 draws give se ≈ 0.015.
  const auto near = models::Gaussian<double>::make(4, 0.2, 0.3, 0.9);
  AisConfig is = config_for(4000, 1, 111);
  is.device = Device::cpu;
  expect_exact(ais(near, is), "gaussian, importance sampling");
}

}  // namespace
}  // namespace myriad
