// Log-factor tensors, log-space sum-product and elimination orders (mpis.md §3), checked by
// brute-force enumeration of every index assignment of tiny factor graphs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/log_tensor.hpp"

namespace myriad {
namespace {

using Extents = std::vector<std::int64_t>;  // extent of variable v at [v]

/// Expects `call` to throw myriad::invalid_argument whose message contains `needle`.
void expect_invalid(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one mentioning \"" << needle << "\"";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message \"" << e.what() << "\" does not mention \"" << needle << "\"";
  }
}

/// A factor over `vars` with independent N(0, 3^2) log values.
LogTensor random_factor(const std::vector<int>& vars, const Extents& extents,
                        std::mt19937_64& rng) {
  Extents shape;
  for (int v : vars) shape.push_back(extents[v]);
  LogTensor t(vars, shape);
  std::normal_distribution<double> normal(0.0, 3.0);
  for (std::int64_t i = 0; i < t.size(); ++i) t.data()[i] = normal(rng);
  return t;
}

/// log Σ_{eliminated} exp Σ_j T_j by enumerating every assignment of every variable in
/// `extents`, as a tensor over `keep` (in that order). Max-shifted, so −inf and large offsets
/// are handled; independent of the contraction code (only LogTensor element access is shared).
LogTensor brute_force(const std::vector<LogTensor>& factors, const Extents& extents,
                      const std::vector<int>& keep) {
  Extents keep_extents;
  for (int v : keep) keep_extents.push_back(extents[v]);
  LogTensor out(keep, keep_extents);
  const int n = static_cast<int>(extents.size());
  std::int64_t total = 1;
  for (std::int64_t e : extents) total *= e;
  std::vector<std::vector<double>> terms(static_cast<std::size_t>(out.size()));
  std::vector<std::int64_t> assignment(n, 0);
  for (std::int64_t c = 0; c < total; ++c) {
    std::int64_t rest = c;
    for (int v = n - 1; v >= 0; --v) {
      assignment[v] = rest % extents[v];
      rest /= extents[v];
    }
    double s = 0.0;
    for (const LogTensor& f : factors) s += f.at_assignment(assignment);
    std::int64_t o = 0;
    for (std::size_t a = 0; a < keep.size(); ++a) o = o * keep_extents[a] + assignment[keep[a]];
    terms[o].push_back(s);
  }
  for (std::int64_t o = 0; o < out.size(); ++o) {
    const double m = *std::max_element(terms[o].begin(), terms[o].end());
    double sum = 0.0;
    if (m != -INFINITY)
      for (double s : terms[o]) sum += std::exp(s - m);
    out.data()[o] = m == -INFINITY ? m : m + std::log(sum);
  }
  return out;
}

/// Same variables in the same order and every element within `rel` relative error (−inf
/// must match exactly).
void expect_tensors_near(const LogTensor& actual, const LogTensor& expected, double rel = 1e-12) {
  ASSERT_EQ(actual.vars(), expected.vars());
  ASSERT_EQ(actual.extents(), expected.extents());
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    const double a = actual.data()[i], e = expected.data()[i];
    if (e == -INFINITY) {
      EXPECT_EQ(a, -INFINITY) << "element " << i;
    } else {
      EXPECT_NEAR(a, e, rel * std::max(1.0, std::abs(e))) << "element " << i;
    }
  }
}

struct FactorGraph {
  const char* name;
  Extents extents;                       // per variable
  std::vector<std::vector<int>> scopes;  // one factor per scope
};

// Tiny graphs in the shape of MP IS factors ℓ_i[k_i, k_pa(i)] and λ_x[k_pa(x)] (mpis.md §2.2),
// with mixed extents so that a stride mix-up cannot cancel out.
std::vector<FactorGraph> test_graphs() {
  return {
      {"chain", {4, 3, 4, 2, 4, 3}, {{0}, {1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}, {5}}},
      {"tree", {3, 4, 2, 3, 4, 2}, {{0}, {1, 0}, {0, 2}, {3, 1}, {4, 1}, {5, 2}, {3}, {4, 5}}},
      {"loop", {4, 4, 4, 4, 3}, {{0}, {1, 0}, {2, 1}, {3, 2}, {0, 3}, {4, 2}, {4}}},
      {"three_way", {2, 3, 4, 3, 2, 4}, {{0}, {1}, {0, 1, 2}, {3, 2}, {3, 4, 5}, {5}, {4, 0}}},
      {"disconnected", {3, 2, 4}, {{0}, {1, 0}, {2}, {}}},
  };
}

