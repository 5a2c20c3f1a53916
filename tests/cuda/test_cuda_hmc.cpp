// The CUDA backend against the CPU backend (DESIGN.md, rule 1: one per-chain code path).
// Compiled by the host compiler: it reaches the CUDA backend through make_cuda_hmc_backend, which
// the library instantiates for the built-in models. Every test skips without a CUDA device.
// What "agree" means, and the tolerances: tests/common/hmc_agreement.hpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/cuda_skip.hpp"
#include "common/hmc_agreement.hpp"
#include "common/hmc_test_models.hpp"
#include "common/recording_sink.hpp"
#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/models/builtin.hpp"

namespace myriad {
namespace {

using testing::close;
using testing::expect_hmc_backends_agree;
using testing::kAllowedFlippedChains;
using testing::kPositionTolerance;
using testing::RecordingSink;
using testing::test_settings;

/// The CPU backend (one chain at a time) against the CUDA backend: expect_hmc_backends_agree.
template <class T, class Model>
void expect_backends_agree(const Model& cpu_model, const Model& cuda_model, std::int64_t chains,
                           const std::string& what, std::int64_t chains_per_init = 1) {
  SCOPED_TRACE(what + ", chains = " + std::to_string(chains));
  auto cpu = make_cpu_hmc_backend<Model, T>(cpu_model, chains, /*simd_lanes=*/false);
  auto cuda = make_cuda_hmc_backend<Model, T>(cuda_model, chains);
  expect_hmc_backends_agree<T>(cpu_model, cpu.get(), cuda.get(), chains, chains_per_init);
}

template <class T>
class CudaHmc : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaHmc, Precisions);

TYPED_TEST(CudaHmc, GaussianAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  const auto model = models::Gaussian<T>::make(5, 0.5, 1.0, 2.0);
  // One chain, a count that is not a multiple of 32 (exercises the stride padding), and a few
  // warps with a partial last one.
  for (std::int64_t chains : {1, 33, 257})
    expect_backends_agree<T>(model, model, chains, "gaussian");
}

TYPED_TEST(CudaHmc, SuperchainsShareInitialPointsLikeTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  const auto model = models::Gaussian<T>::make(3, 0.2);
  expect_backends_agree<T>(model, model, 70, "gaussian, 8 chains per initial point", 8);
}

TYPED_TEST(CudaHmc, FunnelAndEightSchoolsAgreeWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  expect_backends_agree<T>(models::Funnel<T>::make(4), models::Funnel<T>::make(4), 65, "funnel");
  expect_backends_agree<T>(models::EightSchools<T>::make(), models::EightSchools<T>::make(), 65,
                           "eight_schools");
}

TYPED_TEST(CudaHmc, ModelWithoutGradientAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // The gradient by vector-mode duals inside the kernel (two chunked passes for D = 9).
  const testing::CoupledSkewNormals model;
  expect_backends_agree<T>(model, model, 65, "coupled skew normals, gradient by duals");
}

TYPED_TEST(CudaHmc, LogisticWithDeviceDataAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // Small n: a float log density summed over n terms carries ~n ulp of error, which would make
  // decision flips likely at the CLI's n = 1000.
  auto data = models::LogisticData<T>::synthetic(40, 3, 7);
  expect_backends_agree<T>(data.host_model(T(10)), data.device_model(T(10)), 96, "logistic");
}

TYPED_TEST(CudaHmc, ChunkingDoesNotChangeResults) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  const auto model = models::Gaussian<T>::make(4, 0.3);
  const std::int64_t chains = 100;
  const int iterations = 10;
  const HmcSettings<T> settings = test_settings<T>(5);
  std::vector<std::vector<T>> draws, positions;
  std::vector<IterationStats> stats;
  for (int chunk : {0, 1, 3, 10, 64}) {
    SCOPED_TRACE("chunk_iterations = " + std::to_string(chunk));
    auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
    ASSERT_EQ(cuda->initialize(5, T(2), 100, 1), 0);
    RecordingSink<T> sink(chains, cuda->num_quantities(), 100);
    // Two calls, as the scheduler makes them: iteration numbering continues across calls.
    stats.push_back(cuda->run(settings, 0, 4, &sink, 100, chunk, nullptr));
    stats.back() += cuda->run(settings, 4, iterations - 4, &sink, 104, chunk, nullptr);
    const int expected_chunks =
        chunk <= 0 ? 2 : (4 + chunk - 1) / chunk + (iterations - 4 + chunk - 1) / chunk;
    EXPECT_EQ(static_cast<int>(sink.chunk_sizes.size()), expected_chunks);
    draws.push_back(sink.values());
    positions.push_back(cuda->positions());
  }
  for (std::size_t k = 1; k < draws.size(); ++k) {
    EXPECT_EQ(draws[k], draws[0]) << "recorded draws depend on the chunk size";
    EXPECT_EQ(positions[k], positions[0]);
    EXPECT_EQ(stats[k].accepted, stats[0].accepted);
    EXPECT_EQ(stats[k].divergent, stats[0].divergent);
    EXPECT_EQ(stats[k].gradient_evaluations, stats[0].gradient_evaluations);
    // Fixed-point acceptance sums are integers: exact whatever the chunking and grid.
    EXPECT_EQ(stats[k].accept_prob_fixed, stats[0].accept_prob_fixed);
  }
}

