// The CUDA constrained-HMC backend against the CPU backend (DESIGN.md, rule 1: one per-chain code
// path). Compiled by the host compiler: the generators defined in tests/common/test_generators.hpp
// reach CUDA through make_cuda_chmc_backend, instantiated in tests/cuda/chmc_test_generators.cu
// (CUDA builds only), the built-in ones through the library's instantiations. Every test skips
// without a CUDA device.
//
// What "agree" means, and why the tolerances are what they are (double precision throughout):
//  * Initial points agree to rounding: initialize() draws normals (Box–Muller: log, sqrt, sin,
//    cos) and normalises or solves for the remaining inputs (sin); glibc and CUDA's libdevice
//    differ by an ulp or two in these, and nvcc contracts a · b + c into FMAs where g++
//    (baseline x86-64) rounds twice. ~10 operations of a few ulp each: kInitialTolerance = 1e-13
//    relative (≈ 450 ulp), far below anything a wrong index or stride would produce. The paper's
//    Lotka–Volterra start (S = 50) comes out of a least-squares fit (gradient matching) and a
//    forward substitution whose noise values are differences of data and drift of size ~100 that
//    cancel to size ~1, amplifying the rounding up to ~100-fold: that comparison alone takes
//    kLotkaVolterraInitialTolerance = 1e-11.
//  * Trajectories agree to rounding amplified by the dynamics, which is far below the projection
//    tolerance: kPositionTolerance = position_tol = 1e-8 (relative to max(1, |u|)). Rounding
//    differences start at ~1e-16 and grow along the trajectory; at the step sizes used here, near
//    where projections start to fail, they reach ~4e-11 after five transitions (measured with the
//    CPU backend built with and without FMA contraction, which perturbs the arithmetic the way
//    nvcc does; printed by every comparison). A difference as large as position_tol can only come
//    from a projection that stopped at a different iterate on the two devices ("stop flip"): it
//    stops at the first iterate with ‖r‖∞ < constraint_tol (1e-9) and ‖Δ‖∞ < position_tol, and
//    the compared quantities differ between the devices by rounding of the residual's normal
//    component, ~1e-15, i.e. ~1e-6 relative to the threshold. Stop flips are therefore rare but
//    real (FMA experiment: none in ~10⁶ projections of the test generators; ~2e-5 per Newton
//    iteration for Lotka–Volterra, whose residuals come out of a recursion, yet none of those
//    moved a chain by 1e-8), and each changes the Newton iteration count by one. Hence the rule:
//    while the per-iteration Newton totals agree, every chain must agree to kPositionTolerance with
//    the same decisions and the same status counters exactly; once they differ by k in all, up to k
//    chains may part (their trajectories legitimately separate), the decisions and the failures in
//    all may differ by at most the number of parted chains, and each failure kind by that plus k
//    (a stop flip inside a failing transition can change which failure it was).
//  * Accept/reject decisions and failure statuses agree: an accept decision flips only when
//    log U falls within the energy difference's rounding error (~1e-12) of H0 − H1, and a status
//    only when a thresholded quantity (reverse-check distance against 2e-8, the Newton cap of 50,
//    divergence at 1e10) lands within rounding of its threshold: ~1e-12 per transition.
//  * Launch configuration and chunking change nothing on one device: each chain's arithmetic is
//    the same code in the same order whatever the grid, so fused, chunked and one-iteration runs
//    are bit-identical, and so are the statistics (integers; acceptance in 2^-32 fixed point).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/test_generators.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_generators.hpp"
#include "myriad/run/sample_constrained.hpp"

