// Statistical properties of massively parallel importance sampling through myriad::mpis, on the
// conjugate models whose answers are exact (mpis.md §2.2, §5, §6, §7): P̂ is unbiased,
// log P̂ is a lower bound that tightens as K grows, posterior moments converge to the exact
// posterior, posterior draws follow the marginal weights, MP IS beats global IS at equal K, and
// the global baseline is consistent. Tolerances: k standard errors estimated from independent
// runs; fixed seeds.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"
#include "myriad/run/mpis.hpp"

namespace myriad {
namespace {

MpisConfig config_of(std::int64_t k, int runs, std::uint64_t seed) {
  MpisConfig c;
  c.k = k;
  c.runs = runs;
  c.seed = seed;
  c.device = Device::cpu;
  return c;
}

/// config_of without the posterior moments: for the checks of the marginal likelihood alone.
MpisConfig marginal_config(std::int64_t k, int runs, std::uint64_t seed) {
  MpisConfig c = config_of(k, runs, seed);
  c.moments = false;
  return c;
}

/// Mean and standard error of exp(log P̂ − log P) over runs.
void ratio_mean_se(const MpisResult& r, double& mean, double& se) {
  std::vector<double> w;
  for (double v : r.log_marginal) w.push_back(std::exp(v - r.exact_log_marginal));
  mean = std::accumulate(w.begin(), w.end(), 0.0) / w.size();
  double ss = 0;
  for (double x : w) ss += (x - mean) * (x - mean);
  se = std::sqrt(ss / (w.size() - 1) / w.size());
}

/// E[P̂] = P(x): the mean of P̂/P over the runs within 5 standard errors of 1, with a standard
/// error under 0.05 (the check has power).
void expect_ratio_unbiased(const MpisResult& r) {
  double mean, se;
  ratio_mean_se(r, mean, se);
  EXPECT_NEAR(mean, 1.0, 5 * se) << "se " << se;
  EXPECT_LT(se, 0.05);
}

template <class Data>
MpisResult run(const Data& data, const MpisConfig& config) {
  MpisResult r = mpis(data.host_model(), config);
  r.exact_log_marginal = data.exact_log_marginal();
  r.exact = data.exact_posterior();
  return r;
}

TEST(MpisEstimates, MarginalLikelihoodEstimateIsUnbiased) {
  // E[P̂] = P(x) (mpis.md §2.2): the mean of P̂/P over independent runs is 1 within 5 standard
  // errors, for factorised and parent-mixture proposals, plates and a timeseries.
  for (bool mixture : {false, true}) {
    SCOPED_TRACE(mixture ? "hierarchical, mixture proposal" : "hierarchical, factorised");
    const auto data = models::HierarchicalGaussianData::synthetic(4, 3, 1, 1, 1, mixture, 1);
    const MpisResult r = run(data, marginal_config(100, 2000, 11));
    expect_ratio_unbiased(r);
    EXPECT_EQ(r.failed_runs, 0);
  }
  for (bool mixture : {true, false}) {
    SCOPED_TRACE(mixture ? "chain, transition proposal" : "chain, independent proposal");
    const auto data = models::GaussianChainData::synthetic(6, 0.9, 0.5, 0.5, 1.0, mixture, 1);
    expect_ratio_unbiased(run(data, marginal_config(20, 4000, 12)));
  }
}

TEST(MpisEstimates, LogMarginalIsALowerBoundThatTightensWithK) {
  // E[log P̂] ≤ log P(x) (Jensen) and approaches it as K grows (mpis.md §2.2).
  const auto data = models::HierarchicalGaussianData::synthetic(20, 5, 1, 1, 1, false, 1);
  std::vector<double> gap, se;
  for (std::int64_t k : {10, 100}) {
    const MpisResult r = run(data, marginal_config(k, 20, 21));
    gap.push_back(r.exact_log_marginal - r.log_marginal_mean);
    se.push_back(r.log_marginal_se);
    EXPECT_GT(gap.back(), -3 * se.back()) << "K = " << k;
  }
  EXPECT_GT(gap[0] - gap[1], 5 * std::hypot(se[0], se[1]));
}

/// Every posterior mean within 5 Monte Carlo standard errors (spread over runs / √R) of the
/// exact one, and every posterior sd within 15% of the exact sd.
void expect_posterior_near_exact(const MpisResult& r) {
  ASSERT_FALSE(r.exact.empty());
  for (const ExactMoment& e : r.exact) {
    const auto it = std::find(r.names.begin(), r.names.end(), e.name);
    ASSERT_NE(it, r.names.end()) << e.name;
    const WeightedMoments& m = r.summary[static_cast<std::size_t>(it - r.names.begin())];
    EXPECT_NEAR(m.mean, e.mean, 5 * m.mcse_mean) << e.name;
    EXPECT_NEAR(m.sd, e.sd, 0.15 * e.sd) << e.name;
  }
}

TEST(MpisEstimates, PosteriorMomentsConvergeToTheExactPosterior) {
  {
    SCOPED_TRACE("hierarchical_gaussian");
    const auto data = models::HierarchicalGaussianData::synthetic(4, 3, 1, 1, 1, false, 1);
    expect_posterior_near_exact(run(data, config_of(300, 20, 31)));
  }
  {
    SCOPED_TRACE("gaussian_chain");
    const auto data = models::GaussianChainData::synthetic(8, 0.9, 0.5, 1.0, 1.0, true, 1);
    expect_posterior_near_exact(run(data, config_of(60, 20, 32)));
  }
}

TEST(MpisEstimates, PosteriorDrawsFollowTheMarginalWeights) {
  // Given one run's particles, its draws are i.i.d. from P_z (mpis.md §6), so the mean of
  // N·R draws estimates the pooled weighted mean with standard error ≈ sd / √(N·R).
  const auto data = models::GaussianChainData::synthetic(8, 0.9, 0.5, 1.0, 1.0, true, 2);
  MpisConfig config = config_of(40, 8, 41);
  config.samples = 2000;
  const MpisResult r = run(data, config);
  const std::size_t q_count = r.names.size();
  for (std::size_t q = 0; q < q_count; ++q) {
    double sum = 0;
    for (int run_index = 0; run_index < r.runs; ++run_index)
      for (std::int64_t d = 0; d < r.samples; ++d)
        sum += r.draws[(run_index * r.samples + d) * q_count + q];
    const double draws = static_cast<double>(r.samples) * r.runs;
    EXPECT_NEAR(sum / draws, r.summary[q].mean, 5 * r.summary[q].sd / std::sqrt(draws))
        << r.names[q];
  }
}

TEST(MpisEstimates, MassivelyParallelBeatsGlobalImportanceSamplingAtEqualK) {
  // The paper's claim (mpis.md §8–§9): with K samples per latent instead of K joint samples,
  // MP IS's bound is far tighter.
  const auto data = models::HierarchicalGaussianData::synthetic(20, 5, 1, 1, 1, false, 1);
  MpisConfig config = marginal_config(100, 10, 51);
  const MpisResult mp = run(data, config);
  config.method = MpisMethod::global;
  const MpisResult global = run(data, config);
  EXPECT_EQ(global.method, "global");
  EXPECT_GT(mp.log_marginal_mean - global.log_marginal_mean,
            5 * std::hypot(mp.log_marginal_se, global.log_marginal_se));
}

TEST(MpisEstimates, GlobalImportanceSamplingIsConsistent) {
  // With many joint samples the global estimator converges too: unbiased P̂ and moments near
  // the exact posterior on a small model; chunking does not change the estimate.
  const auto data = models::HierarchicalGaussianData::synthetic(3, 2, 1, 1, 1, false, 3);
  MpisConfig config = config_of(20000, 10, 61);
  config.method = MpisMethod::global;
  config.samples = 50;
  const MpisResult r = run(data, config);
  double mean, se;
  ratio_mean_se(r, mean, se);
  EXPECT_NEAR(mean, 1.0, 5 * se);
  for (const ExactMoment& e : r.exact) {
    const auto q = static_cast<std::size_t>(std::find(r.names.begin(), r.names.end(), e.name) -
                                            r.names.begin());
    EXPECT_NEAR(r.summary[q].mean, e.mean, 5 * r.summary[q].mcse_mean) << e.name;
  }
  for (double v : r.draws) EXPECT_TRUE(std::isfinite(v));
  config.global_chunk = 777;
  config.samples = 0;
  const MpisResult chunked = run(data, config);
  for (int i = 0; i < r.runs; ++i)
    EXPECT_NEAR(chunked.log_marginal[i], r.log_marginal[i], 1e-9 * std::abs(r.log_marginal[i]));
}

}  // namespace
}  // namespace myriad