TYPED_TEST(CudaHmc, CopyChainsAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // A warm-up restart (HmcBackend::copy_chains) moves chains 3, 40 and 99 onto others' points.
  // On each backend a copied chain holds its source's values bit for bit; across backends the
  // states agree as the other agreement tests' do (kPositionTolerance: libm and FMA rounding),
  // and so do the iterations after the copy (up to kAllowedFlippedChains decision flips).
  const auto model = models::Gaussian<T>::make(5, 0.3);
  const std::int64_t chains = 100;
  auto cpu = make_cpu_hmc_backend<models::Gaussian<T>, T>(model, chains);
  auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
  ASSERT_EQ(cpu->initialize(13, T(2), 100, 1), 0);
  ASSERT_EQ(cuda->initialize(13, T(2), 100, 1), 0);
  std::vector<std::int64_t> source(static_cast<std::size_t>(chains));
  for (std::int64_t c = 0; c < chains; ++c) source[c] = c;
  source[3] = 7;
  source[40] = 7;
  source[99] = 0;
  cpu->copy_chains(source);
  cuda->copy_chains(source);
  for (auto* backend : {cpu.get(), cuda.get()}) {
    const std::vector<T> x = backend->positions(), lp = backend->log_densities();
    for (const std::int64_t c : {3, 40, 99}) {
      EXPECT_EQ(lp[c], lp[source[c]]) << backend->device_name() << ", chain " << c;
      for (int d = 0; d < 5; ++d)
        EXPECT_EQ(x[d * chains + c], x[d * chains + source[c]]) << backend->device_name();
    }
  }
  const auto expect_close_states = [&](int allowed_apart) {
    const std::vector<T> a = cpu->positions(), b = cuda->positions();
    const std::vector<T> la = cpu->log_densities(), lb = cuda->log_densities();
    int apart = 0;
    for (std::int64_t c = 0; c < chains; ++c) {
      bool same = close(la[c], lb[c], kPositionTolerance<T>);
      for (int d = 0; d < 5; ++d)
        same = same && close(a[d * chains + c], b[d * chains + c], kPositionTolerance<T>);
      apart += same ? 0 : 1;
    }
    EXPECT_LE(apart, allowed_apart);
  };
  expect_close_states(0);
  const HmcSettings<T> settings = test_settings<T>(13);
  const IterationStats a = cpu->run(settings, 0, 3, nullptr, 0, 0, nullptr);
  const IterationStats b = cuda->run(settings, 0, 3, nullptr, 0, 0, nullptr);
  expect_close_states(kAllowedFlippedChains<T>);
  EXPECT_LE(std::abs(b.accepted - a.accepted), 3 * kAllowedFlippedChains<T>);
}