namespace myriad {
namespace {

#if defined(MYRIAD_HAS_CUDA)
constexpr const char* kNoDeviceReason = "no CUDA device: the CUDA backend cannot run here";
#else
constexpr const char* kNoDeviceReason = "no CUDA device: myriad was built without CUDA";
#endif

/// Every test starts with this: without a device there is nothing to compare.
#define MYRIAD_SKIP_WITHOUT_CUDA() \
  if (!cuda_device_available()) GTEST_SKIP() << kNoDeviceReason

constexpr double kInitialTolerance = 1e-13;
constexpr double kLotkaVolterraInitialTolerance = 1e-11;
constexpr double kPositionTolerance = 1e-8;

/// A sanity bound on stop flips (file comment) per iteration: a few, plus one per 10⁴ Newton
/// iterations, five times the highest rate of the FMA experiment (Lotka–Volterra).
std::int64_t allowed_newton_difference(std::int64_t newton_iterations) {
  return 3 + newton_iterations / 10000;
}

using BackendFactory = std::function<std::unique_ptr<ChmcBackend<double>>()>;

/// The CUDA backend of a generator defined in the tests (chmc_test_generators.cu) or built in.
template <class Generator>
std::unique_ptr<ChmcBackend<double>> make_cuda(const Generator& generator, std::int64_t chains,
                                               ChmcCudaOptions options = {}) {
#if defined(MYRIAD_HAS_CUDA)
  return make_cuda_chmc_backend<Generator, double>(generator, chains, options);
#else
  // No instantiation for the test generators without CUDA; every caller has skipped already.
  (void)generator;
  (void)chains;
  (void)options;
  throw unavailable_error("myriad was built without CUDA");
#endif
}

/// Keeps every delivered chunk and checks that chunks arrive in order, without gaps.
class RecordingSink final : public DrawSink<double> {
 public:
  RecordingSink(std::int64_t chains, int quantities, std::int64_t first_draw)
      : chains_(chains), quantities_(quantities), next_draw_(first_draw) {}

  void consume(const double* values, std::int64_t first_draw, int n_draws) override {
    EXPECT_EQ(first_draw, next_draw_) << "chunks out of order or with a gap";
    next_draw_ = first_draw + n_draws;
    chunk_sizes.push_back(n_draws);
    values_.insert(values_.end(), values, values + n_draws * quantities_ * chains_);
  }
  const std::vector<double>& values() const { return values_; }

  std::vector<int> chunk_sizes;

