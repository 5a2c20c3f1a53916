// Checkpoints on the CUDA backend (docs/checkpoints.md): a run stopped in warm-up and in sampling
// and resumed from its checkpoints (the chains' positions, gradients and log densities copied off
// the device and back into its strided arrays) gives the uninterrupted CUDA run's draws bit for
// bit. Skips without a CUDA device.

#include <gtest/gtest.h>

#include "common/checkpoint_runs.hpp"
#include "common/cuda_skip.hpp"
#include "common/hmc_samplers.hpp"
#include "common/scratch_directory.hpp"
#include "myriad/models/builtin.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {
namespace {

class CudaCheckpointResume : public ::testing::TestWithParam<HmcSampler> {};

TEST_P(CudaCheckpointResume, ResumedRunIsTheUninterruptedRunBitForBit) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const testing::ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(4, 0.3);
  SampleConfig base = testing::checkpointed_config(GetParam(), scratch / "reference.npy");
  base.device = Device::cuda;
  base.chains = 100;  // not a multiple of a warp: the strided copies' padding
  const SampleResult reference = sample(model, base);
  EXPECT_NE(reference.device.find("sm_"), std::string::npos) << reference.device;

  SampleConfig config = testing::resumable_config(base, scratch);
  config.checkpoint.every = 40;
  int interruptions = 0;
  const SampleResult resumed = testing::run_with_stops(model, config, {30, 75, 3}, interruptions);
  EXPECT_EQ(interruptions, 3);
  EXPECT_TRUE(testing::same_draws_files(scratch));
  testing::expect_same_results(resumed, reference);
}

INSTANTIATE_TEST_SUITE_P(Samplers, CudaCheckpointResume,
                         ::testing::Values(HmcSampler::chees, HmcSampler::nuts),
                         testing::HmcSamplerName{});

TEST(CudaCheckpoint, ChmcResumedIsTheUninterruptedRunBitForBit) {
  // The CUDA backend's chain state is its device arrays as they are (u, the gradient, φ, the
  // back-offs, the workspace with each chain's Jacobian and Gram factor, the batched factors).
  MYRIAD_SKIP_WITHOUT_CUDA();
  const testing::ScratchDirectory scratch;
  auto problem = models::LinearGaussianProblem::make(3, 6, 1);
  ChmcConfig base = testing::checkpointed_chmc_config(scratch / "reference.npy");
  base.device = Device::cuda;
  base.chains = 100;
  const SampleResult reference = sample_chmc(problem.device_model(), base);
  ChmcConfig config = testing::resumable_config(base, scratch);
  config.checkpoint.every = 40;
  int interruptions = 0;
  const SampleResult resumed = testing::run_with_stops(
      config, {30, 75, 3}, interruptions,
      [&](const ChmcConfig& c) { return sample_chmc(problem.device_model(), c); });
  EXPECT_EQ(interruptions, 3);
  EXPECT_TRUE(testing::same_draws_files(scratch));
  testing::expect_same_results(resumed, reference);
}

}  // namespace
}  // namespace myriad