TYPED_TEST(CudaHmc, RunWithCriterionAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // A ChEES and a SNAPER warm-up iteration (HmcBackend::run_with_criterion) on both backends,
  // with the quasi-random jitter: the same transitions (as run's agreement tests), and sums of
  // the per-chain terms that agree to the terms' rounding (each chain's terms are products of
  // positions that agree within kPositionTolerance; the sums' orders differ).
  const auto model = models::Gaussian<T>::make(5, 0.3);
  const std::int64_t chains = 300;  // not a multiple of 32: the stride's padding is skipped
  auto cpu = make_cpu_hmc_backend<models::Gaussian<T>, T>(model, chains);
  auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
  ASSERT_EQ(cpu->initialize(17, T(2), 100, 1), 0);
  ASSERT_EQ(cuda->initialize(17, T(2), 100, 1), 0);
  HmcSettings<T> settings = test_settings<T>(17);
  settings.jitter = T(1);
  settings.quasi_random_jitter = true;
  for (const TrajectoryCriterion criterion :
       {TrajectoryCriterion::chees, TrajectoryCriterion::snaper}) {
    CriterionRequest<T> request;
    request.criterion = criterion;
    request.centre = {T(0.1), T(-0.2), T(0), T(0.3), T(0.05)};
    request.direction = {T(0.6), T(0), T(0.8), T(0), T(0)};
    std::vector<double> sums_cpu, sums_cuda;
    EnsembleMoments moments_cpu, moments_cuda;
    const std::uint32_t iteration = criterion == TrajectoryCriterion::chees ? 0 : 1;
    const IterationStats a =
        cpu->run_with_criterion(settings, iteration, request, sums_cpu, moments_cpu);
    const IterationStats b =
        cuda->run_with_criterion(settings, iteration, request, sums_cuda, moments_cuda);
    EXPECT_LE(std::abs(b.accepted - a.accepted), kAllowedFlippedChains<T>);
    EXPECT_EQ(a.gradient_evaluations, b.gradient_evaluations);
    ASSERT_EQ(sums_cpu.size(), sums_cuda.size());
    ASSERT_EQ(static_cast<int>(sums_cpu.size()), criterion_term_count(criterion, 5));
    // Relative: ~10³ times the positions' tolerance in double; in float, where a flipped
    // decision (kAllowedFlippedChains) changes one chain's terms by O(1), 1% and an absolute 20.
    const bool single = std::is_same_v<T, float>;
    const double relative = single ? 1e-2 : 1e3 * kPositionTolerance<double>;
    for (std::size_t r = 0; r < sums_cpu.size(); ++r) {
      EXPECT_NEAR(sums_cuda[r], sums_cpu[r],
                  (single ? 20.0 : 0.0) + relative * (1 + std::abs(sums_cpu[r])))
          << "criterion " << static_cast<int>(criterion) << ", row " << r;
    }
    for (int d = 0; d < 5; ++d)
      EXPECT_NEAR(moments_cuda.mean[d], moments_cpu.mean[d], 1e-3 + kPositionTolerance<T>);
  }
}

TYPED_TEST(CudaHmc, SetPositionsAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // Given initial points (HmcBackend::set_positions, SampleConfig::initial_positions): both
  // backends hold exactly the given points, with log densities that agree to rounding.
  const auto model = models::Gaussian<T>::make(4, 0.3);
  const std::int64_t chains = 70;
  auto cpu = make_cpu_hmc_backend<models::Gaussian<T>, T>(model, chains);
  auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
  std::vector<T> points(static_cast<std::size_t>(4 * chains));
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = T(0.01) * T(i % 97) - T(0.4);
  EXPECT_EQ(cpu->set_positions(points), 0);
  EXPECT_EQ(cuda->set_positions(points), 0);
  EXPECT_EQ(cpu->positions(), points);
  EXPECT_EQ(cuda->positions(), points);
  const std::vector<T> a = cpu->log_densities(), b = cuda->log_densities();
  for (std::int64_t c = 0; c < chains; ++c)
    EXPECT_TRUE(close(a[c], b[c], kPositionTolerance<T>)) << c << ": " << a[c] << " " << b[c];
}

