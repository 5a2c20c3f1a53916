// Runs that survive (docs/checkpoints.md): a run stopped at any iteration and resumed from its
// checkpoint gives the uninterrupted run's draws and results bit for bit; the trace streamed to
// draws.npy is the trace held in memory; the memory plan refuses what would not fit and blocks
// the diagnostics that would not.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/checkpoint_runs.hpp"
#include "common/expect_error.hpp"
#include "common/hmc_samplers.hpp"
#include "common/run_configs.hpp"
#include "common/same_bits.hpp"
#include "common/scratch_directory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/draws_file.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/run/host_memory.hpp"
#include "myriad/run/sample.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {
namespace {

using testing::checkpointed_chmc_config;
using testing::checkpointed_config;
using testing::expect_same_results;
using testing::file_bytes;
using testing::resumable_config;
using testing::run_with_stops;
using testing::same_draws_files;
using testing::ScratchDirectory;

class CheckpointResume : public ::testing::TestWithParam<HmcSampler> {};

TEST_P(CheckpointResume, ResumedRunIsTheUninterruptedRunBitForBit) {
  const ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(4, 0.3);
  const SampleConfig base = checkpointed_config(GetParam(), scratch / "reference.npy");
  const SampleResult reference = sample(model, base);

  SampleConfig config = resumable_config(base, scratch);
  config.checkpoint.every = 40;
  // Stopped in the first metric window, at a restart check (iteration 75 of warm-up), at the
  // last warm-up iteration, then twice while sampling (polls come per iteration in warm-up and
  // per chunk of at most 16 draws in sampling).
  int interruptions = 0;
  const SampleResult resumed = run_with_stops(model, config, {30, 45, 75, 3, 2}, interruptions);
  EXPECT_EQ(interruptions, 5);
  EXPECT_GE(resumed.resumed_at_iteration, 150);
  EXPECT_TRUE(same_draws_files(scratch));
  expect_same_results(resumed, reference);
}

INSTANTIATE_TEST_SUITE_P(Samplers, CheckpointResume,
                         ::testing::Values(HmcSampler::hmc, HmcSampler::chees, HmcSampler::snaper,
                                           HmcSampler::nuts),
                         testing::HmcSamplerName{});

TEST(Checkpoint, ResumedRunWithRestartedChainsIsBitForBit) {
  // The funnel strands chains in warm-up: the restarts' memory (the previous log densities, the
  // chains restarted) must come back with the checkpoint.
  const ScratchDirectory scratch;
  const auto model = models::Funnel<double>::make(10);
  SampleConfig base = checkpointed_config(HmcSampler::hmc, scratch / "reference.npy");
  base.chains = 64;
  base.warmup = 200;
  base.seed = 1;  // three restarts (the CLI's funnel run at these settings)
  const SampleResult reference = sample(model, base);
  ASSERT_GT(reference.warmup_restarts, 0) << "the test needs a run with restarts";
  const SampleConfig config = resumable_config(base, scratch);
  int interruptions = 0;
  const SampleResult resumed = run_with_stops(model, config, {60, 90}, interruptions);
  EXPECT_EQ(interruptions, 2);
  EXPECT_TRUE(same_draws_files(scratch));
  expect_same_results(resumed, reference);
  EXPECT_EQ(resumed.warmup_restarted_chains, reference.warmup_restarted_chains);
}

class ChmcCheckpointResume : public ::testing::TestWithParam<bool> {};

TEST_P(ChmcCheckpointResume, ResumedRunIsTheUninterruptedRunBitForBit) {
  // Constrained HMC's chains keep their Jacobian and Gram factor at the current point in the
  // backend's workspace; the checkpoint holds it as the backend laid it out (chains in SIMD
  // lanes or one at a time: the parameter).
  const ScratchDirectory scratch;
  const auto problem = models::LinearGaussianProblem::make(3, 6, 1);
  ChmcConfig base = checkpointed_chmc_config(scratch / "reference.npy");
  base.cpu_simd_lanes = GetParam();
  const SampleResult reference = sample_chmc(problem.host_model(), base);
  ChmcConfig config = resumable_config(base, scratch);
  config.checkpoint.every = 40;
  int interruptions = 0;
  const SampleResult resumed =
      run_with_stops(config, {30, 75, 3, 2}, interruptions,
                     [&](const ChmcConfig& c) { return sample_chmc(problem.host_model(), c); });
  EXPECT_EQ(interruptions, 4);
  EXPECT_TRUE(same_draws_files(scratch));
  expect_same_results(resumed, reference);
  EXPECT_EQ(resumed.sampling_stats.newton_iterations, reference.sampling_stats.newton_iterations);
  EXPECT_EQ(resumed.warmup_backed_off_chains, reference.warmup_backed_off_chains);
}

INSTANTIATE_TEST_SUITE_P(Lanes, ChmcCheckpointResume, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "lanes" : "one_by_one"; });