std::vector<LogTensor> random_factors(const FactorGraph& graph, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<LogTensor> factors;
  for (const auto& scope : graph.scopes)
    factors.push_back(random_factor(scope, graph.extents, rng));
  return factors;
}

// ---------------------------------------------------------------------------------------------
// LogTensor

TEST(LogTensor, RowMajorLayoutAndAccess) {
  LogTensor t({7, 2, 5}, {2, 3, 4});
  for (std::int64_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<double>(i);
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.size(), 24);
  EXPECT_EQ(t.at({1, 2, 3}), 1 * 12 + 2 * 4 + 3);
  EXPECT_EQ(t.stride_of(7), 12);
  EXPECT_EQ(t.stride_of(2), 4);
  EXPECT_EQ(t.stride_of(5), 1);
  EXPECT_EQ(t.stride_of(3), 0);  // absent: broadcast
  EXPECT_EQ(t.axis_of(5), 2);
  EXPECT_FALSE(t.has_var(0));
  std::vector<std::int64_t> assignment(8, 0);
  assignment[7] = 1;
  assignment[2] = 0;
  assignment[5] = 2;
  assignment[0] = 99;  // not a variable of t: ignored
  EXPECT_EQ(t.at_assignment(assignment), 12 + 2);
  t.at({0, 1, 1}) = -INFINITY;
  EXPECT_EQ(t.data()[5], -INFINITY);

  const LogTensor s = LogTensor::scalar(-3.5);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.at({}), -3.5);
  EXPECT_EQ(LogTensor().at({}), 0.0);
}

TEST(LogTensor, PermutedMovesEveryElement) {
  std::mt19937_64 rng(11);
  const LogTensor t = random_factor({0, 1, 2}, {2, 3, 4}, rng);
  const LogTensor p = t.permuted({2, 0, 1});
  EXPECT_EQ(p.vars(), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(p.extents(), (Extents{4, 2, 3}));
  for (std::int64_t a = 0; a < 2; ++a)
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t c = 0; c < 4; ++c) EXPECT_EQ(p.at({c, a, b}), t.at({a, b, c}));
}

TEST(LogTensor, RejectsBadShapesWithClearMessages) {
  expect_invalid([] { LogTensor({0, 1}, {2}); }, "2 variables but 1 extents");
  expect_invalid([] { LogTensor({0, 3, 0}, {2, 2, 2}); }, "variable 0 appears twice");
  expect_invalid([] { LogTensor({-1}, {2}); }, "non-negative, got -1");
  expect_invalid([] { LogTensor({0}, {0}); }, "at least 1, got 0");
  expect_invalid(
      [] {
        LogTensor({0, 1}, {2, 2}, std::vector<double>(3, 0.0));
      },
      "4 elements but 3 values");
  // Checked before allocating: 2^48 elements.
  expect_invalid([] { LogTensor({0, 1, 2}, {1 << 16, 1 << 16, 1 << 16}); }, "too large");
  LogTensor t({4}, {3});
  expect_invalid([&] { t.at({3}); }, "index 3 of variable 4 is outside [0, 3)");
  expect_invalid([&] { t.at({0, 0}); }, "2 indices for a rank-1 tensor");
  expect_invalid([&] { t.at_assignment({0, 0}); }, "no index for variable 4");
  expect_invalid([&] { t.permuted({5}); }, "variable 5 is not in the tensor");
}

// ---------------------------------------------------------------------------------------------
// log_sum_product

