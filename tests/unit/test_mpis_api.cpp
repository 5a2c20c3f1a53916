// myriad::mpis and its scheduler: result layout (names, weights, expectations of user
// functions), run batching that cannot change results, the memory budget, failures counted as
// data, and clear errors for bad configurations.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/mpis_test_models.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/estimate/log_tensor.hpp"
#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"
#include "myriad/run/mpis.hpp"

namespace myriad {
namespace {

MpisConfig cpu_config(std::int64_t k, int runs) {
  MpisConfig c;
  c.k = k;
  c.runs = runs;
  c.device = Device::cpu;
  c.seed = 5;
  return c;
}

TEST(MpisApi, QuantityNamesFollowPlatesAndEvents) {
  testing::TestPlatedModel model;
  model.kind = testing::TestStructure::vector_event;
  EXPECT_EQ(mpis_quantity_names(model.structure()),
            (std::vector<std::string>{"w[0]", "w[1]", "y[0]", "y[1]", "y[2]"}));
  model.kind = testing::TestStructure::plate_of_series;
  const std::vector<std::string> names = mpis_quantity_names(model.structure());
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names[0], "m[0]");
  EXPECT_EQ(names[2], "z[0,0]");
  EXPECT_EQ(names[7], "z[1,2]");
}

TEST(MpisApi, WeightsSumToOneAndExpectationsMatchTheSummary) {
  const auto data = models::HierarchicalGaussianData::synthetic(5, 3, 1, 1, 1, true, 2);
  MpisConfig config = cpu_config(16, 3);
  config.keep_weights = true;
  const MpisResult r = mpis(data.host_model(), config);
  const std::size_t q_count = r.names.size();
  ASSERT_EQ(r.weights.size(), q_count * 3 * 16);
  for (std::size_t rq = 0; rq < q_count * 3; ++rq) {
    double sum = 0;
    for (int p = 0; p < 16; ++p) sum += r.weights[rq * 16 + p];
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  const PlatedStructure s = data.host_model().structure();
  const std::vector<double> mean_z = posterior_expectation(r, s, models::HierarchicalGaussian::kZ,
                                                           [](const double* z) { return z[0]; });
  ASSERT_EQ(mean_z.size(), 15u);
  for (int run = 0; run < 3; ++run)
    for (int n = 0; n < 5; ++n)
      EXPECT_NEAR(mean_z[run * 5 + n], r.run_means[run * q_count + 1 + n], 1e-12);
  // E[z²] − E[z]² is the run's posterior variance, non-negative.
  const std::vector<double> second = posterior_expectation(
      r, s, models::HierarchicalGaussian::kZ, [](const double* z) { return z[0] * z[0]; });
  for (std::size_t i = 0; i < second.size(); ++i)
    EXPECT_GE(second[i] - mean_z[i] * mean_z[i], -1e-12);
}

TEST(MpisApi, RunBatchingDoesNotChangeResults) {
  const auto data = models::HierarchicalGaussianData::synthetic(6, 2, 1, 1, 1, false, 4);
  MpisConfig config = cpu_config(12, 5);
  config.samples = 3;
  const MpisResult together = mpis(data.host_model(), config);
  config.runs_per_batch = 2;
  const MpisResult apart = mpis(data.host_model(), config);
  EXPECT_EQ(apart.runs_per_batch, 2);
  EXPECT_EQ(apart.log_marginal, together.log_marginal);
  EXPECT_EQ(apart.draws, together.draws);
  EXPECT_EQ(apart.run_means, together.run_means);
}

TEST(MpisApi, ReportsThePlanAndMemory) {
  const auto data = models::HierarchicalGaussianData::synthetic(6, 2, 1, 1, 1, false, 4);
  const MpisResult r = mpis(data.host_model(), cpu_config(10, 2));
  EXPECT_EQ(r.index_variables, 7);
  EXPECT_EQ(r.max_clique, 2);
  EXPECT_EQ(r.operations.size(), 3u);
  EXPECT_GT(r.peak_bytes, 0);
  // The estimate counts the backward pass's outside tensors at their largest; the engine frees
  // them as it goes, so it never holds more.
  EXPECT_LE(r.peak_bytes, r.estimated_bytes);
  EXPECT_EQ(r.device.substr(0, 3), "cpu");
}

// A timeseries plate's levels hold ⌈T/2⌉ + ⌈T/4⌉ + … matrices, more than T when a level's step
// count is odd (102 for T = 100); the estimate must count them, or it is no bound.
TEST(MpisApi, TheEstimateBoundsThePeakWithATimeseriesPlate) {
  for (const int steps : {100, 13}) {
    const auto data = models::GaussianChainData::synthetic(steps, 0.9, 0.3, 0.5, 1, true, 1);
    const MpisResult r = mpis(data.host_model(), cpu_config(40, 2));
    EXPECT_GT(r.peak_bytes, 0);
    EXPECT_LE(r.peak_bytes, r.estimated_bytes) << steps << " steps";
  }
}

TEST(MpisApi, MemoryBudgetTooSmallIsAClearError) {
  const auto data = models::HierarchicalGaussianData::synthetic(6, 2, 1, 1, 1, false, 4);
  MpisConfig config = cpu_config(1000, 2);
  config.memory_budget = 1e6;
  try {
    mpis(data.host_model(), config);
    FAIL() << "no exception";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("memory budget"), std::string::npos) << e.what();
  }
  // A budget of 1.5 runs' plan estimate: batches of one run.
  config.k = 300;
  config.moments = false;
  config.memory_budget = 0;
  const MpisResult unbounded = mpis(data.host_model(), config);
  EXPECT_EQ(unbounded.runs_per_batch, 2);
  config.memory_budget = 1.5 * unbounded.estimated_bytes / 2;
  const MpisResult bounded = mpis(data.host_model(), config);
  EXPECT_EQ(bounded.runs_per_batch, 1);
  EXPECT_EQ(bounded.log_marginal, unbounded.log_marginal);
}

TEST(MpisApi, GlobalImportanceSamplingStaysWithinTheBudget) {
  const auto data = models::HierarchicalGaussianData::synthetic(6, 2, 1, 1, 1, false, 4);
  MpisConfig config = cpu_config(64, 4);
  config.method = MpisMethod::global;
  config.moments = false;
  const MpisResult unbounded = mpis(data.host_model(), config);
  EXPECT_EQ(unbounded.runs_per_batch, 4);
  const double per_sample = unbounded.estimated_bytes / (4.0 * 64);  // the chunk is all of K
  // One sample of two runs fits: batches of two runs, chunks of one sample, the same answer.
  config.memory_budget = 2.5 * per_sample;
  const MpisResult bounded = mpis(data.host_model(), config);
  EXPECT_EQ(bounded.runs_per_batch, 2);
  EXPECT_LE(bounded.estimated_bytes, config.memory_budget);
  for (int i = 0; i < config.runs; ++i)  // chunks change only the order of the log-sum-exp
    EXPECT_NEAR(bounded.log_marginal[i], unbounded.log_marginal[i],
                1e-9 * std::abs(unbounded.log_marginal[i]));
  // Less than one joint sample, or an explicit chunk beyond the budget: refused, not run over it.
  for (const auto& [budget, chunk] : {std::pair{0.5 * per_sample, std::int64_t{0}},
                                      std::pair{2.5 * per_sample, std::int64_t{8}}}) {
    config.memory_budget = budget;
    config.global_chunk = chunk;
    try {
      mpis(data.host_model(), config);
      ADD_FAILURE() << "no exception at chunk " << chunk;
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("memory budget"), std::string::npos) << e.what();
    }
  }
}

