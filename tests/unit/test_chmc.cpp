// Constrained HMC's per-chain machinery on small generators defined here, independent of the
// built-in models: projections land on the manifold, momenta are tangent, the reversibility
// check and failure outcomes behave, the log-det gradient matches finite differences, and the
// sampler recovers exact answers (uniform on a sphere; a Gaussian conditioned on a linear
// constraint) within 5 MCSE.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/host_chmc_chain.hpp"
#include "common/run_configs.hpp"
#include "common/test_generators.hpp"
#include "myriad/diag/ess.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/mcmc/step_back_off.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/run/sample_abc.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {
namespace {

// TestSphere (analytic Jacobian) and TestCurved (duals and nested duals), shared with the CUDA
// tests.
using test_generators::TestCurved;
using test_generators::TestSphere;

/// Independent observations (diagonal + low-rank Gram, like the GLD model): u = (u₁ ∈ ℝ², u₂ ∈
/// ℝ^M), x_m = u₁₀ + e^{u₁₁/2} u₂ₘ + 0.1 u₁₀ u₂ₘ², so B = ∂x/∂u₁ is dense M × 2 and T = ∂x/∂u₂ =
/// diag(e^{u₁₁/2} + 0.2 u₁₀ u₂ₘ).
template <GramStructure Structure>
struct TestIndependent {
  using value_type = double;
  static constexpr GramStructure gram_structure = Structure;
  static constexpr int kM = 5;
  MYRIAD_HD int input_dim() const { return 2 + kM; }
  MYRIAD_HD int output_dim() const { return kM; }
  MYRIAD_HD int num_parameters() const { return 2; }
  MYRIAD_HD double observed(int m) const { return 0.3 * m - 0.5; }
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    for (int m = 0; m < kM; ++m)
      x[m] = u[0] + myriad::exp(0.5 * u[1]) * u[2 + m] + 0.1 * u[0] * u[2 + m] * u[2 + m];
  }
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, 2 + kM);
  }
  template <class Vec, class B, class Noise>
  MYRIAD_HD void structured_jacobian(const Vec& u, B& b, Noise& t) const {
    for (int m = 0; m < kM; ++m) {
      b(m, 0) = 1.0 + 0.1 * u[2 + m] * u[2 + m];
      b(m, 1) = 0.5 * myriad::exp(0.5 * u[1]) * u[2 + m];
      t[m] = myriad::exp(0.5 * u[1]) + 0.2 * u[0] * u[2 + m];
    }
  }
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& j) const {
    for (int m = 0; m < kM; ++m) {
      j(m, 0) = 1.0 + 0.1 * u[2 + m] * u[2 + m];
      j(m, 1) = 0.5 * myriad::exp(0.5 * u[1]) * u[2 + m];
      for (int q = 0; q < kM; ++q)
        j(m, 2 + q) = q == m ? myriad::exp(0.5 * u[1]) + 0.2 * u[0] * u[2 + m] : 0.0 * u[0];
    }
  }
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    // u₁ small so that each quadratic has its root near the linear solution; solve per m.
    u[0] = 0.3 * rng.normal<double>(attempt, Purpose::initial_point, 0);
    u[1] = 0.3 * rng.normal<double>(attempt, Purpose::initial_point, 1);
    const double a = 0.1 * u[0], b = std::exp(0.5 * u[1]);
    for (int m = 0; m < kM; ++m) {
      const double c = u[0] - observed(m);
      u[2 + m] = a == 0 ? -c / b : (-b + std::sqrt(b * b - 4 * a * c)) / (2 * a);
      if (!std::isfinite(u[2 + m])) return false;
    }
    return true;
  }
};

/// Per-chain scratch on the host for one chain of a generator.
template <class G>
using OneChain = testing::HostChmcChain<G>;

/// φ(u) = −log ρ(u) + ½ log|J Jᵀ| computed directly (J by central differences is not needed:
/// the Jacobian of TestCurved is written out here).
double curved_potential(const std::vector<double>& u) {
  const double j[2][4] = {{1, u[1] * u[1], 1, 0}, {0, 1, -std::cos(u[2]), 1}};
  double g[2][2] = {};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k) g[a][b] += j[a][k] * j[b][k];
  double sq = 0;
  for (double x : u) sq += x * x;
  return 0.5 * sq + 4 * 0.91893853320467274178 +
         0.5 * std::log(g[0][0] * g[1][1] - g[0][1] * g[1][0]);
}

