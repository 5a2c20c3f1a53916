#pragma once
// Checkpointed runs for the tests of resumption (CPU: tests/unit/test_checkpoint.cpp; CUDA:
// tests/cuda/test_cuda_checkpoint.cpp): a run stopped at chosen polls and resumed from its
// checkpoint, and what "the same results" means (everything the draws decide).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_configs.hpp"
#include "common/scratch_directory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/sample.hpp"

namespace myriad::testing {

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// A small run whose warm-up has metric windows, a restart check and (ChEES, SNAPER) the
/// trajectory's adaptation, with the trace streamed to `draws_path`.
inline SampleConfig checkpointed_config(HmcSampler sampler, const std::string& draws_path) {
  SampleConfig config = run_config(24, 150, 90, 5);
  config.sampler = sampler;
  config.chunk_iterations = 16;
  config.thin = 2;
  config.draws_path = draws_path;
  return config;
}

/// checkpointed_config for constrained HMC: fixed-length HMC with the diagonal metric.
inline ChmcConfig checkpointed_chmc_config(const std::string& draws_path) {
  ChmcConfig config;
  static_cast<SampleConfig&>(config) = checkpointed_config(HmcSampler::hmc, draws_path);
  config.metric = MetricKind::diag;
  return config;
}

/// The run to stop and resume against the uninterrupted run of `reference` (whose trace goes to
/// scratch/reference.npy): the same settings, its trace streamed to scratch/draws.npy and its
/// checkpoint kept at scratch/checkpoint.bin.
template <class Config>
Config resumable_config(Config reference, const ScratchDirectory& scratch) {
  reference.draws_path = scratch / "draws.npy";
  reference.checkpoint.path = scratch / "checkpoint.bin";
  return reference;
}

/// Whether the resumed run's trace (scratch/draws.npy) is the uninterrupted run's
/// (scratch/reference.npy) byte for byte.
inline ::testing::AssertionResult same_draws_files(const ScratchDirectory& scratch) {
  if (file_bytes(scratch / "draws.npy") == file_bytes(scratch / "reference.npy"))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the resumed run's draws.npy differs from the uninterrupted run's";
}

/// Everything of a result that the draws decide (timings, and the counts of checkpoints and
/// resumption, aside).
inline void expect_same_results(const SampleResult& a, const SampleResult& b) {
  EXPECT_EQ(a.step_size, b.step_size);
  EXPECT_EQ(a.inverse_metric, b.inverse_metric);
  EXPECT_EQ(a.leapfrog_steps, b.leapfrog_steps);
  EXPECT_EQ(a.trajectory_length, b.trajectory_length);
  EXPECT_EQ(a.trajectory_length_trace, b.trajectory_length_trace);
  EXPECT_EQ(a.criterion_trace, b.criterion_trace);
  EXPECT_EQ(a.warmup_stats.accept_prob_fixed.sum(), b.warmup_stats.accept_prob_fixed.sum());
  EXPECT_EQ(a.warmup_stats.gradient_evaluations, b.warmup_stats.gradient_evaluations);
  EXPECT_EQ(a.sampling_stats.accept_prob_fixed.sum(), b.sampling_stats.accept_prob_fixed.sum());
  EXPECT_EQ(a.sampling_stats.gradient_evaluations, b.sampling_stats.gradient_evaluations);
  EXPECT_EQ(a.sampling_stats.divergent, b.sampling_stats.divergent);
  EXPECT_EQ(a.warmup_restarts, b.warmup_restarts);
  EXPECT_EQ(a.sampling_stuck_chains, b.sampling_stuck_chains);
  ASSERT_EQ(a.summary.size(), b.summary.size());
  for (std::size_t q = 0; q < a.summary.size(); ++q) {
    EXPECT_EQ(a.summary[q].mean, b.summary[q].mean) << a.names[q];
    EXPECT_EQ(a.summary[q].rhat, b.summary[q].rhat) << a.names[q];
    EXPECT_EQ(a.summary[q].ess_bulk, b.summary[q].ess_bulk) << a.names[q];
  }
  EXPECT_EQ(a.nested_rhat.size(), b.nested_rhat.size());
}

/// Runs `config` to the end with `run(config)`, stopping it after each of `stops` polls of
/// stop_requested (counted from each start) and resuming it from its checkpoint; returns the
/// final result and counts the interruptions.
template <class Config, class Run>
SampleResult run_with_stops(Config config, const std::vector<int>& stops, int& interruptions,
                            Run run) {
  interruptions = 0;
  for (std::size_t attempt = 0;; ++attempt) {
    int polls = 0;
    const int stop_at = attempt < stops.size() ? stops[attempt] : -1;
    config.checkpoint.stop_requested = [&] { return ++polls == stop_at; };
    config.checkpoint.resume = attempt > 0;
    try {
      return run(static_cast<const Config&>(config));
    } catch (const interrupted&) {
      ++interruptions;
    }
  }
}

/// The same for a density model under myriad::sample.
template <class Model>
SampleResult run_with_stops(const Model& model, const SampleConfig& config,
                            const std::vector<int>& stops, int& interruptions) {
  return run_with_stops(config, stops, interruptions,
                        [&](const SampleConfig& c) { return sample(model, c); });
}

}  // namespace myriad::testing