TEST(LogContract, SingleStepMatchesBruteForceForEveryEliminationSet) {
  // Three tensors over 4 variables with mixed extents and axis orders; every subset E.
  const Extents extents{3, 2, 4, 3};
  std::mt19937_64 rng(2024);
  const std::vector<LogTensor> inputs{random_factor({2, 0}, extents, rng),
                                      random_factor({0, 1, 3}, extents, rng),
                                      random_factor({3}, extents, rng)};
  for (unsigned mask = 0; mask < 16; ++mask) {
    std::vector<int> eliminate, keep;
    // Output order of log_sum_product: first appearance in the inputs (2, 0, 1, 3).
    for (int v : {2, 0, 1, 3}) (mask >> v & 1u ? eliminate : keep).push_back(v);
    SCOPED_TRACE("elimination mask " + std::to_string(mask));
    expect_tensors_near(log_sum_product(inputs, eliminate), brute_force(inputs, extents, keep));
  }
}

TEST(LogContract, ContractAllMatchesBruteForceOnSmallGraphs) {
  for (const FactorGraph& graph : test_graphs()) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(std::string(graph.name) + " seed " + std::to_string(seed));
      const auto factors = random_factors(graph, seed);
      // log P for a flat model: a scalar.
      const LogTensor log_p = contract_all(factors, {});
      EXPECT_EQ(log_p.rank(), 0);
      expect_tensors_near(log_p, brute_force(factors, graph.extents, {}));
      // Kept variables come back in keep's order, whatever the elimination order.
      expect_tensors_near(contract_all(factors, {2, 0}),
                          brute_force(factors, graph.extents, {2, 0}));
      // Greedy only (no exhaustive search) must give the same values.
      expect_tensors_near(contract_all(factors, {1}, {/*exhaustive_max_vars=*/0}),
                          brute_force(factors, graph.extents, {1}));
    }
  }
}

TEST(LogContract, LargeStepTakesTheOpenMpPathAndMatchesBruteForce) {
  // 8^4 output elements × 8^2 eliminated assignments: above the size at which the output loop
  // runs in parallel. Each element is computed in a fixed order, so runs are bit-identical.
  const Extents extents(6, 8);
  std::mt19937_64 rng(31);
  const std::vector<LogTensor> inputs{random_factor({0, 4, 1}, extents, rng),
                                      random_factor({5, 2, 4}, extents, rng),
                                      random_factor({3, 5}, extents, rng)};
  const LogTensor first = log_sum_product(inputs, {4, 5});
  expect_tensors_near(first, brute_force(inputs, extents, {0, 1, 2, 3}));
  EXPECT_EQ(log_sum_product(inputs, {4, 5}).values(), first.values());
}

TEST(LogContract, ContractAllOnUniformWeightsCountsAssignments) {
  // All log values 0: log P = log Π_v K_v exactly, a check that needs no brute force.
  const FactorGraph graph = test_graphs()[3];
  std::vector<LogTensor> factors;
  double log_count = 0.0;
  for (const auto& scope : graph.scopes) {
    Extents shape;
    for (int v : scope) shape.push_back(graph.extents[v]);
    factors.emplace_back(scope, shape, 0.0);
  }
  for (std::int64_t e : graph.extents) log_count += std::log(static_cast<double>(e));
  EXPECT_NEAR(contract_all(factors, {}).at({}), log_count, 1e-14 * log_count);
}

TEST(LogContract, KeepsVariablesAbsentFromEveryTensorOutOfTheResult) {
  const FactorGraph graph = test_graphs()[0];
  const auto factors = random_factors(graph, 5);
  const LogTensor r = contract_all(factors, {3, 42});
  EXPECT_EQ(r.vars(), (std::vector<int>{3}));
  expect_tensors_near(r, brute_force(factors, graph.extents, {3}));
}