TEST(MpisApi, BatchesKeepEveryTensorWithinTheElementLimit) {
  MpisConfig config;
  config.k = 10;
  config.runs = 8;
  const double limit = static_cast<double>(kMaxLogTensorSize);
  // The budget alone would take all 8 runs; a largest tensor of a third of the limit, 3.
  EXPECT_EQ(mpis_runs_per_batch(config, 1e12, 1e3, 1e3), 8);
  EXPECT_EQ(mpis_runs_per_batch(config, 1e12, 1e3, limit / 3), 3);
  EXPECT_EQ(mpis_runs_per_batch(config, 2.5e3, 1e3, 1e3), 2) << "the budget holds 2.5 runs";
  EXPECT_EQ(mpis_runs_per_batch(config, 1e12, 1e3, limit), 1);
  config.runs_per_batch = 3;
  EXPECT_EQ(mpis_runs_per_batch(config, 1.0, 1e3, limit / 3), 3) << "asked for, and within";
  config.runs_per_batch = 4;
  EXPECT_THROW(mpis_runs_per_batch(config, 1e12, 1e3, limit / 3), invalid_argument);
}

/// A model whose likelihood is NaN for one observation: its log-factor entries are counted and
/// carry zero weight, and the run goes on.
struct BrokenLikelihood : testing::TestPlatedModel {
  MYRIAD_HD double log_likelihood(int observed, const ParentValues& parents,
                                  const PlateIndex& at) const {
    if (at[0] == 1 && at[1] == 0 && parents[0][0] > 0.5) return std::nan("");
    return testing::TestPlatedModel::log_likelihood(observed, parents, at);
  }
};