TYPED_TEST(CudaHmc, PositionCovarianceAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // The dense metric's window statistics (kernels/ensemble_covariance.cuh): 37 dimensions leave
  // partial 16 × 16 tiles; 70 chains make one slice, 9000 three (the last one partial). Both
  // backends sum in double, in different orders: they agree to rounding, and the device's matrix
  // is exactly symmetric.
  const int dim = 37;
  const auto model = models::Gaussian<T>::make(dim, 0.3);
  for (std::int64_t chains : {70, 9000}) {
    auto cpu = make_cpu_hmc_backend<models::Gaussian<T>, T>(model, chains);
    auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
    std::vector<T> points(static_cast<std::size_t>(dim * chains));
    for (std::size_t i = 0; i < points.size(); ++i)
      points[i] = T(0.01) * T((i * 7919) % 211) - T(1.0) + T(0.001) * T(i / chains);
    ASSERT_EQ(cpu->set_positions(points), 0);
    ASSERT_EQ(cuda->set_positions(points), 0);
    EnsembleCovariance a, b;
    cpu->position_covariance(a);
    cuda->position_covariance(b);
    ASSERT_EQ(b.count, chains);
    ASSERT_EQ(b.mean.size(), a.mean.size());
    ASSERT_EQ(b.scatter.size(), a.scatter.size());
    for (int i = 0; i < dim; ++i) EXPECT_TRUE(close(a.mean[i], b.mean[i], 1e-12)) << i;
    for (int i = 0; i < dim; ++i) {
      for (int j = 0; j < dim; ++j) {
        const std::size_t e = static_cast<std::size_t>(i) * dim + j;
        EXPECT_TRUE(close(a.scatter[e], b.scatter[e], 1e-11))
            << chains << " chains, (" << i << ", " << j << "): " << a.scatter[e] << " "
            << b.scatter[e];
        EXPECT_EQ(b.scatter[e], b.scatter[static_cast<std::size_t>(j) * dim + i]);
      }
    }
  }
}

TYPED_TEST(CudaHmc, ChainCountDoesNotChangeAChainsResult) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // A different chain count changes the grid (and the stride); chain c's draws must not change.
  const auto model = models::Gaussian<T>::make(3, 0.4);
  const HmcSettings<T> settings = test_settings<T>(11);
  std::vector<std::vector<T>> first_chain;
  for (std::int64_t chains : {1, 31, 32, 1000, 40000}) {
    auto cuda = make_cuda_hmc_backend<models::Gaussian<T>, T>(model, chains);
    ASSERT_EQ(cuda->initialize(11, T(2), 100, 1), 0);
    RecordingSink<T> sink(chains, 3, 0);
    cuda->run(settings, 0, 6, &sink, 0, 4, nullptr);
    std::vector<T> mine;
    for (int i = 0; i < 6; ++i)
      for (int q = 0; q < 3; ++q) mine.push_back(sink.at(i, q, 0));
    first_chain.push_back(mine);
  }
  for (std::size_t k = 1; k < first_chain.size(); ++k) EXPECT_EQ(first_chain[k], first_chain[0]);
}

TYPED_TEST(CudaHmc, DivergencesAndNonFiniteTrajectoriesAreCountedLikeTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using T = TypeParam;
  // The funnel with a huge step: e^{−v} overflows along the trajectory (non-finite) or the
  // energy error explodes (divergent). Both backends must count the same chains.
  const auto model = models::Funnel<T>::make(6);
  const std::int64_t chains = 200;
  auto cpu = make_cpu_hmc_backend<models::Funnel<T>, T>(model, chains);
  auto cuda = make_cuda_hmc_backend<models::Funnel<T>, T>(model, chains);
  cpu->initialize(3, T(2), 100, 1);
  cuda->initialize(3, T(2), 100, 1);
  HmcSettings<T> settings = test_settings<T>(3);
  settings.step_size = T(4);
  settings.max_leapfrog_steps = 4;
  const IterationStats a = cpu->run(settings, 0, 1, nullptr, 0, 0, nullptr);
  const IterationStats b = cuda->run(settings, 0, 1, nullptr, 0, 0, nullptr);
  EXPECT_GT(a.divergent, 0);
  EXPECT_EQ(b.divergent, a.divergent);
  EXPECT_EQ(b.non_finite, a.non_finite);
  EXPECT_EQ(b.gradient_evaluations, a.gradient_evaluations);
  EXPECT_EQ(b.transitions, a.transitions);
}