TEST(Chmc, AGeneratorsInputsAreRecordedAsU) {
  // The docs' notation: u the inputs, x the outputs (a density model's parameters stay x).
  const test_generators::TestCurved curved;
  EXPECT_EQ(recorded_quantity_names(curved),
            (std::vector<std::string>{"u[0]", "u[1]", "u[2]", "u[3]"}));
}

TEST(Chmc, PotentialAndLogDetGradientMatchFiniteDifferences) {
  TestCurved g;
  OneChain<TestCurved> chain(g);
  chain.u = {0.3, -0.7, 0.4, 1.1};
  ChmcMachine<TestCurved, double> machine(g, chain.view());
  ASSERT_EQ(machine.evaluate_current(), kStatusOk);
  EXPECT_NEAR(chain.potential, curved_potential(chain.u), 1e-12);
  // Central differences of the ambient φ: error O(h²·φ''') + O(ε·φ/h); h = 1e-5 gives ~1e-10.
  for (int i = 0; i < 4; ++i) {
    std::vector<double> up = chain.u, down = chain.u;
    up[i] += 1e-5;
    down[i] -= 1e-5;
    const double fd = (curved_potential(up) - curved_potential(down)) / 2e-5;
    EXPECT_NEAR(chain.grad[i], fd, 1e-7) << "coordinate " << i;
  }
}

// Without any Jacobian, ∂J/∂u_i comes from nested duals of generate(), so the chain's dual
// scratch holds the output vectors only (one per output lane), not a dual M × N matrix.
TEST(Chmc, NestedDualGradientNeedsNoDualJacobianScratch) {
  const TestCurved g;
  for (const int lanes : {1, 3}) {
    const ChmcLayout layout = chmc_layout<TestCurved, double>(g, lanes);
    EXPECT_FALSE(layout.dual_jacobian);
    EXPECT_EQ(layout.output_lanes, lanes);
    EXPECT_EQ(layout.dual_size(), std::int64_t(lanes) * g.output_dim());
    EXPECT_EQ(layout.nested_size(), std::int64_t(lanes) * g.output_dim());
  }
}

TEST(Chmc, StructuredDiagonalFactorAgreesWithDense) {
  using Structured = TestIndependent<GramStructure::diagonal_plus_low_rank>;
  using Dense = TestIndependent<GramStructure::dense>;
  const Structured structured;
  const Dense dense;
  OneChain<Structured> a(structured);
  OneChain<Dense> b(dense);
  const RandomStream rng(5, 0);
  ASSERT_TRUE(initialize_chmc_chain(structured, a.view(), rng, 10));
  ASSERT_TRUE(initialize_chmc_chain(dense, b.view(), rng, 10));
  ASSERT_EQ(a.u, b.u);
  // φ and ∇φ agree to rounding: the Woodbury/determinant-lemma forms are exact identities.
  EXPECT_NEAR(a.potential, b.potential, 1e-12 * (1 + std::abs(b.potential)));
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(a.grad[i], b.grad[i], 1e-10) << i;
  // And so do whole transitions (same random numbers, same accept decisions).
  ChmcMachine<Structured, double> ma(structured, a.view());
  ChmcMachine<Dense, double> mb(dense, b.view());
  ChmcStep<double> step;
  step.step_size = 0.2;
  step.steps = 4;
  for (std::uint32_t it = 0; it < 20; ++it) {
    const auto oa = ma.transition(rng, it, step);
    const auto ob = mb.transition(rng, it, step);
    ASSERT_EQ(oa.status, ob.status) << it;
    ASSERT_EQ(oa.accepted, ob.accepted) << it;
    for (int i = 0; i < 7; ++i) EXPECT_NEAR(a.u[i], b.u[i], 1e-8) << it;
  }
}

TEST(Chmc, ProjectionsLandOnTheManifoldAndMomentaAreTangent) {
  TestCurved g;
  OneChain<TestCurved> chain(g);
  const RandomStream rng(7, 0);
  ASSERT_TRUE(initialize_chmc_chain(g, chain.view(), rng, 1));
  ChmcMachine<TestCurved, double> machine(g, chain.view());
  ChmcStep<double> step;
  step.step_size = 0.3;
  step.steps = 6;
  step.inner_steps = 3;
  int accepted = 0;
  for (std::uint32_t it = 0; it < 50; ++it) {
    const ChmcOutcome<double> out = machine.transition(rng, it, step);
    EXPECT_EQ(out.status, kStatusOk) << "iteration " << it;
    accepted += out.accepted;
    double x[2];
    g.generate(chain.u, x);
    EXPECT_LT(std::abs(x[0] - 0.5), 1e-9);
    EXPECT_LT(std::abs(x[1] + 0.25), 1e-9);
  }
  EXPECT_GT(accepted, 25);
}