TEST(LogContract, RunEliminationReturnsOneMessagePerStep) {
  const FactorGraph graph = test_graphs()[1];
  const auto factors = random_factors(graph, 9);
  const EliminationOrder order = choose_elimination_order(graph.scopes, {0, 1, 2, 3, 4, 5});
  const auto messages = run_elimination(factors, order);
  ASSERT_EQ(messages.size(), order.steps.size());
  for (std::size_t s = 0; s < messages.size(); ++s) {
    std::vector<int> vars = messages[s].vars();
    std::sort(vars.begin(), vars.end());
    EXPECT_EQ(vars, order.steps[s].output_vars) << "step " << s;
  }
  expect_tensors_near(messages.back(), brute_force(factors, graph.extents, {}));
}

TEST(LogContract, MaxShiftIsExactForOffsetsBeyondUnderflow) {
  // mpis.md §3.4: A = (0, −50), B = (−50, 0) gives log 2 − 50; an eps inside the log would give
  // ≈ −15.9. At −1000 an unshifted exp underflows to 0 in double.
  for (double gap : {50.0, 1000.0}) {
    const LogTensor a({0}, {2}, std::vector<double>{0.0, -gap});
    const LogTensor b({0}, {2}, std::vector<double>{-gap, 0.0});
    EXPECT_NEAR(log_sum_product({a, b}, {0}).at({}), std::log(2.0) - gap, 1e-12 * gap);
  }
}

TEST(LogContract, LargeOffsetsStayFiniteAndShiftTheResult) {
  // Adding c to every factor adds (number of factors)·c to log P: an offset of −1e4 per factor
  // (every exp underflows unshifted) and of ±1e300 scale.
  for (const FactorGraph& graph : test_graphs()) {
    SCOPED_TRACE(graph.name);
    const auto factors = random_factors(graph, 17);
    const double base = contract_all(factors, {}).at({});
    auto shifted = factors;
    for (auto& f : shifted)
      for (std::int64_t i = 0; i < f.size(); ++i) f.data()[i] -= 1e4;
    const double offset = -1e4 * static_cast<double>(factors.size());
    const double log_p = contract_all(shifted, {}).at({});
    ASSERT_TRUE(std::isfinite(log_p));
    EXPECT_NEAR(log_p, base + offset, 1e-12 * std::abs(offset));
  }
  // Log values of order 1e300: differences of that size leave only the largest term.
  std::mt19937_64 rng(3);
  const Extents extents{3, 4, 2};
  auto factors = std::vector<LogTensor>{random_factor({0, 1}, extents, rng),
                                        random_factor({1, 2}, extents, rng)};
  for (auto& f : factors)
    for (std::int64_t i = 0; i < f.size(); ++i) f.data()[i] *= 1e299;  // |values| up to ~1e300
  const LogTensor expected = brute_force(factors, extents, {});
  const double log_p = contract_all(factors, {}).at({});
  ASSERT_TRUE(std::isfinite(log_p));
  EXPECT_NEAR(log_p, expected.at({}), 1e-12 * std::abs(expected.at({})));
  // Every entry equal to −1e300: log P = −2e300 + log(#assignments), the log lost to rounding.
  for (auto& f : factors) std::fill(f.data(), f.data() + f.size(), -1e300);
  EXPECT_EQ(contract_all(factors, {}).at({}), -2e300);
}

TEST(LogContract, MinusInfinityIsAZeroWeight) {
  const FactorGraph graph = test_graphs()[2];  // loop
  auto factors = random_factors(graph, 23);
  // Rule out k_0 = 0 and, through the pair factor, (k_1 = 2, k_2 = 1).
  factors[0].at({0}) = -INFINITY;
  factors[2].at({1, 2}) = -INFINITY;  // scope {2, 1}
  expect_tensors_near(contract_all(factors, {}), brute_force(factors, graph.extents, {}));
  const LogTensor by_k0 = contract_all(factors, {0});
  EXPECT_EQ(by_k0.at({0}), -INFINITY);
  expect_tensors_near(by_k0, brute_force(factors, graph.extents, {0}));
  // All zero weights: log P = −inf, not NaN.
  std::fill(factors[4].data(), factors[4].data() + factors[4].size(), -INFINITY);
  EXPECT_EQ(contract_all(factors, {}).at({}), -INFINITY);
  const LogTensor empty({0}, {3}, -INFINITY);
  EXPECT_EQ(log_sum_product({empty, LogTensor({0}, {3}, 1.0)}, {0}).at({}), -INFINITY);
}