TEST(Checkpoint, WrittenEveryNIterationsAtomically) {
  const ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(3, 0.3);
  SampleConfig config = checkpointed_config(HmcSampler::chees, scratch / "draws.npy");
  config.checkpoint.path = scratch / "checkpoint.bin";
  config.checkpoint.every = 50;
  const SampleResult r = sample(model, config);
  // Iterations 50, 100, 150 (warm-up) and 200 (sampling); none at the end (240).
  EXPECT_EQ(r.checkpoints_written, 4);
  EXPECT_TRUE(std::filesystem::exists(scratch / "checkpoint.bin"));
  for (const auto& entry : std::filesystem::directory_iterator(scratch.root()))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST(Checkpoint, RefusesOtherSettingsAndDamagedFiles) {
  const ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(3, 0.3);
  SampleConfig config = checkpointed_config(HmcSampler::chees, scratch / "draws.npy");
  config.checkpoint.path = scratch / "checkpoint.bin";
  config.checkpoint.stop_requested = [] { return true; };
  EXPECT_THROW(sample(model, config), interrupted);
  config.checkpoint.stop_requested = nullptr;
  config.checkpoint.resume = true;

  SampleConfig other_seed = config;
  other_seed.seed = 6;
  testing::expect_error_containing<invalid_argument>([&] { sample(model, other_seed); },
                                                     {"other settings"});
  testing::expect_error_containing<invalid_argument>(
      [&] { sample(models::Gaussian<double>::make(4, 0.3), config); }, {"other settings"});

  // Truncated: refused, not misread.
  const std::string whole = file_bytes(config.checkpoint.path);
  std::ofstream(config.checkpoint.path, std::ios::binary | std::ios::trunc)
      << whole.substr(0, whole.size() / 2);
  testing::expect_error_containing<io_error>([&] { sample(model, config); },
                                             {"truncated or damaged"});
  std::filesystem::remove(config.checkpoint.path);
  testing::expect_error_containing<io_error>([&] { sample(model, config); },
                                             {"cannot read checkpoint"});
}

TEST(Checkpoint, NeedsTheTraceOnDisk) {
  const auto model = models::Gaussian<double>::make(3, 0.3);
  SampleConfig config = testing::run_config(8, 20, 20, 1);
  config.checkpoint.path = "unused.bin";
  testing::expect_error_containing<invalid_argument>([&] { sample(model, config); },
                                                     {"streamed to a file"});
}

TEST(StreamedTrace, IsTheTraceHeldInMemory) {
  const ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(3, 0.3);
  SampleConfig config = testing::run_config(14, 40, 37, 3);  // 7 superchains of 2
  config.thin = 3;
  config.chunk_iterations = 5;  // chunks that do not align with the thinning
  const SampleResult held = sample(model, config);
  config.draws_path = scratch / "draws.npy";
  const SampleResult streamed = sample(model, config);
  EXPECT_TRUE(streamed.draws_data.empty());
  EXPECT_EQ(streamed.draws_path, config.draws_path);
  const io::NpyArray file = io::read_npy(config.draws_path);
  ASSERT_EQ(file.shape, (std::vector<std::int64_t>{14, 13, 3}));
  EXPECT_EQ(file.values, held.draws_data);
  ASSERT_EQ(streamed.summary.size(), held.summary.size());
  for (std::size_t q = 0; q < held.summary.size(); ++q) {
    EXPECT_EQ(streamed.summary[q].mean, held.summary[q].mean);
    EXPECT_EQ(streamed.summary[q].ess_tail, held.summary[q].ess_tail);
    EXPECT_TRUE(testing::same_bits(streamed.nested_rhat[q], held.nested_rhat[q]));
  }
}

TEST(StreamedTrace, DiagnosesInBlocksWithinTheMemoryLimit) {
  const ScratchDirectory scratch;
  const auto model = models::Gaussian<double>::make(6, 0.3);
  SampleConfig config = testing::run_config(40, 30, 50, 4);
  config.chunk_iterations = 10;  // chunks that do not shrink with the limit: a fixed part
  const SampleResult held = sample(model, config);
  config.draws_path = scratch / "draws.npy";

  // Room for the fixed part and two quantities' diagnostics at a time: the same summaries.
  HostMemoryPlan plan = plan_host_memory(config, 6, 6, sizeof(double), true);
  const std::int64_t per_quantity = 40 * 50 * (8 + kDiagnosticBytesPerDraw);
  config.memory_limit = plan.fixed() + 2 * per_quantity + 1;
  plan = plan_host_memory(config, 6, 6, sizeof(double), true);
  EXPECT_LT(plan.quantities_per_block, 6);
  EXPECT_EQ(plan.diagnosed_chains, 40);
  const SampleResult blocked = sample(model, config);
  for (std::size_t q = 0; q < held.summary.size(); ++q) {
    EXPECT_EQ(blocked.summary[q].mean, held.summary[q].mean);
    EXPECT_EQ(blocked.summary[q].rhat, held.summary[q].rhat);
  }

  // Room for less than one quantity of all chains: the first chains that fit, in whole
  // superchains (automatic: 10 superchains of 4 chains), as a run of those chains alone gives.
  config.memory_limit = plan.fixed() + per_quantity / 2;
  plan = plan_host_memory(config, 6, 6, sizeof(double), true);
  EXPECT_EQ(plan.quantities_per_block, 1);
  EXPECT_EQ(plan.diagnosed_chains, 20);
  const SampleResult subset = sample(model, config);
  EXPECT_EQ(subset.diagnosed_chains, 20);
  const std::vector<double> first_chains(held.draws_data.begin(),
                                         held.draws_data.begin() + 20 * 50 * 6);
  const auto expected = diag::summarize_all(first_chains.data(), 20, 50, 6, held.names);
  for (std::size_t q = 0; q < expected.size(); ++q) {
    EXPECT_EQ(subset.summary[q].mean, expected[q].mean);
    EXPECT_EQ(subset.summary[q].ess_bulk, expected[q].ess_bulk);
  }
}

TEST(HostMemory, RefusesARunThatWouldNotFitWithTheFigure) {
  SampleConfig config = testing::run_config(1 << 16, 100, 1000, 1);
  config.memory_limit = 64 << 20;
  // The trace in memory: 2^16 chains x 1000 draws x 100 quantities of 8 bytes = 48.8 GiB.
  testing::expect_error_containing<invalid_argument>(
      [&] { plan_host_memory(config, 100, 100, sizeof(double), true); },
      {"trace 48.83 GiB", "memory limit of 64.00 MiB"});
  // Streamed, the chains' state (2^16 x (5 x 100 + 1) doubles, 250.6 MiB, and the trajectory
  // criterion's terms) is still more than 64 MiB.
  config.draws_path = "draws.npy";
  testing::expect_error_containing<invalid_argument>(
      [&] { plan_host_memory(config, 100, 100, sizeof(double), true); },
      {"(chains ", "MiB, draw chunks"});
  // On a GPU only a chunk of draws (one draw of every chain, 50 MiB, and its transposition)
  // and the diagnostics stay on the host: 256 MiB diagnose the first chains that fit.
  config.memory_limit = 256 << 20;
  const HostMemoryPlan plan = plan_host_memory(config, 100, 100, sizeof(double), false);
  EXPECT_EQ(plan.ensemble, 0);
  EXPECT_EQ(plan.draw_chunks, 2 * 100 * (1 << 16) * 8);
  EXPECT_GE(plan.diagnosed_chains, 1000);
  EXPECT_LT(plan.diagnosed_chains, 1 << 16);
  EXPECT_LE(plan.total(), config.memory_limit);
}

TEST(HostMemory, ParsesByteCounts) {
  EXPECT_EQ(parse_bytes("4096", "x"), 4096);
  EXPECT_EQ(parse_bytes("64M", "x"), 64ll << 20);
  EXPECT_EQ(parse_bytes("2g", "x"), 2ll << 30);
  EXPECT_EQ(parse_bytes("1.5GiB", "x"), 3ll << 29);
  for (const char* bad : {"12KB", "abc", "-5", "0", ""})
    testing::expect_error_containing<invalid_argument>([&] { parse_bytes(bad, "--memory-limit"); },
                                                       {"--memory-limit must be"});
}

}  // namespace
}  // namespace myriad