/// A chain of TestSphere (radius 1.5) placed on the manifold, and steps of δt = 50, far beyond
/// its curvature radius: projections fail. Made in place (the machine views the chain's arrays).
struct OversizedSphereChain {
  static ChmcStep<double> oversized_step() {
    ChmcStep<double> step;
    step.step_size = 50.0;
    step.steps = 3;
    step.inner_steps = 1;
    step.max_iterations = 10;
    return step;
  }

  TestSphere g;
  OneChain<TestSphere> chain{g};
  const RandomStream rng{3, 0};
  const bool placed = initialize_chmc_chain(g, chain.view(), rng, 1);
  ChmcMachine<TestSphere, double> machine{g, chain.view()};
  const ChmcStep<double> step = oversized_step();
};

TEST(Chmc, OversizedStepsFailAsCountedRejectionsNotCrashes) {
  OversizedSphereChain s;
  ASSERT_TRUE(s.placed);
  int failures = 0;
  for (std::uint32_t it = 0; it < 20; ++it) {
    const ChmcOutcome<double> out = s.machine.transition(s.rng, it, s.step);
    if (out.status != kStatusOk) {
      ++failures;
      EXPECT_FALSE(out.accepted);
      EXPECT_EQ(out.accept_prob, 0.0);
    }
  }
  EXPECT_GT(failures, 10);
  double r2 = 0;
  for (double x : s.chain.u) r2 += x * x;
  EXPECT_NEAR(r2, 1.5 * 1.5, 1e-9);  // still on the sphere, whatever happened
}

TEST(StepBackOff, HalvesAfterAFailureOrHopelessMoveAndRecoversAfterAnAcceptance) {
  EXPECT_EQ(next_step_halvings(0, false, kStatusNonFinite, 0.0), 1);
  EXPECT_EQ(next_step_halvings(3, false, kStatusNotConverged, 0.0), 4);
  EXPECT_EQ(next_step_halvings(0, false, kStatusOk, 0.5 * kNegligibleAcceptProb), 1);
  // An ordinary rejection says nothing about the step: no change.
  EXPECT_EQ(next_step_halvings(2, false, kStatusOk, 0.4), 2);
  EXPECT_EQ(next_step_halvings(0, false, kStatusOk, 0.4), 0);
  EXPECT_EQ(next_step_halvings(2, true, kStatusOk, 0.9), 1);
  EXPECT_EQ(next_step_halvings(0, true, kStatusOk, 1.0), 0);
  EXPECT_EQ(next_step_halvings(kMaxStepHalvings, false, kStatusDivergent, 0.0), kMaxStepHalvings);
  EXPECT_EQ(step_back_off_scale<double>(0), 1.0);
  EXPECT_EQ(step_back_off_scale<double>(3), 0.125);
}

TEST(StepBackOff, AChainThatCannotMoveAtTheEnsemblesStepBacksOffUntilItMoves) {
  // δt = 50 on a sphere of radius 1.5: every projection fails (the test above), so without the
  // back-off the chain never moves; halving its own step it reaches a δt that moves it.
  OversizedSphereChain s;
  ASSERT_TRUE(s.placed);
  ChmcStep<double> step = s.step;
  std::uint8_t halvings = 0;
  int accepted = 0, first_accepted_at = -1;
  for (std::uint32_t it = 0; it < 30; ++it) {
    step.step_size = s.step.step_size * step_back_off_scale<double>(halvings);
    const ChmcOutcome<double> out = s.machine.transition(s.rng, it, step);
    halvings = next_step_halvings(halvings, out);
    if (out.accepted && first_accepted_at < 0) first_accepted_at = static_cast<int>(it);
    accepted += out.accepted;
  }
  EXPECT_GT(first_accepted_at, 0) << "δt = 50 itself moved the chain: the test shows nothing";
  EXPECT_GE(accepted, 10);
  EXPECT_GT(halvings, 0) << "the chain cannot run at δt = 50, so it stays backed off";
}