TEST(LogContract, RejectsBadInputsWithClearMessages) {
  const LogTensor a({0, 1}, {3, 2});
  const LogTensor b({1}, {4});
  expect_invalid([&] { log_sum_product(std::vector<LogTensor>{}, {}); }, "no input tensors");
  expect_invalid(
      [&] {
        log_sum_product({a, b}, {});
      },
      "variable 1 has extent 4 in input 1 but 2 in an earlier input");
  expect_invalid([&] { log_sum_product({a}, {5}); },
                 "variable 5 to eliminate is carried by no input");
  expect_invalid([&] { log_sum_product({a}, {0, 0}); }, "variable 0 is listed twice");
  expect_invalid(
      [&] {
        log_sum_product(std::vector<const LogTensor*>{&a, nullptr}, {});
      },
      "input 1 is null");
  LogTensor bad({0}, {3});
  bad.at({2}) = NAN;
  expect_invalid([&] { log_sum_product({bad}, {0}); }, "at element 2");
  bad.at({2}) = INFINITY;
  expect_invalid([&] { log_sum_product({bad}, {0}); }, "finite or -inf");
  expect_invalid([&] { contract_all({}, {}); }, "no tensors");
  expect_invalid([&] { contract_all({a}, {1, 1}); }, "variable 1 is listed twice in keep");
  // The eliminated index space is checked before any work: 2^34 assignments of small inputs.
  const LogTensor wide0({0}, {1 << 17}), wide1({1}, {1 << 17});
  expect_invalid([&] { log_sum_product({wide0, wide1}, {0, 1}); }, "index space too large");
}

// ---------------------------------------------------------------------------------------------
// choose_elimination_order

/// Replays `order` on `scopes` and checks each step is a valid elimination (mpis.md §3.2): its
/// inputs are live, every live tensor carrying an eliminated variable is an input, the output
/// is the union minus the eliminated variables, and one tensor is left with every variable of
/// `eliminate` gone. Returns the largest clique it saw.
int replay(const std::vector<std::vector<int>>& scopes, const std::vector<int>& eliminate,
           const EliminationOrder& order) {
  std::vector<std::set<int>> pool;
  for (const auto& s : scopes) pool.emplace_back(s.begin(), s.end());
  std::set<int> live;
  for (std::size_t t = 0; t < scopes.size(); ++t) live.insert(static_cast<int>(t));
  std::set<int> remaining(eliminate.begin(), eliminate.end());
  int max_clique = 0;
  for (const EliminationStep& step : order.steps) {
    std::set<int> merged;
    for (int id : step.inputs) {
      EXPECT_TRUE(live.count(id)) << "tensor " << id << " is not live";
      live.erase(id);
      merged.insert(pool[id].begin(), pool[id].end());
    }
    for (int v : step.eliminate) {
      EXPECT_TRUE(remaining.count(v)) << "variable " << v;
      EXPECT_TRUE(merged.count(v)) << "variable " << v;
      for (int other : live) EXPECT_FALSE(pool[other].count(v)) << "variable " << v;
      remaining.erase(v);
      merged.erase(v);
    }
    EXPECT_EQ(std::vector<int>(merged.begin(), merged.end()), step.output_vars);
    EXPECT_EQ(step.clique, static_cast<int>(merged.size() + step.eliminate.size()));
    max_clique = std::max(max_clique, step.clique);
    live.insert(static_cast<int>(pool.size()));
    pool.push_back(merged);
  }
  EXPECT_TRUE(remaining.empty());
  EXPECT_EQ(live.size(), 1u);
  EXPECT_EQ(max_clique, order.max_clique);
  return max_clique;
}