 private:
  std::int64_t chains_;
  int quantities_;
  std::int64_t next_draw_;
  std::vector<double> values_;
};

/// |a − b| / max(1, |a|, |b|).
double relative_difference(double a, double b) {
  return std::fabs(a - b) / std::max({1.0, std::fabs(a), std::fabs(b)});
}

/// Settings with a step size large enough that some transitions fail (not converged, not
/// reversible, divergent), so that the status counters are compared on non-zero values; with
/// the warm-up's per-chain step back-off on, so that each chain's back-off is compared too.
ChmcSettings<double> test_settings(double step_size) {
  ChmcSettings<double> settings;
  settings.seed = 20261122;
  settings.step.step_size = step_size;
  settings.min_steps = 3;
  settings.max_steps = 6;
  settings.step_back_off = true;
  return settings;
}

/// What a comparison found, for the log and for tests that want to check more.
struct Agreement {
  IterationStats reference_total;
  IterationStats candidate_total;
  double max_initial_difference = 0;
  double max_position_difference = 0;  ///< over the chains that did not part
  std::int64_t stop_flips = 0;         ///< Σ over iterations of |Δ Newton iterations|
  std::int64_t parted_chains = 0;
};

/// |a − b| for counters that may differ by at most `allowed`.
void expect_counts_within(const char* name, std::int64_t candidate, std::int64_t reference,
                          std::int64_t allowed) {
  EXPECT_LE(std::llabs(candidate - reference), allowed)
      << name << ": candidate " << candidate << " vs reference " << reference;
}

/// Runs `reference` (the CPU backend) and `candidate` (the CUDA backend) from the same seed, one
/// iteration per run() call, and compares initial points, per-chain decisions, positions,
/// recorded draws and per-iteration statistics as described at the top of the file. Then runs a
/// fresh candidate over all iterations in one call with chunks of two and requires bit-identical
/// draws, positions and totals.
Agreement expect_backends_agree(const BackendFactory& make_reference,
                                const BackendFactory& make_candidate,
                                const ChmcSettings<double>& settings, int iterations,
                                std::int64_t chains_per_init, const std::string& what,
                                double initial_tolerance = kInitialTolerance) {
  SCOPED_TRACE(what);
  Agreement result;
  auto reference = make_reference();
  auto candidate = make_candidate();
  const std::int64_t chains = reference->chains();
  EXPECT_EQ(candidate->chains(), chains);
  EXPECT_EQ(candidate->input_dim(), reference->input_dim());
  EXPECT_EQ(candidate->num_quantities(), reference->num_quantities());
  EXPECT_EQ(candidate->quantity_names(), reference->quantity_names());
  const int dim = reference->input_dim();
  const int quantities = reference->num_quantities();
  const auto size = static_cast<std::size_t>(dim * chains);

  EXPECT_EQ(candidate->initialize(settings.seed, 10, chains_per_init),
            reference->initialize(settings.seed, 10, chains_per_init));
  std::vector<double> reference_before = reference->positions();
  std::vector<double> candidate_before = candidate->positions();
  if (reference_before.size() != size || candidate_before.size() != size) {
    ADD_FAILURE() << "positions() has the wrong size";
    return result;
  }
  for (std::size_t k = 0; k < size; ++k) {
    const double d = relative_difference(reference_before[k], candidate_before[k]);
    result.max_initial_difference = std::max(result.max_initial_difference, d);
  }
  EXPECT_LE(result.max_initial_difference, initial_tolerance) << "initial points differ";

  RecordingSink reference_draws(chains, quantities, 0), candidate_draws(chains, quantities, 0);
  std::vector<bool> parted(static_cast<std::size_t>(chains), false);
  for (int i = 0; i < iterations; ++i) {
    SCOPED_TRACE("iteration " + std::to_string(i));
    const auto it = static_cast<std::uint32_t>(i);
    const IterationStats r = reference->run(settings, it, 1, &reference_draws, i, 0);
    const IterationStats c = candidate->run(settings, it, 1, &candidate_draws, i, 0);
    result.reference_total += r;
    result.candidate_total += c;
    const std::int64_t newton_difference = std::llabs(c.newton_iterations - r.newton_iterations);
    EXPECT_LE(newton_difference, allowed_newton_difference(r.newton_iterations));
    result.stop_flips += newton_difference;

    // Chains that part from their twin this iteration: a position beyond the tolerance or a
    // different decision (a draw equal to its predecessor is a rejection or a failure).
    const std::vector<double> reference_after = reference->positions();
    const std::vector<double> candidate_after = candidate->positions();
    const std::vector<std::uint8_t> reference_halvings = reference->step_halvings();
    const std::vector<std::uint8_t> candidate_halvings = candidate->step_halvings();
    for (std::int64_t ch = 0; ch < chains; ++ch) {
      if (parted[static_cast<std::size_t>(ch)]) continue;
      bool reference_moved = false, candidate_moved = false, beyond = false;
      double chain_difference = 0;
      for (int d = 0; d < dim; ++d) {
        const std::size_t k = static_cast<std::size_t>(d * chains + ch);
        reference_moved = reference_moved || reference_after[k] != reference_before[k];
        candidate_moved = candidate_moved || candidate_after[k] != candidate_before[k];
        const double diff = relative_difference(reference_after[k], candidate_after[k]);
        chain_difference = std::max(chain_difference, diff);
        beyond = beyond || diff > kPositionTolerance;
      }
      // A different step back-off is a different decision too (a failure on one side, an
      // ordinary rejection on the other).
      beyond = beyond || candidate_halvings[static_cast<std::size_t>(ch)] !=
                             reference_halvings[static_cast<std::size_t>(ch)];
      if (beyond || reference_moved != candidate_moved) {
        parted[static_cast<std::size_t>(ch)] = true;
        ++result.parted_chains;
        if (result.parted_chains > result.stop_flips) {
          ADD_FAILURE() << "chain " << ch << " parted (max |du| " << chain_difference << ", "
                        << (reference_moved ? "moved" : "stayed") << " on the reference, "
                        << (candidate_moved ? "moved" : "stayed")
                        << " on the candidate) without a stop flip to explain it";
        }
      } else {
        result.max_position_difference = std::max(result.max_position_difference, chain_difference);
      }
    }
    // Exact while no chain has parted; otherwise within one per parted chain. A stop flip in a
    // transition that fails on both devices leaves the chain in place on both but may change
    // which failure it was (the Newton cap on one device, the reverse check on the other): so
    // the failures in all are compared like the decisions, each kind also allowing the stop
    // flips so far.
    const std::int64_t allowed = result.parted_chains;
    const std::int64_t allowed_kind = allowed + result.stop_flips;
    const auto failures = [](const IterationStats& s) {
      return s.divergent + s.non_finite + s.not_converged + s.not_reversible + s.cholesky_failures;
    };
    EXPECT_EQ(c.transitions, r.transitions);
    expect_counts_within("accepted", c.accepted, r.accepted, allowed);
    expect_counts_within("failures", failures(c), failures(r), allowed);
    expect_counts_within("divergent", c.divergent, r.divergent, allowed_kind);
    expect_counts_within("non_finite", c.non_finite, r.non_finite, allowed_kind);
    expect_counts_within("not_converged", c.not_converged, r.not_converged, allowed_kind);
    expect_counts_within("not_reversible", c.not_reversible, r.not_reversible, allowed_kind);
    expect_counts_within("cholesky_failures", c.cholesky_failures, r.cholesky_failures,
                         allowed_kind);
    // A failed trajectory stops early: a parted chain changes the count by at most max_steps.
    expect_counts_within("gradient_evaluations", c.gradient_evaluations, r.gradient_evaluations,
                         allowed * settings.max_steps);
    // min(1, e^x) is 1-Lipschitz: each agreeing transition's acceptance probability differs by at
    // most its energy error's difference (≪ kPositionTolerance), a parted chain's by at most 1.
    EXPECT_NEAR(c.accept_prob_sum(), r.accept_prob_sum(),
                static_cast<double>(chains) * kPositionTolerance + static_cast<double>(allowed));
    reference_before = reference_after;
    candidate_before = candidate_after;
  }
  // Recorded draws are functions of the positions (the quantities), so they agree as they do.
  const std::vector<double>& a = reference_draws.values();
  const std::vector<double>& b = candidate_draws.values();
  EXPECT_EQ(a.size(), b.size());
  int draw_mismatches = 0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (parted[k % static_cast<std::size_t>(chains)]) continue;
    if (relative_difference(a[k], b[k]) > kPositionTolerance && ++draw_mismatches <= 5)
      ADD_FAILURE() << "recorded value " << k << ": reference " << a[k] << " vs candidate " << b[k];
  }
  const IterationStats& rt = result.reference_total;
  std::printf(
      "[ %s ] max |du| initial %.2e, after %d iterations %.2e; stop flips %lld, parted chains "
      "%lld of %lld; accepted %lld, not converged %lld, not reversible %lld, divergent %lld, "
      "non-finite %lld, Cholesky %lld of %lld transitions; Newton iterations %lld\n",
      what.c_str(), result.max_initial_difference, iterations, result.max_position_difference,
      static_cast<long long>(result.stop_flips), static_cast<long long>(result.parted_chains),
      static_cast<long long>(chains), static_cast<long long>(rt.accepted),
      static_cast<long long>(rt.not_converged), static_cast<long long>(rt.not_reversible),
      static_cast<long long>(rt.divergent), static_cast<long long>(rt.non_finite),
      static_cast<long long>(rt.cholesky_failures), static_cast<long long>(rt.transitions),
      static_cast<long long>(rt.newton_iterations));

