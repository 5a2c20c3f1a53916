// run_sbc's bookkeeping (run/sbc.hpp), with replications that need no sampler: each returns a
// trace made from its own stream, so the result is known to depend only on the replication.
// Running them several at once (the CPU's way) must give the same result as one after another,
// report progress in order, and rethrow the first failure in replication order.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/core/random.hpp"
#include "myriad/run/sbc.hpp"

namespace myriad {
namespace {

constexpr Purpose kFakeDraws = static_cast<Purpose>(user_purpose(0x5BD1));

// Replication r: two quantities, 4 chains × 50 draws from the stream keyed by r, truth a draw of
// the same law (so ranks are uniform), and a summary whose ESS and R-hat depend on r.
SbcReplication fake_replication(std::int64_t r, const SampleConfig& run) {
  SbcReplication outcome;
  SampleResult& result = outcome.run;
  result.names = {"a", "b"};
  result.chains = run.chains;
  result.draws = run.draws;
  result.kept_draws = static_cast<int>(run.draws);
  const RandomStream stream(run.seed, 0);
  const std::int64_t values = result.chains * result.kept_draws * 2;
  for (std::int64_t i = 0; i < values; ++i)
    result.draws_data.push_back(
        stream.normal<double>(0, kFakeDraws, static_cast<std::uint32_t>(i)));
  outcome.truth = {stream.normal<double>(1, kFakeDraws, 0),
                   stream.normal<double>(1, kFakeDraws, 1)};
  for (const std::string& name : result.names) {
    diag::VariableSummary row{};
    row.name = name;
    row.ess_bulk = 50.0 + static_cast<double>(r);
    row.rhat = 1.0 + 0.001 * static_cast<double>(r);
    result.summary.push_back(row);
  }
  result.sampling_stats.divergent = r % 3;
  result.sampling_stats.gradient_evaluations = 10 * r;
  return outcome;
}

SbcConfig fake_sbc() {
  SbcConfig sbc;
  sbc.replications = 23;  // not a multiple of any window below
  sbc.posterior_draws = 19;
  sbc.bins = 4;
  sbc.seed = 7;
  return sbc;
}

TEST(SbcRun, ConcurrentReplicationsGiveTheSameResultInOrder) {
  const SbcConfig sbc = fake_sbc();
  const SampleConfig sampling = testing::run_config(4, 10, 50, 11);
  std::vector<std::int64_t> order;
  const SbcResult serial = run_sbc(sbc, sampling, fake_replication);
  for (const int concurrent : {2, 3, 8}) {
    order.clear();
    const SbcResult together = run_sbc(
        sbc, sampling, fake_replication, [&](std::int64_t r) { order.push_back(r); }, concurrent);
    EXPECT_EQ(together.ranks, serial.ranks) << concurrent;
    EXPECT_EQ(together.min_ess_bulk, serial.min_ess_bulk) << concurrent;
    EXPECT_EQ(together.max_rhat, serial.max_rhat) << concurrent;
    EXPECT_EQ(together.divergences, serial.divergences);
    EXPECT_EQ(together.gradient_evaluations, serial.gradient_evaluations);
    ASSERT_EQ(order.size(), 23u);
    for (std::size_t r = 0; r < order.size(); ++r)
      EXPECT_EQ(order[r], static_cast<std::int64_t>(r));
  }
  // The replications differ (their seeds do), so the comparison above could fail.
  ASSERT_EQ(serial.ranks.size(), 46u);
  EXPECT_NE(serial.min_ess_bulk.front(), serial.min_ess_bulk.back());
  EXPECT_EQ(serial.divergences, 0 + 1 + 2 + 0 + 1 + 2 + 0 + 1 + 2 + 0 + 1 + 2 + 0 + 1 + 2 + 0 + 1 +
                                    2 + 0 + 1 + 2 + 0 + 1);
}

TEST(SbcRun, RethrowsTheFirstFailureInReplicationOrder) {
  const SbcConfig sbc = fake_sbc();
  const SampleConfig sampling = testing::run_config(4, 10, 50, 11);
  const auto failing = [](std::int64_t r, const SampleConfig& run) {
    if (r == 9 || r == 13) throw std::runtime_error("replication " + std::to_string(r));
    return fake_replication(r, run);
  };
  for (const int concurrent : {1, 4}) {
    std::int64_t reported = -1;
    try {
      run_sbc(
          sbc, sampling, failing, [&](std::int64_t r) { reported = r; }, concurrent);
      ADD_FAILURE() << "no exception with " << concurrent;
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "replication 9");
    }
    EXPECT_EQ(reported, 8) << "progress stops before the failed replication";
  }
  EXPECT_THROW(run_sbc(
                   sbc, sampling, fake_replication, [](std::int64_t) {}, 0),
               invalid_argument);
}

}  // namespace
}  // namespace myriad