TEST(Chmc, SphereIsSampledUniformly) {
  ChmcConfig config = myriad::testing::run_config<ChmcConfig>(64, 100, 300, 11);
  TestSphere sphere;
  const SampleResult result = sample_chmc(sphere, config);
  // E[u] = 0 and E[u_i²] = r²/N (constrained-hmc.md §2), within 5 MCSE each.
  const std::int64_t draws = result.chains * result.kept_draws;
  for (int i = 0; i < sphere.n; ++i) {
    std::vector<double> sq(static_cast<std::size_t>(draws));
    for (std::int64_t d = 0; d < draws; ++d)
      sq[d] = std::pow(result.draws_data[d * sphere.n + i], 2);
    const diag::DrawsView view{sq.data(), result.chains, result.kept_draws, result.kept_draws, 1};
    double mean_sq = 0;
    for (double v : sq) mean_sq += v;
    mean_sq /= draws;
    EXPECT_LE(std::abs(result.summary[i].mean), 5 * result.summary[i].mcse_mean) << i;
    EXPECT_LE(std::abs(mean_sq - 1.5 * 1.5 / sphere.n), 5 * diag::mcse_mean(view)) << i;
    EXPECT_LT(result.summary[i].rhat, 1.01);
  }
  // Projection failures at the adapted step size are legitimate rejections (§7): on the sphere
  // a frozen-Jacobian projection has no solution once h‖p‖ exceeds the radius, and dual
  // averaging trades such failures against longer steps. They are counted, never accepted.
  const IterationStats& s = result.sampling_stats;
  const std::int64_t failures =
      s.not_converged + s.not_reversible + s.cholesky_failures + s.non_finite + s.divergent;
  std::printf(
      "step %.3f accept %.3f: not converged %lld, not reversible %lld, cholesky %lld, "
      "non-finite %lld, divergent %lld of %lld\n",
      result.step_size, s.mean_accept_prob(), (long long)s.not_converged,
      (long long)s.not_reversible, (long long)s.cholesky_failures, (long long)s.non_finite,
      (long long)s.divergent, (long long)s.transitions);
  EXPECT_LE(failures + s.accepted, s.transitions);
  EXPECT_NEAR(s.mean_accept_prob(), 0.8, 0.1);
}

}  // namespace
}  // namespace myriad

namespace myriad {
namespace {

TEST(AbcBaselines, RejectionMcmcAndHmcRunOnASphere) {
  TestSphere sphere;
  AbcConfig config = myriad::testing::run_config<AbcConfig>(32, 100, 200, 2);
  config.epsilon = 0.5;
  AbcRejectionSummary summary;
  const SampleResult rejected = sample_abc_rejection(sphere, config, summary);
  EXPECT_EQ(summary.simulations, config.chains * config.draws);
  // ‖u‖² ~ χ²₄ and |‖u‖² − 2.25| ≤ 0.5 has prior probability ≈ 0.19: acceptances are plentiful.
  EXPECT_GT(summary.accepted, summary.simulations / 10);
  EXPECT_EQ(rejected.chains, summary.accepted);
  for (std::int64_t s = 0; s < summary.accepted; ++s) {
    double r2 = 0;
    for (int i = 0; i < sphere.n; ++i) r2 += std::pow(rejected.draws_data[s * sphere.n + i], 2);
    ASSERT_LE(std::abs(r2 - 2.25), 0.5);
  }
  const SampleResult mcmc = sample_abc_mcmc(sphere, config);
  EXPECT_GT(mcmc.sampling_stats.accepted, 0);
  for (std::int64_t d = 0; d < mcmc.chains * mcmc.kept_draws; ++d) {
    double r2 = 0;
    for (int i = 0; i < sphere.n; ++i) r2 += std::pow(mcmc.draws_data[d * sphere.n + i], 2);
    ASSERT_LE(std::abs(r2 - 2.25), 0.5 + 1e-12);  // the uniform kernel never leaves the ball
  }
  SampleConfig hmc = config;
  const SampleResult abc_hmc = sample_abc_hmc(sphere, 0.1, hmc);
  EXPECT_GT(abc_hmc.sampling_stats.accepted, 0);
}

// The paper's Lotka–Volterra (S = 50): every point of [−2, 2]^104 and almost every prior draw
// makes the series explode, so the HMC baseline starts where constrained HMC does (the
// generator's initialize(): on the manifold, so the ABC distance starts at 0).
TEST(AbcBaselines, HmcStartsOnTheManifoldOfAStiffSimulator) {
  const auto problem = models::LotkaVolterraProblem::make();
  SampleConfig config = myriad::testing::run_config(4, 5, 5, 3);
  SampleResult result;
  ASSERT_NO_THROW(result = sample_abc_hmc(problem.host_model(), 0.5, config));
  EXPECT_EQ(result.chains, 4);
  for (double x : result.draws_data) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace
}  // namespace myriad