  // The candidate again, fused over all iterations in chunks of two: the same bits.
  auto fused = make_candidate();
  fused->initialize(settings.seed, 10, chains_per_init);
  RecordingSink fused_draws(chains, quantities, 100);
  const IterationStats f = fused->run(settings, 0, iterations, &fused_draws, 100, 2);
  std::vector<int> expected_chunks(static_cast<std::size_t>(iterations / 2), 2);
  if (iterations % 2 != 0) expected_chunks.push_back(1);
  EXPECT_EQ(fused_draws.chunk_sizes, expected_chunks);
  EXPECT_EQ(fused_draws.values(), candidate_draws.values())
      << "recorded draws depend on the chunk size";
  EXPECT_EQ(fused->positions(), candidate_before);
  EXPECT_EQ(fused->step_halvings(), candidate->step_halvings());
  const IterationStats& ct = result.candidate_total;
  EXPECT_EQ(f.transitions, ct.transitions);
  EXPECT_EQ(f.accept_prob_fixed, ct.accept_prob_fixed);
  EXPECT_EQ(f.accepted, ct.accepted);
  EXPECT_EQ(f.divergent, ct.divergent);
  EXPECT_EQ(f.non_finite, ct.non_finite);
  EXPECT_EQ(f.not_converged, ct.not_converged);
  EXPECT_EQ(f.not_reversible, ct.not_reversible);
  EXPECT_EQ(f.cholesky_failures, ct.cholesky_failures);
  EXPECT_EQ(f.gradient_evaluations, ct.gradient_evaluations);
  EXPECT_EQ(f.newton_iterations, ct.newton_iterations);
  return result;
}

/// CPU and CUDA backends of one generator (held on the device side as `cuda_generator`, which
/// differs from `cpu_generator` only in where its data lives).
template <class Generator>
Agreement expect_cpu_and_cuda_agree(const Generator& cpu_generator, const Generator& cuda_generator,
                                    std::int64_t chains, const ChmcSettings<double>& settings,
                                    int iterations, std::int64_t chains_per_init,
                                    const std::string& what, ChmcCudaOptions options = {},
                                    double initial_tolerance = kInitialTolerance) {
  return expect_backends_agree(
      [&] { return make_cpu_chmc_backend<Generator, double>(cpu_generator, chains); },
      [&] { return make_cuda(cuda_generator, chains, options); }, settings, iterations,
      chains_per_init,
      what + ", " + std::to_string(chains) + " chains, " + to_string(options.chain_mapping) +
          " mapping, Gram factorisation " + to_string(options.gram_factorization),
      initial_tolerance);
}

TEST(CudaChmc, SphereAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const test_generators::TestSphere sphere;
  // At δt = 1.6 about 8% of transitions fail (not converged, divergent projections): the status
  // counters are compared on non-zero values. 1000 chains: not a multiple of 32 (the stride
  // padding) and several blocks.
  const Agreement a =
      expect_cpu_and_cuda_agree(sphere, sphere, 1000, test_settings(1.6), 5, 1, "sphere");
  EXPECT_GT(a.reference_total.not_converged + a.reference_total.divergent, 0);
  EXPECT_GT(a.reference_total.accepted, 0);
}

TEST(CudaChmc, CurvedGeneratorWithDualDerivativesAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // No analytic Jacobian: J by duals, the log-det gradient by nested duals (Dual<Dual<T>>
  // workspace). δt = 1.2: ~20% of transitions rejected, some not converged or not reversible.
  const test_generators::TestCurved curved;
  const Agreement a =
      expect_cpu_and_cuda_agree(curved, curved, 500, test_settings(1.2), 5, 1, "curved");
  EXPECT_GT(a.reference_total.not_reversible, 0);
  EXPECT_LT(a.reference_total.accepted, a.reference_total.transitions);
}

TEST(CudaChmc, SuperchainsShareInitialPointsLikeTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const test_generators::TestCurved curved;
  expect_cpu_and_cuda_agree(curved, curved, 70, test_settings(0.6), 4, 8,
                            "curved, 8 chains per initial point");
  // Within a superchain the CUDA backend's initial points are identical (one stream).
  auto cuda = make_cuda(curved, 70);
  ASSERT_EQ(cuda->initialize(3, 10, 8), 0);
  const std::vector<double> u = cuda->positions();
  for (int d = 0; d < 4; ++d)
    for (std::int64_t c = 0; c < 70; ++c)
      EXPECT_EQ(u[static_cast<std::size_t>(d * 70 + c)],
                u[static_cast<std::size_t>(d * 70 + c / 8 * 8)]);
}

TEST(CudaChmc, OneChainAndAFullWarpAgreeWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  test_generators::TestSphere sphere;
  sphere.n = 7;
  for (std::int64_t chains : {1, 32})
    expect_cpu_and_cuda_agree(sphere, sphere, chains, test_settings(0.9), 6, 1, "sphere N = 7");
}

TEST(CudaChmc, ChainCountDoesNotChangeAChainsResult) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // Another chain count changes the grid and the stride; chain 0's draws must not change.
  const test_generators::TestCurved curved;
  const ChmcSettings<double> settings = test_settings(0.9);
  std::vector<std::vector<double>> first_chain;
  for (std::int64_t chains : {1, 31, 1000, 40000}) {
    auto cuda = make_cuda(curved, chains);
    ASSERT_EQ(cuda->initialize(settings.seed, 10, 1), 0);
    RecordingSink sink(chains, 4, 0);
    cuda->run(settings, 0, 4, &sink, 0, 3);
    std::vector<double> mine;
    for (int i = 0; i < 4; ++i)
      for (int q = 0; q < 4; ++q)
        mine.push_back(sink.values()[static_cast<std::size_t>((i * 4 + q) * chains)]);
    first_chain.push_back(mine);
  }
  for (std::size_t k = 1; k < first_chain.size(); ++k) EXPECT_EQ(first_chain[k], first_chain[0]);
}