TEST(MpisApi, NonFiniteFactorEntriesAreCountedZeroWeights) {
  BrokenLikelihood model;
  model.kind = testing::TestStructure::two_level;
  const MpisResult r = mpis(model, cpu_config(8, 2));
  EXPECT_GT(r.nonfinite_entries, 0);
  for (double v : r.log_marginal) EXPECT_TRUE(std::isfinite(v));
}

TEST(MpisApi, BadConfigurationsAreClearErrors) {
  const auto data = models::HierarchicalGaussianData::synthetic(3, 2, 1, 1, 1, false, 4);
  auto expect_error = [&](MpisConfig config, const std::string& needle) {
    try {
      mpis(data.host_model(), config);
      ADD_FAILURE() << "no exception for " << needle;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  MpisConfig c = cpu_config(0, 1);
  expect_error(c, "K must be at least 1");
  c = cpu_config(4, 0);
  expect_error(c, "runs must be at least 1");
  c = cpu_config(4, 1);
  c.samples = -1;
  expect_error(c, "samples");
  c = cpu_config(4, 1);
  c.method = MpisMethod::global;
  c.keep_weights = true;
  expect_error(c, "keep_weights");
  if (!cuda_device_available()) {
    c = cpu_config(4, 1);
    c.device = Device::cuda;
    EXPECT_THROW(mpis(data.host_model(), c), unavailable_error);
  }
  EXPECT_THROW(parse_mpis_method("importance"), invalid_argument);
}

TEST(MpisApi, StructureErrorsNameTheGroup) {
  PlatedStructure s;
  const int a = s.plate("a", 3);
  const int b = s.plate("b", 2);
  const int z = s.latent("z", a);
  EXPECT_THROW(s.latent("y", b, {z}), invalid_argument);  // a parent outside the child's plates
  EXPECT_THROW(s.latent("z", a), invalid_argument);       // a name used twice
  EXPECT_THROW(s.latent("w", a, {kPreviousStep}), invalid_argument);  // not a timeseries
  EXPECT_THROW(s.plate("c", 0), invalid_argument);
  const int t = s.timeseries("t", 4);
  EXPECT_THROW(s.validate(), invalid_argument);  // t has no chain latent
  s.latent("chain", t, {kPreviousStep});
  EXPECT_THROW(s.latent("chain2", t, {kPreviousStep}), invalid_argument);
  EXPECT_NO_THROW(s.validate());
  try {
    s.observed("x", a, {99});
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad

namespace myriad {
namespace {

TEST(MpisApi, ChunkedPlatesGiveTheSameResults) {
  const auto data = models::HierarchicalGaussianData::synthetic(7, 2, 1, 1, 1, true, 4);
  MpisConfig config = cpu_config(12, 3);
  config.samples = 4;
  const MpisResult whole = mpis(data.host_model(), config);
  EXPECT_TRUE(whole.chunk_plate.empty());
  config.chunk_plate = "groups";
  config.chunk_size = 3;
  const MpisResult chunked = mpis(data.host_model(), config);
  EXPECT_EQ(chunked.chunk_plate, "groups");
  EXPECT_EQ(chunked.chunk_size, 3);
  for (int r = 0; r < 3; ++r)
    EXPECT_NEAR(chunked.log_marginal[r], whole.log_marginal[r],
                1e-12 * std::abs(whole.log_marginal[r]));
  for (std::size_t i = 0; i < whole.run_means.size(); ++i)
    EXPECT_NEAR(chunked.run_means[i], whole.run_means[i], 1e-10);
  EXPECT_EQ(chunked.draws, whole.draws);
  EXPECT_LT(chunked.peak_bytes, whole.peak_bytes);

  // Automatically, when one whole run does not fit the budget but a chunked one does.
  config.chunk_plate.clear();
  config.chunk_size = 0;
  config.k = 200;
  config.samples = 0;
  config.runs = 1;
  const MpisResult big = mpis(data.host_model(), config);
  config.memory_budget = 0.6 * big.estimated_bytes;
  const MpisResult automatic = mpis(data.host_model(), config);
  EXPECT_EQ(automatic.chunk_plate, "groups");
  EXPECT_GE(automatic.chunk_size, 1);
  EXPECT_LE(automatic.estimated_bytes, config.memory_budget);
  EXPECT_LE(automatic.peak_bytes, big.peak_bytes);
  EXPECT_NEAR(automatic.log_marginal[0], big.log_marginal[0],
              1e-12 * std::abs(big.log_marginal[0]));

  config.chunk_plate = "observations";  // not a top-level plate
  EXPECT_THROW(mpis(data.host_model(), config), invalid_argument);
  config.chunk_plate = "nosuch";
  EXPECT_THROW(mpis(data.host_model(), config), invalid_argument);
}

}  // namespace
}  // namespace myriad