/// The smallest largest clique over every elimination order, by the graph view: eliminating v
/// makes a clique of v and its neighbours and joins those neighbours (independent of the
/// tensor bookkeeping in the library). All variables are eliminated.
int optimal_clique_by_permutations(const std::vector<std::vector<int>>& scopes, int n) {
  std::vector<std::set<int>> adjacent(n);
  for (const auto& s : scopes)
    for (int u : s)
      for (int v : s)
        if (u != v) adjacent[u].insert(v);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  int best = n + 1;
  do {
    auto graph = adjacent;
    int worst = 0;
    for (int v : order) {
      worst = std::max(worst, 1 + static_cast<int>(graph[v].size()));
      for (int a : graph[v]) {
        graph[a].erase(v);
        for (int b : graph[v])
          if (a != b) graph[a].insert(b);
      }
      graph[v].clear();
    }
    best = std::min(best, worst);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::vector<int> all_vars(int n) {
  std::vector<int> vars(n);
  std::iota(vars.begin(), vars.end(), 0);
  return vars;
}

TEST(EliminationOrder, ChainGivesCliqueTwo) {
  std::vector<std::vector<int>> chain{{0}};
  for (int v = 1; v < 12; ++v) chain.push_back({v, v - 1});
  for (int exhaustive : {0, 12}) {
    const auto order = choose_elimination_order(chain, all_vars(12), {exhaustive});
    EXPECT_EQ(order.max_clique, 2);
    EXPECT_EQ(order.exhaustive, exhaustive > 0);
    replay(chain, all_vars(12), order);
  }
}

TEST(EliminationOrder, StarEliminatesLeavesBeforeTheCentre) {
  // Centre 0 with 7 leaves: leaves first gives 2; the centre first would give 8.
  std::vector<std::vector<int>> star{{0}};
  for (int leaf = 1; leaf <= 7; ++leaf) star.push_back({leaf, 0});
  const auto order = choose_elimination_order(star, all_vars(8), {0});
  EXPECT_EQ(order.max_clique, 2);
  replay(star, all_vars(8), order);
  // Keeping the centre: each leaf is summed out alone (clique 2), then the messages merge.
  const auto kept = choose_elimination_order(star, {1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(kept.max_clique, 2);
  EXPECT_EQ(kept.steps.back().output_vars, (std::vector<int>{0}));
  replay(star, {1, 2, 3, 4, 5, 6, 7}, kept);
}

TEST(EliminationOrder, GridCliqueIsTreewidthPlusOne) {
  // Pairwise factors on an r×c grid: treewidth min(r, c), so the best clique is min(r, c) + 1.
  auto grid = [](int rows, int cols) {
    std::vector<std::vector<int>> scopes;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const int v = r * cols + c;
        if (c + 1 < cols) scopes.push_back({v, v + 1});
        if (r + 1 < rows) scopes.push_back({v, v + cols});
      }
    return scopes;
  };
  const auto g23 = grid(2, 3), g33 = grid(3, 3);
  const auto greedy23 = choose_elimination_order(g23, all_vars(6), {0});
  const auto exact23 = choose_elimination_order(g23, all_vars(6));
  EXPECT_EQ(greedy23.max_clique, 3);
  EXPECT_EQ(exact23.max_clique, 3);
  EXPECT_TRUE(exact23.exhaustive);
  replay(g23, all_vars(6), exact23);
  const auto greedy33 = choose_elimination_order(g33, all_vars(9), {0});
  const auto exact33 = choose_elimination_order(g33, all_vars(9), {9});
  EXPECT_EQ(greedy33.max_clique, 4);
  EXPECT_EQ(exact33.max_clique, 4);
  replay(g33, all_vars(9), greedy33);
  replay(g33, all_vars(9), exact33);
}

TEST(EliminationOrder, ExhaustiveSearchIsOptimalOnRandomSmallGraphs) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 4 + trial % 4;  // 4..7 variables
    std::uniform_int_distribution<int> pick(0, n - 1);
    std::vector<std::vector<int>> scopes;
    for (int v = 0; v < n; ++v) scopes.push_back({v});
    for (int f = 0; f < n + 2; ++f) {  // pairwise factors and some three-way ones
      std::set<int> scope{pick(rng), pick(rng)};
      if (f % 3 == 0) scope.insert(pick(rng));
      scopes.emplace_back(scope.begin(), scope.end());
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    const int optimum = optimal_clique_by_permutations(scopes, n);
    const auto exact = choose_elimination_order(scopes, all_vars(n));
    const auto greedy = choose_elimination_order(scopes, all_vars(n), {0});
    EXPECT_TRUE(exact.exhaustive);
    EXPECT_FALSE(greedy.exhaustive);
    EXPECT_EQ(replay(scopes, all_vars(n), exact), optimum);
    EXPECT_GE(replay(scopes, all_vars(n), greedy), optimum);
  }
}

TEST(EliminationOrder, ExhaustiveSearchBeatsGreedyWhereGreedyIsMisled) {
  // A 6-variable graph (found by random search) on which smallest-clique-first greedy, with
  // ties to the smaller id, ends with a 5-clique although a 4-clique order exists.
  const std::vector<std::vector<int>> scopes{{0, 4}, {3, 5}, {3, 4}, {5},    {0, 2}, {1, 2},
                                             {1, 5}, {0, 5}, {2, 3}, {0, 3}, {1, 4}};
  const auto greedy = choose_elimination_order(scopes, all_vars(6), {0});
  const auto exact = choose_elimination_order(scopes, all_vars(6));
  EXPECT_EQ(replay(scopes, all_vars(6), greedy), 5);
  EXPECT_EQ(replay(scopes, all_vars(6), exact), 4);
  EXPECT_EQ(optimal_clique_by_permutations(scopes, 6), 4);
  // Both orders give the same log P.
  const Extents extents(6, 3);
  std::mt19937_64 rng(8);
  std::vector<LogTensor> factors;
  for (const auto& scope : scopes) factors.push_back(random_factor(scope, extents, rng));
  const LogTensor expected = brute_force(factors, extents, {});
  expect_tensors_near(run_elimination(factors, greedy).back(), expected);
  expect_tensors_near(run_elimination(factors, exact).back(), expected);
}

TEST(EliminationOrder, StepSumsOutEveryVariableNoOtherTensorCarries) {
  // mpis.md §3.2: a step eliminates every remaining variable that no other live tensor carries.
  const auto single = choose_elimination_order({{0, 1, 2}}, {0, 1, 2});
  ASSERT_EQ(single.steps.size(), 1u);
  EXPECT_EQ(single.steps[0].eliminate, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(single.max_clique, 3);
  // {2, 3} goes first (clique 2); then 0, 1 and 2 leave together.
  const auto two = choose_elimination_order({{0, 1, 2}, {2, 3}}, {0, 1, 2, 3});
  ASSERT_EQ(two.steps.size(), 2u);
  EXPECT_EQ(two.steps[0].eliminate, (std::vector<int>{3}));
  EXPECT_EQ(two.steps[0].inputs, (std::vector<int>{1}));
  EXPECT_EQ(two.steps[1].eliminate, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(two.steps[1].inputs, (std::vector<int>{0, 2}));
  EXPECT_EQ(two.max_clique, 3);
}

TEST(EliminationOrder, RejectsBadInputsWithClearMessages) {
  expect_invalid([] { choose_elimination_order({}, {}); }, "no tensors");
  expect_invalid(
      [] {
        choose_elimination_order({{0, 1}}, {2});
      },
      "variable 2 to eliminate is carried by no tensor");
  expect_invalid([] { choose_elimination_order({{0, 1}}, {1, 1}); }, "variable 1 is listed twice");
  expect_invalid(
      [] {
        choose_elimination_order({{0, 1, 0}}, {0});
      },
      "tensor 0 lists a variable twice");
  const std::vector<LogTensor> tensors{LogTensor({0}, {2}), LogTensor({1}, {2})};
  EliminationOrder wrong;
  wrong.steps.push_back({{0}, {0, 5}, {}, 1});
  expect_invalid([&] { run_elimination(tensors, wrong); }, "step 0 uses tensor 5");
  expect_invalid([&] { run_elimination(tensors, EliminationOrder{}); },
                 "an order with no steps leaves 2 tensors");
}

}  // namespace
}  // namespace myriad