TEST(CudaChmc, BuiltinSphereAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // The library's instantiation (kernels/builtin_chmc_sphere.cu), analytic prior gradient.
  const auto sphere = models::Sphere::make(5, 1.0);
  const Agreement a =
      expect_cpu_and_cuda_agree(sphere, sphere, 2000, test_settings(1.0), 5, 1, "built-in sphere");
  EXPECT_GT(a.reference_total.accepted, 0);
  const auto noisy = models::Noisy<models::Sphere>::make(sphere, 0.5);
  expect_cpu_and_cuda_agree(noisy, noisy, 300, test_settings(0.5), 4, 1, "noisy sphere");
}

/// A small Lotka–Volterra problem whose data lie where prior draws of z keep the simulation
/// tame (S = 10 steps from r₀ = f₀ = 1, z = (0.3, 0.1, 0.2, 0.1)), so that chains started by
/// initialize() move: ~85% accepted at δt = 0.2, the rest spread over every failure counter.
models::LotkaVolterraProblem small_lotka_volterra() {
  return models::LotkaVolterraProblem::make(7, models::LotkaVolterraSettings::short_series());
}

TEST(CudaChmc, LotkaVolterraAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // Triangular + low-rank Gram structure (§10.2), data read from device memory on the GPU.
  auto problem = small_lotka_volterra();
  const Agreement a = expect_cpu_and_cuda_agree(problem.host_model(), problem.device_model(), 300,
                                                test_settings(0.2), 5, 1, "lotka_volterra S = 10");
  EXPECT_GT(a.reference_total.accepted, a.reference_total.transitions / 2);
  // The paper's problem (S = 50: M = 100, N = 104) exercises the full-size workspaces. From
  // initialize()'s prior draws of z its trajectories fail (the simulation explodes; see
  // docs/constrained-hmc.md on initialisation), so this compares initial points and statuses.
  auto paper = models::LotkaVolterraProblem::make();
  expect_cpu_and_cuda_agree(paper.host_model(), paper.device_model(), 64, test_settings(0.02), 2, 1,
                            "lotka_volterra S = 50", {}, kLotkaVolterraInitialTolerance);
}