/// NUTS (mcmc/nuts.hpp) in nuts_iterations_kernel against the CPU backend's loop, with a diagonal
/// and a dense metric, in double precision: the trees' directions and leaf choices come from the
/// same keyed streams, so each chain builds the same trees unless rounding (~1e-15 relative)
/// turns a U-turn check or a leaf choice, which these few transitions do not. The lockstep
/// count is the real warps' on the GPU (warp_max) and the CPU's groups of 32 chains: equal.
TEST(CudaNuts, AgreesWithCpuWithDiagonalAndDenseMetrics) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  using Model = models::Gaussian<double>;
  const auto model = Model::make(4, 0.6, 1.0, 2.0);
  const std::int64_t chains = 70;  // two full warps and a partial one
  const std::vector<std::vector<double>> metrics = {
      {0.75, 1.0, 1.25, 0.9},
      {2.0, 0.6, -0.3, 0.1, 0.6, 1.0, 0.2, 0.0, -0.3, 0.2, 0.5, 0.05, 0.1, 0.0, 0.05, 0.8}};
  for (const std::vector<double>& metric : metrics) {
    SCOPED_TRACE(metric.size() == 4 ? "diagonal metric" : "dense metric");
    auto cpu = make_cpu_hmc_backend<Model, double>(model, chains);
    auto cuda = make_cuda_hmc_backend<Model, double>(model, chains);
    ASSERT_EQ(cpu->initialize(9, 2.0, 100, 1), 0);
    ASSERT_EQ(cuda->initialize(9, 2.0, 100, 1), 0);
    cpu->set_inverse_metric(metric);
    cuda->set_inverse_metric(metric);
    HmcSettings<double> settings = test_settings<double>(9);
    settings.step_size = 0.3;
    settings.max_tree_depth = 6;
    RecordingSink<double> cpu_draws(chains, 4, 0), cuda_draws(chains, 4, 0);
    const IterationStats a = cpu->run(settings, 0, 4, &cpu_draws, 0, 2, nullptr);
    const IterationStats b = cuda->run(settings, 0, 4, &cuda_draws, 0, 2, nullptr);
    EXPECT_EQ(b.transitions, a.transitions);
    EXPECT_EQ(b.accepted, a.accepted);
    EXPECT_EQ(b.gradient_evaluations, a.gradient_evaluations);
    EXPECT_EQ(b.tree_depth_sum, a.tree_depth_sum);
    EXPECT_EQ(b.tree_depth_max, a.tree_depth_max);
    EXPECT_EQ(b.tree_depth_capped, a.tree_depth_capped);
    EXPECT_EQ(b.lockstep_gradient_evaluations, a.lockstep_gradient_evaluations);
    EXPECT_GT(a.lockstep_gradient_evaluations, a.gradient_evaluations);
    EXPECT_NEAR(b.accept_prob_sum(), a.accept_prob_sum(), 1e-6 * a.transitions);
    int mismatches = 0;
    for (int i = 0; i < 4; ++i)
      for (int q = 0; q < 4; ++q)
        for (std::int64_t c = 0; c < chains; ++c)
          if (!close(cpu_draws.at(i, q, c), cuda_draws.at(i, q, c), kPositionTolerance<double>) &&
              ++mismatches <= 5)
            ADD_FAILURE() << "draw " << i << ", quantity " << q << ", chain " << c;
    EXPECT_EQ(mismatches, 0);
  }
}

