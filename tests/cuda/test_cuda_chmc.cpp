// The CUDA constrained-HMC backend against the CPU backend (DESIGN.md, rule 1: one per-chain code
// path). Compiled by the host compiler: the generators defined in tests/common/test_generators.hpp
// reach CUDA through make_cuda_chmc_backend, instantiated in tests/cuda/chmc_test_generators.cu
// (CUDA builds only), the built-in ones through the library's instantiations. Every test skips
// without a CUDA device.
//
// What "agree" means, and why the tolerances are what they are: tests/common/chmc_agreement.hpp,
// which the FMA experiment on the CPU (tests/unit/test_chmc_fma_agreement.cpp) shares. In
// addition here: launch configuration and chunking change nothing on one device: each chain's
// arithmetic is the same code in the same order whatever the grid, so fused, chunked and
// one-iteration runs are bit-identical, and so are the statistics (integers; acceptance in 2^-32
// fixed point).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/chmc_agreement.hpp"
#include "common/cuda_skip.hpp"
#include "common/test_generators.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_generators.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {
namespace {

using testing::Agreement;
using testing::ChmcRecording;
using testing::expect_recordings_agree;
using testing::kInitialTolerance;
using testing::kLotkaVolterraInitialTolerance;
using testing::record_chmc;
using RecordingSink = testing::RecordingSink<double>;
using testing::small_lotka_volterra;
using testing::test_settings;

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

/// Runs `reference` (the CPU backend) and `candidate` (the CUDA backend) from the same seed, one
/// iteration per run() call, and compares them (testing::expect_recordings_agree). Then runs a
/// fresh candidate over all iterations in one call with chunks of two and requires bit-identical
/// draws, positions and totals.
Agreement expect_backends_agree(const BackendFactory& make_reference,
                                const BackendFactory& make_candidate,
                                const ChmcSettings<double>& settings, int iterations,
                                std::int64_t chains_per_init, const std::string& what,
                                double initial_tolerance = kInitialTolerance) {
  SCOPED_TRACE(what);
  auto reference = make_reference();
  auto candidate = make_candidate();
  EXPECT_EQ(candidate->quantity_names(), reference->quantity_names());
  const ChmcRecording r = record_chmc(*reference, settings, iterations, chains_per_init);
  const ChmcRecording c = record_chmc(*candidate, settings, iterations, chains_per_init);
  const Agreement result = expect_recordings_agree(r, c, settings, what, initial_tolerance);
  const std::int64_t chains = c.chains;
  const int quantities = c.quantities;
  const std::vector<double>& candidate_last = iterations > 0 ? c.positions.back() : c.initial;

  // The candidate again, fused over all iterations in chunks of two: the same bits.
  auto fused = make_candidate();
  fused->initialize(settings.seed, 10, chains_per_init);
  RecordingSink fused_draws(chains, quantities, 100);
  const IterationStats f = fused->run(settings, 0, iterations, &fused_draws, 100, 2);
  std::vector<int> expected_chunks(static_cast<std::size_t>(iterations / 2), 2);
  if (iterations % 2 != 0) expected_chunks.push_back(1);
  EXPECT_EQ(fused_draws.chunk_sizes, expected_chunks);
  EXPECT_EQ(fused_draws.values(), c.draws) << "recorded draws depend on the chunk size";
  EXPECT_EQ(fused->positions(), candidate_last);
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
      [&] { return make_cpu_chmc_backend<Generator, double>(cpu_generator, chains, false); },
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
  // The library's instantiation (kernels/builtin_instances.cmake), analytic prior gradient.
  const auto sphere = models::Sphere::make(5, 1.0);
  const Agreement a =
      expect_cpu_and_cuda_agree(sphere, sphere, 2000, test_settings(1.0), 5, 1, "built-in sphere");
  EXPECT_GT(a.reference_total.accepted, 0);
  const auto noisy = models::Noisy<models::Sphere>::make(sphere, 0.5);
  expect_cpu_and_cuda_agree(noisy, noisy, 300, test_settings(0.5), 4, 1, "noisy sphere");
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

/// Restarts chains 5, 6 and chains − 1 from chains 0 and 1 on a backend run `iterations`
/// iterations from `seed` with step back-off on, and returns (positions, log densities, step
/// halvings) after the copy. Each restarted chain's log density is its source's: bit for bit
/// when the chain re-evaluates with its transition's own factorisation, within 1e-12 relative
/// when the transitions factor in a batch (tile, library) and the restart in the chain.
struct CopiedState {
  std::vector<double> positions, log_densities;
  std::vector<std::uint8_t> halvings;
};
CopiedState copy_after(ChmcBackend<double>& backend, std::int64_t chains, double step,
                       int iterations) {
  EXPECT_EQ(backend.initialize(9, 10, 1), 0);
  ChmcSettings<double> settings = test_settings(step);
  settings.step_back_off = true;
  backend.run(settings, 0, iterations, nullptr, 0, 0);
  std::vector<std::int64_t> source(static_cast<std::size_t>(chains));
  for (std::int64_t c = 0; c < chains; ++c) source[c] = c;
  source[5] = 0;
  source[6] = 1;
  source[chains - 1] = 0;
  EXPECT_EQ(backend.copy_chains(source), 0);
  CopiedState out{backend.positions(), backend.log_densities(), backend.step_halvings()};
  for (std::int64_t c : {std::int64_t{5}, std::int64_t{6}, chains - 1}) {
    const std::int64_t s = source[c];
    EXPECT_NEAR(out.log_densities[c], out.log_densities[s], 1e-12 * std::fabs(out.log_densities[s]))
        << "chain " << c;
    EXPECT_EQ(out.halvings[c], out.halvings[s]) << "chain " << c;
    for (int d = 0; d < backend.input_dim(); ++d)
      EXPECT_EQ(out.positions[d * chains + c], out.positions[d * chains + s]) << "chain " << c;
  }
  // The restarted chains then run as any other.
  const IterationStats after = backend.run(settings, iterations, 2, nullptr, 0, 0);
  EXPECT_GT(after.accepted, 0);
  return out;
}

TEST(CudaChmc, CopyChainsAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  // A warm-up restart (ChmcBackend::copy_chains) under both chain mappings, a batched Gram
  // factorisation and a structured Gram, after one transition: the copied states are the CPU's
  // within kPositionTolerance (common/chmc_agreement.hpp: rounding amplified by one transition),
  // the back-offs exactly.
  auto linear = models::LinearGaussianProblem::make(18, 23, 5);
  auto problem = small_lotka_volterra();
  const test_generators::TestSphere sphere;
  struct Case {
    std::function<std::unique_ptr<ChmcBackend<double>>()> cpu, cuda;
    double step;
    const char* what;
  };
  const std::int64_t chains = 40;
  const std::vector<Case> cases = {
      {[&] {
         return make_cpu_chmc_backend<test_generators::TestSphere, double>(sphere, chains, false);
       },
       [&] { return make_cuda(sphere, chains, ChmcChainMapping::thread); }, 1.6, "sphere, thread"},
      {[&] {
         return make_cpu_chmc_backend<test_generators::TestSphere, double>(sphere, chains, false);
       },
       [&] {
         return make_cuda(sphere, chains,
                          ChmcCudaOptions(ChmcChainMapping::thread, GramFactorization::library));
       },
       1.6, "sphere, thread, library Gram"},
      {[&] {
         return make_cpu_chmc_backend<models::LinearGaussian, double>(linear.host_model(), chains,
                                                                      false);
       },
       [&] { return make_cuda(linear.device_model(), chains, ChmcChainMapping::warp); }, 0.5,
       "linear_gaussian M = 18, warp"},
      {[&] {
         return make_cpu_chmc_backend<models::LotkaVolterra, double>(problem.host_model(), chains,
                                                                     false);
       },
       [&] { return make_cuda(problem.device_model(), chains); }, 0.2, "lotka_volterra"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto cpu = c.cpu();
    auto cuda = c.cuda();
    const CopiedState a = copy_after(*cpu, chains, c.step, 1);
    const CopiedState b = copy_after(*cuda, chains, c.step, 1);
    ASSERT_EQ(a.positions.size(), b.positions.size());
    for (std::size_t i = 0; i < a.positions.size(); ++i)
      EXPECT_NEAR(b.positions[i], a.positions[i],
                  testing::kPositionTolerance * std::max(1.0, std::fabs(a.positions[i])));
    EXPECT_EQ(b.halvings, a.halvings);
  }
}

TEST(CudaChmc, SampleChmcRunsABuiltinGeneratorOnCuda) {
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
  const SampleResult result = sample_chmc(sphere, config);
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