TEST(CudaChmc, WarpPerChainAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // The warp mapping (kernels/chmc_kernels.cuh) on every kind of generator: analytic Jacobian
  // (M = 1), duals and nested duals, a dense 18 × 18 Gram that `automatic` also maps to warps,
  // and a structured Gram whose operations run on lane 0. Chain counts that leave a block's
  // last warps idle. The same tolerances as the thread mapping: a team reproduces one lane's
  // arithmetic (tests/unit/test_chmc_chain_bodies.cpp checks it bit for bit on the host).
  const test_generators::TestSphere sphere;
  expect_cpu_and_cuda_agree(sphere, sphere, 301, test_settings(1.6), 5, 1, "sphere",
                            ChmcChainMapping::warp);
  const test_generators::TestCurved curved;
  expect_cpu_and_cuda_agree(curved, curved, 97, test_settings(1.2), 5, 4, "curved",
                            ChmcChainMapping::warp);
  auto linear = models::LinearGaussianProblem::make(18, 23, 5);
  const Agreement a = expect_cpu_and_cuda_agree(linear.host_model(), linear.device_model(), 200,
                                                test_settings(0.5), 5, 1, "linear_gaussian M = 18");
  EXPECT_GT(a.reference_total.accepted, 0);
  auto cuda = make_cuda(linear.device_model(), 8);
  EXPECT_NE(cuda->device_name().find("one warp per chain"), std::string::npos)
      << "automatic should give M = 18 a warp: " << cuda->device_name();
  auto problem = small_lotka_volterra();
  expect_cpu_and_cuda_agree(problem.host_model(), problem.device_model(), 100, test_settings(0.2),
                            5, 1, "lotka_volterra S = 10", ChmcChainMapping::warp);
}