/// Every backend refuses the same invalid arguments with invalid_argument (the CPU backend here
/// on any machine, the CUDA one where a device is present). Until both took their checks from
/// detail/hmc_chain_bodies.hpp, the CUDA backend accepted an infinite inverse-metric entry
/// that the CPU backend refused.
TEST(HmcBackends, EveryBackendRefusesTheSameInvalidArguments) {
  using Model = models::Gaussian<double>;
  const auto model = Model::make(3, 0.2);
  std::vector<std::pair<std::string, std::function<std::unique_ptr<HmcBackend<double>>(
                                         std::int64_t)>>>
      backends = {{"cpu", [&](std::int64_t chains) {
                     return make_cpu_hmc_backend<Model, double>(model, chains);
                   }}};
  if (cuda_device_available()) {
    backends.push_back({"cuda", [&](std::int64_t chains) {
                          return make_cuda_hmc_backend<Model, double>(model, chains);
                        }});
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> bad_metrics = {
      {1.0, 1.0},
      {1.0, 0.0, 1.0},
      {1.0, -1.0, 1.0},
      {1.0, inf, 1.0},
      {1.0, std::nan(""), 1.0},
      {1.0, 0.5, 0.0, 0.4, 1.0, 0.0, 0.0, 0.0, 1.0},   // dense, not symmetric
      {1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0}};  // dense, not positive definite
  for (const auto& [name, make] : backends) {
    SCOPED_TRACE(name);
    EXPECT_THROW(make(0), invalid_argument);
    EXPECT_THROW(make(std::int64_t{1} << 32), invalid_argument);
    auto backend = make(10);
    for (const std::vector<double>& metric : bad_metrics)
      EXPECT_THROW(backend->set_inverse_metric(metric), invalid_argument) << metric[1];
    EXPECT_NO_THROW(backend->set_inverse_metric({1.0, 2.0, 0.5}));
    EXPECT_NO_THROW(backend->set_inverse_metric({1.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0}));
    EXPECT_THROW(backend->initialize(1, 2.0, 10, 0), invalid_argument);
    EXPECT_THROW(backend->run(test_settings<double>(1), 0, -1, nullptr, 0, 0, nullptr),
                 invalid_argument);
    HmcSettings<double> too_deep = test_settings<double>(1);
    too_deep.max_tree_depth = kLargestMaxTreeDepth + 1;
    EXPECT_THROW(backend->run(too_deep, 0, 1, nullptr, 0, 0, nullptr), invalid_argument);
    std::vector<std::int64_t> source(10);
    for (std::int64_t c = 0; c < 10; ++c) source[c] = c;
    EXPECT_THROW(backend->copy_chains(std::vector<std::int64_t>(9, 0)), invalid_argument);
    for (const std::int64_t bad : {std::int64_t{-1}, std::int64_t{10}}) {
      auto out_of_range = source;
      out_of_range[3] = bad;
      EXPECT_THROW(backend->copy_chains(out_of_range), invalid_argument) << bad;
    }
    auto moving_source = source;  // chain 3 copies chain 4, which itself copies chain 5
    moving_source[3] = 4;
    moving_source[4] = 5;
    EXPECT_THROW(backend->copy_chains(moving_source), invalid_argument);
    EXPECT_NO_THROW(backend->copy_chains(source));
    EXPECT_THROW(backend->set_positions(std::vector<double>(29, 0.0)), invalid_argument);
    EXPECT_EQ(backend->set_positions(std::vector<double>(30, 0.5)), 0);
  }
}

TEST(CudaHmcBackend, NamesTheDeviceAndZeroIterationsDoNothing) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const auto model = models::Gaussian<double>::make(2, 0.0);
  auto cuda = make_cuda_hmc_backend<models::Gaussian<double>, double>(model, 64);
  EXPECT_NE(cuda->device_name().find("(sm_"), std::string::npos) << cuda->device_name();
  cuda->initialize(2, 2.0, 10, 1);
  const std::vector<double> before = cuda->positions();
  RecordingSink<double> sink(64, 2, 0);
  EnsembleMoments moments;
  const IterationStats stats = cuda->run(test_settings<double>(2), 0, 0, &sink, 0, 8, &moments);
  EXPECT_EQ(stats.transitions, 0);
  EXPECT_EQ(stats.gradient_evaluations, 0);
  EXPECT_TRUE(sink.chunk_sizes.empty());
  EXPECT_EQ(cuda->positions(), before);
  EXPECT_EQ(moments.count, 64);
}

}  // namespace
}  // namespace myriad
