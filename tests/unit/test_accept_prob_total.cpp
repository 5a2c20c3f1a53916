// The ensemble's acceptance total (mcmc/accept_prob_total.hpp) past the range of a signed
// 64-bit sum, where a 2^20-chain run of a few thousand draws takes it: exact, the same for any
// order of addition, and read back as the right probability sum and mean.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "myriad/mcmc/accept_prob_total.hpp"
#include "myriad/backend/hmc_backend.hpp"

namespace myriad {
namespace {

// One chain's total for 2^30 transitions at acceptance 1: 2^62 units, as large as a chain's
// 64-bit counter gets in any realistic run.
constexpr std::int64_t kChainTotal = std::int64_t{1} << 62;

TEST(AcceptProbTotal, CarriesPastSixtyFourBits) {
  AcceptProbTotal total{};
  for (int chain = 0; chain < 8; ++chain) total += kChainTotal;  // 2^65 units
  EXPECT_EQ(total.high, 2u);
  EXPECT_EQ(total.low, 0u);
  // 2^65 units of 2^-32 are 2^33 accepted-with-probability-one transitions.
  EXPECT_EQ(total.sum(), 8589934592.0);
}

TEST(AcceptProbTotal, AdditionOrderDoesNotMatter) {
  // Terms that carry at different points depending on the order: the largest chain totals and
  // small ones, summed forwards, backwards and as a tree of partial totals (a device reduction).
  const std::int64_t terms[] = {std::numeric_limits<std::int64_t>::max(), 1,     kChainTotal, 3,
                                std::numeric_limits<std::int64_t>::max(), 12345, kChainTotal};
  AcceptProbTotal forwards{}, backwards{}, left{}, right{};
  for (std::int64_t t : terms) forwards += t;
  for (int i = 6; i >= 0; --i) backwards += terms[i];
  for (int i = 0; i < 7; ++i) (i % 2 ? left : right) += terms[i];
  AcceptProbTotal tree = right;
  tree += left;
  EXPECT_EQ(forwards, backwards);
  EXPECT_EQ(forwards, tree);
  // 2 (2^63 − 1) + 2^63 + 12349: high word 1, low word 2^63 + 12347.
  EXPECT_EQ(forwards.high, 1u);
  EXPECT_EQ(forwards.low, (std::uint64_t{1} << 63) + 12347u);
}

TEST(AcceptProbTotal, IterationStatsMergeKeepsTheMeanPastSixtyFourBits) {
  // Chains of 2^12 draws at acceptance 0.75, merged by doubling as a reduction tree merges
  // partial totals, up to 2^21 chains: 2^33 transitions of 0.75 · 2^32 units, 1.5 · 2^64 units
  // in all, which a signed 64-bit sum wraps at 2^63 (from 2^20 chains on).
  IterationStats per_chain;
  per_chain.transitions = std::int64_t{1} << 12;
  per_chain.accept_prob_fixed += accept_prob_to_fixed(0.75) * per_chain.transitions;
  IterationStats run = per_chain;
  for (int doubling = 0; doubling < 21; ++doubling) run += IterationStats(run);
  EXPECT_EQ(run.transitions, std::int64_t{1} << 33);
  EXPECT_EQ(run.accept_prob_fixed.high, 1u);
  EXPECT_EQ(run.accept_prob_fixed.low, std::uint64_t{1} << 63);
  EXPECT_DOUBLE_EQ(run.accept_prob_sum(), 0.75 * 8589934592.0);
  EXPECT_DOUBLE_EQ(run.mean_accept_prob(), 0.75);
}

}  // namespace
}  // namespace myriad