TEST(CudaChmc, BatchedGramFactorisationAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // The transition in phases with every chain's Gram matrix factored between launches
  // (backend/gram_factorization.hpp). The thread tier runs the per-chain Cholesky and so rounds
  // as the chain does, the registers tier its recurrences in the same order (up to nvcc's FMA
  // contractions); the tile tier and cuSOLVER (library) round their own way, a few ulp per factor,
  // which the tolerances above already cover (rounding amplified by the dynamics, stop flips). Both
  // chain mappings; dense Grams only (M = 1, duals, and a linear Gaussian of M = 18, or M = 9 for
  // the registers tier, whose kernels stop at 12).
  const test_generators::TestSphere sphere;
  const test_generators::TestCurved curved;
  auto linear = models::LinearGaussianProblem::make(18, 23, 5);
  auto linear_m9 = models::LinearGaussianProblem::make(9, 14, 5);
  struct TierCase {
    GramFactorization tier;
    models::LinearGaussianProblem* linear;
    const char* label;
  };
  for (const TierCase& c : {TierCase{GramFactorization::registers, &linear_m9, "linear M = 9"},
                            TierCase{GramFactorization::thread, &linear, "linear M = 18"},
                            TierCase{GramFactorization::tile, &linear, "linear M = 18"},
                            TierCase{GramFactorization::library, &linear, "linear M = 18"}}) {
    for (ChmcChainMapping mapping : {ChmcChainMapping::thread, ChmcChainMapping::warp}) {
      const ChmcCudaOptions options(mapping, c.tier);
      expect_cpu_and_cuda_agree(sphere, sphere, 301, test_settings(1.6), 4, 1, "sphere", options);
      expect_cpu_and_cuda_agree(curved, curved, 97, test_settings(1.2), 4, 4, "curved", options);
      const Agreement a =
          expect_cpu_and_cuda_agree(c.linear->host_model(), c.linear->device_model(), 200,
                                    test_settings(0.5), 4, 1, c.label, options);
      EXPECT_GT(a.reference_total.accepted, 0);
    }
  }
  EXPECT_THROW(
      make_cuda(linear.device_model(), 8, ChmcCudaOptions({}, GramFactorization::registers)),
      invalid_argument)
      << "M = 18 is beyond the registers tier";
  auto cuda = make_cuda(linear.device_model(), 8, ChmcCudaOptions({}, GramFactorization::library));
  EXPECT_NE(cuda->device_name().find("Gram factored batched (library)"), std::string::npos)
      << cuda->device_name();
  // A structured Gram has no batched tier.
  auto problem = small_lotka_volterra();
  EXPECT_THROW(
      make_cuda(problem.device_model(), 8, ChmcCudaOptions({}, GramFactorization::library)),
      invalid_argument);
}

