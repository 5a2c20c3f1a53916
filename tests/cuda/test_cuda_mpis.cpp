// The CUDA MP IS backend against the CPU one (DESIGN.md rule 1: one per-element code path).
// Compiled by the host compiler: it reaches the CUDA engine through make_cuda_mpis_backend, which
// the library instantiates for the built-in plated models (kernels/builtin_instances.cmake). Every
// test skips without a CUDA device.
//
// What "agree" means:
//  * Both backends draw the same particles: Philox keyed by (seed, run) with counters (latent,
//    instance, particle), Fisher–Yates permutations by the same uniforms. Particle values agree
//    to a few ulp: Box–Muller's log/sin/cos and the proposals' exp differ between libdevice and
//    glibc by an ulp or two, and nvcc contracts multiply-adds into FMAs.
//  * Log-factor entries then agree to ~10 ulp of their magnitude. A contraction step sums ≤ K^c
//    shifted exponentials; its LSE is Lipschitz 1 in every input, so the error of log P̂ is
//    bounded by the error of the factors times the depth of the plan (≤ 20 steps here):
//    ~10³ ulp relative. kTolerance = 1e-10 relative to max(1, |log P̂|) leaves a margin of ~500.
//  * Marginal weights are probabilities: the same argument bounds their difference by 1e-10.
//  * A posterior draw differs only when its uniform lands within the rounding error (~1e-12) of
//    a CDF boundary: over the ~10⁵ draws compared, at most a handful (kAllowedDrawFlips) may.
//  * Every contraction path (generic, tiled, cuBLAS; --contraction) gives the same answer to
//    the same tolerance: the tiled kernel's per-chunk rescaling and cuBLAS's summation order
//    change rounding only, and the cuBLAS path recomputes any underflowing output exactly.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/cuda_skip.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/models/builtin_plated.hpp"
#include "myriad/run/mpis.hpp"

namespace myriad {
namespace {

constexpr double kTolerance = 1e-10;
constexpr double kAllowedDrawFlips = 5;

MpisConfig config_on(Device device, std::int64_t k, int runs) {
  MpisConfig c;
  c.k = k;
  c.runs = runs;
  c.samples = 200;
  c.seed = 17;
  c.device = device;
  c.keep_weights = true;
  return c;
}

/// Runs `data` on the CPU and on CUDA (with `cuda` settings applied) and compares everything.
template <class Data, class Adjust>
void expect_cuda_matches_cpu(Data& data, std::int64_t k, int runs, Adjust adjust) {
  MpisConfig cpu = config_on(Device::cpu, k, runs), cuda = config_on(Device::cuda, k, runs);
  adjust(cuda);
  const MpisResult a = mpis(data.host_model(), cpu);
  const MpisResult b = mpis(data.device_model(), cuda);
  EXPECT_EQ(b.device.substr(0, 4), "cuda");
  ASSERT_EQ(a.log_marginal.size(), b.log_marginal.size());
  for (std::size_t r = 0; r < a.log_marginal.size(); ++r)
    EXPECT_NEAR(b.log_marginal[r], a.log_marginal[r],
                kTolerance * std::max(1.0, std::abs(a.log_marginal[r])))
        << "run " << r;
  EXPECT_EQ(b.nonfinite_entries, a.nonfinite_entries);
  EXPECT_EQ(b.failed_runs, a.failed_runs);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (std::size_t i = 0; i < a.weights.size(); ++i) {
    EXPECT_NEAR(b.weights[i], a.weights[i], kTolerance) << "weight " << i;
    EXPECT_NEAR(b.particles[i], a.particles[i], 1e-12 * std::max(1.0, std::abs(a.particles[i])))
        << "particle " << i;
  }
  ASSERT_EQ(a.draws.size(), b.draws.size());
  std::size_t flips = 0;
  for (std::size_t i = 0; i < a.draws.size(); ++i)
    if (std::abs(a.draws[i] - b.draws[i]) > 1e-12 * std::max(1.0, std::abs(a.draws[i]))) ++flips;
  EXPECT_LE(flips, kAllowedDrawFlips) << "of " << a.draws.size() << " draws";
}

TEST(CudaMpis, ConjugateModelsAgreeWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  for (bool mixture : {false, true}) {
    auto hierarchical = models::HierarchicalGaussianData::synthetic(20, 5, 1, 1, 1, mixture, 1);
    expect_cuda_matches_cpu(hierarchical, 50, 4, [](MpisConfig&) {});
    auto chain = models::GaussianChainData::synthetic(13, 0.9, 0.5, 0.5, 1, mixture, 1);
    expect_cuda_matches_cpu(chain, 20, 4, [](MpisConfig&) {});
  }
}

TEST(CudaMpis, PaperModelsAgreeWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  auto bus = models::BusBreakdownData::synthetic(1);
  expect_cuda_matches_cpu(bus, 6, 2, [](MpisConfig&) {});
  auto chimps = models::ChimpanzeesData::synthetic(1);
  expect_cuda_matches_cpu(chimps, 4, 2, [](MpisConfig&) {});
  auto movielens = models::MovieLensData::synthetic(1);
  expect_cuda_matches_cpu(movielens, 6, 2, [](MpisConfig&) {});
  auto occupancy = models::OccupancyData::synthetic(1);
  expect_cuda_matches_cpu(occupancy, 3, 2, [](MpisConfig&) {});
}

TEST(CudaMpis, EveryContractionPathAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  for (ContractionPath path : {ContractionPath::generic, ContractionPath::tiled,
                               ContractionPath::cublas, ContractionPath::automatic}) {
    SCOPED_TRACE(to_string(path));
    auto chain = models::GaussianChainData::synthetic(9, 0.9, 0.5, 0.5, 1, true, 2);
    expect_cuda_matches_cpu(chain, 40, 3, [path](MpisConfig& c) { c.contraction = path; });
    auto chimps = models::ChimpanzeesData::synthetic(2);
    expect_cuda_matches_cpu(chimps, 5, 1, [path](MpisConfig& c) { c.contraction = path; });
  }
}

TEST(CudaMpis, ChunkingAndBatchingAgreeWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  auto hierarchical = models::HierarchicalGaussianData::synthetic(9, 3, 1, 1, 1, true, 3);
  expect_cuda_matches_cpu(hierarchical, 30, 5, [](MpisConfig& c) {
    c.chunk_plate = "groups";
    c.chunk_size = 4;
    c.runs_per_batch = 2;
  });
}

TEST(CudaMpis, GlobalImportanceSamplingAgreesWithCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  auto data = models::HierarchicalGaussianData::synthetic(5, 3, 1, 1, 1, false, 4);
  MpisConfig config = config_on(Device::cpu, 5000, 3);
  config.keep_weights = false;
  config.method = MpisMethod::global;
  const MpisResult a = mpis(data.host_model(), config);
  config.device = Device::cuda;
  const MpisResult b = mpis(data.device_model(), config);
  for (std::size_t r = 0; r < a.log_marginal.size(); ++r)
    EXPECT_NEAR(b.log_marginal[r], a.log_marginal[r],
                kTolerance * std::max(1.0, std::abs(a.log_marginal[r])));
  for (std::size_t q = 0; q < a.summary.size(); ++q)
    EXPECT_NEAR(b.summary[q].mean, a.summary[q].mean, 1e-9) << a.names[q];
}

}  // namespace
}  // namespace myriad