TEST(CudaChmc, SampleConstrainedRunsABuiltinGeneratorOnCuda) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // Through the public API: device selection (models/builtin_generators.hpp makes the built-in
  // sphere reachable from host code), warm-up with step-size adaptation, chunked sampling.
  ChmcConfig config;
  config.chains = 4096;
  config.warmup = 100;
  // 400 draws: with 100, split R-hat's short-chain term alone is ≈ 0.016 here (the same run on
  // the CPU gave 1.016 on every coordinate), above the 1.01 bound at stationarity.
  config.draws = 400;
  config.seed = 11;
  config.device = Device::cuda;
  const auto sphere = models::Sphere::make(4, 1.5);
  const SampleResult result = sample_constrained(sphere, config);
  EXPECT_NE(result.device.find("(sm_"), std::string::npos) << result.device;
  ASSERT_EQ(result.summary.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    // Uniform on the sphere: E[u_i] = 0 within 5 MCSE; sd = r/√N = 0.75.
    EXPECT_LE(std::fabs(result.summary[i].mean), 5 * result.summary[i].mcse_mean) << i;
    EXPECT_NEAR(result.summary[i].sd, 0.75, 0.05) << i;
    EXPECT_LT(result.summary[i].rhat, 1.01) << i;
  }
  EXPECT_NEAR(result.sampling_stats.mean_accept_prob(), config.target_accept, 0.1);
}

TEST(CudaChmcBackend, ValidatesArgumentsAndNamesTheDevice) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const test_generators::TestSphere sphere;
  EXPECT_THROW(make_cuda(sphere, 0), invalid_argument);
  auto cuda = make_cuda(sphere, 10);
  EXPECT_NE(cuda->device_name().find("(sm_"), std::string::npos) << cuda->device_name();
  EXPECT_EQ(cuda->input_dim(), 4);
  EXPECT_THROW(cuda->initialize(1, 10, 0), invalid_argument);
  EXPECT_THROW(cuda->run(test_settings(0.5), 0, -1, nullptr, 0, 0), invalid_argument);
  // Zero iterations: no transitions, nothing delivered, nothing moved.
  ASSERT_EQ(cuda->initialize(1, 10, 1), 0);
  const std::vector<double> before = cuda->positions();
  RecordingSink sink(10, 4, 0);
  const IterationStats stats = cuda->run(test_settings(0.5), 0, 0, &sink, 0, 8);
  EXPECT_EQ(stats.transitions, 0);
  EXPECT_EQ(stats.newton_iterations, 0);
  EXPECT_TRUE(sink.chunk_sizes.empty());
  EXPECT_EQ(cuda->positions(), before);
}

TEST(CudaChmcBackend, TooManyChainsForDeviceMemoryIsAClearError) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // ~570 bytes per chain of TestSphere × (2^32 − 1) chains ≈ 2.4 TB: more than any device has.
  const test_generators::TestSphere sphere;
  try {
    make_cuda(sphere, 0xFFFFFFFFll);
    ADD_FAILURE() << "expected myriad::invalid_argument";
  } catch (const invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("bytes per chain"), std::string::npos) << message;
    EXPECT_NE(message.find("use fewer chains"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace myriad
