// The pieces of ChEES and SNAPER: the quasi-random jitter (mcmc/hmc.hpp), each chain's criterion
// terms (mcmc/trajectory_criterion.hpp), the step on log T (mcmc/trajectory_length_adaptation.hpp)
// and the CPU backend's sums over chains (HmcBackend::run_with_criterion).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/mcmc/trajectory_criterion.hpp"
#include "myriad/mcmc/trajectory_length_adaptation.hpp"
#include "myriad/models/gaussian.hpp"

namespace myriad {
namespace {

TEST(QuasiRandomJitter, ConsecutiveIterationsFillEveryBinOnce) {
  // φ₂(0 … 2^k − 1) is a permutation of j / 2^k; the shift moves all by one amount modulo 1, so
  // sorted, the 64 fractions are exactly 1/64 apart.
  for (std::uint64_t seed : {1u, 2u, 99u}) {
    std::vector<double> u;
    for (std::uint32_t i = 0; i < 64; ++i) {
      const double v = quasi_random_fraction(seed, i);
      ASSERT_GT(v, 0.0);
      ASSERT_LE(v, 1.0);
      u.push_back(v);
    }
    std::sort(u.begin(), u.end());
    for (std::size_t i = 1; i < u.size(); ++i) EXPECT_NEAR(u[i] - u[i - 1], 1.0 / 64, 1e-12);
  }
  EXPECT_NE(quasi_random_fraction(1, 0), quasi_random_fraction(2, 0));  // seeds shift it
}

TEST(QuasiRandomJitter, EightIterationsTakeEachStepCountOnce) {
  for (std::uint32_t start : {0u, 8u, 64u}) {
    std::vector<int> seen(9, 0);
    for (std::uint32_t i = start; i < start + 8; ++i)
      ++seen[jittered_leapfrog_steps(7, i, 8, 1.0, /*quasi_random=*/true)];
    for (int steps = 1; steps <= 8; ++steps) EXPECT_EQ(seen[steps], 1) << "steps " << steps;
  }
}

/// S(x) and its rate along v = M⁻¹p, checked against a central difference of S.
void expect_rate_matches_difference(TrajectoryCriterion criterion) {
  const std::vector<double> centre{0.3, -1.0, 2.0}, inverse_metric{0.5, 2.0, 1.5};
  const auto metric = MetricView<double>::diagonal_metric(inverse_metric.data(), 3);
  std::vector<double> direction{0.6, 0.0, 0.8};  // unit
  const CriterionProbe<double> probe{criterion, centre.data(), direction.data()};
  const std::vector<double> end{1.1, 0.4, -0.7}, momentum{-0.9, 1.3, 0.25};
  const double rate = criterion_square_rate(probe, end, momentum, metric);
  const double h = 1e-6;
  std::vector<double> ahead(3), behind(3);
  for (int i = 0; i < 3; ++i) {
    ahead[i] = end[i] + h * inverse_metric[i] * momentum[i];
    behind[i] = end[i] - h * inverse_metric[i] * momentum[i];
  }
  const double difference =
      (criterion_square(probe, ahead, metric) - criterion_square(probe, behind, metric)) / (2 * h);
  EXPECT_NEAR(rate, difference, 1e-7 * (1 + std::abs(rate)));
  EXPECT_NE(rate, 0.0);
}

TEST(TrajectoryCriterion, CheesRateIsTheDerivativeAlongTheVelocity) {
  expect_rate_matches_difference(TrajectoryCriterion::chees);
}

TEST(TrajectoryCriterion, SnaperRateIsTheDerivativeAlongTheVelocity) {
  expect_rate_matches_difference(TrajectoryCriterion::snaper);
}

TEST(TrajectoryCriterion, TermsOfOneChain) {
  const std::vector<double> centre{0.0, 0.0}, inverse_metric{4.0, 1.0}, direction{1.0, 0.0};
  const auto metric = MetricView<double>::diagonal_metric(inverse_metric.data(), 2);
  const std::vector<double> end{1.0, 2.0}, momentum{0.5, -1.0}, position{2.0, 3.0};
  for (TrajectoryCriterion criterion : {TrajectoryCriterion::chees, TrajectoryCriterion::snaper}) {
    const int rows = criterion_term_count(criterion, 2);
    std::vector<double> values(static_cast<std::size_t>(rows) * 3, -1.0);  // 3 chains
    const CriterionTerms terms{values.data(), 3};
    const CriterionProbe<double> probe{criterion, centre.data(), direction.data()};
    const double start = 0.5, alpha = 0.4;
    write_criterion_terms(probe, terms, 1, start, alpha, end, momentum, position, metric);
    const double change = criterion_square(probe, end, metric) - start;
    const double rate = criterion_square_rate(probe, end, momentum, metric);
    EXPECT_DOUBLE_EQ(terms.at(kCriterionWeight, 1), alpha);
    EXPECT_DOUBLE_EQ(terms.at(kCriterionGradient, 1), alpha * 0.5 * change * rate);
    EXPECT_DOUBLE_EQ(terms.at(kCriterionValue, 1), alpha * 0.25 * change * change);
    if (criterion == TrajectoryCriterion::snaper) {
      // y = M^−½(x − μ) = (2/2, 3/1) = (1, 3); yᵀz = 1; (yᵀz) y = (1, 3).
      EXPECT_DOUBLE_EQ(terms.at(kCriterionDirection, 1), 1.0);
      EXPECT_DOUBLE_EQ(terms.at(kCriterionDirection + 1, 1), 3.0);
    }
    // Other chains' slots are untouched.
    EXPECT_EQ(terms.at(kCriterionWeight, 0), -1.0);
    EXPECT_EQ(terms.at(kCriterionWeight, 2), -1.0);
  }
}

TEST(TrajectoryCriterion, DivergentChainHasNoWeight) {
  const std::vector<double> centre{0.0}, inverse_metric{1.0};
  const auto metric = MetricView<double>::diagonal_metric(inverse_metric.data(), 1);
  const std::vector<double> end{NAN}, momentum{NAN}, position{0.5};
  std::vector<double> values(4, -1.0);
  const CriterionTerms terms{values.data(), 1};
  const CriterionProbe<double> probe{TrajectoryCriterion::chees, centre.data(), nullptr};
  write_criterion_terms(probe, terms, 0, 0.25, 0.0, end, momentum, position, metric);
  EXPECT_EQ(terms.at(kCriterionWeight, 0), 0.0);
  EXPECT_EQ(terms.at(kCriterionGradient, 0), 0.0);
  EXPECT_EQ(terms.at(kCriterionValue, 0), 0.0);
}

TEST(IterationStats, HarmonicMeanOfTheAcceptanceFloorsEachTransition) {
  // Transitions at α = 0.5, 1 and 0 (divergent, counted at the floor 0.01): the harmonic mean
  // 3 / (2 + 1 + 100); each term is summed in 2^−32 fixed point.
  IterationStats stats;
  for (double alpha : {0.5, 1.0, 0.0}) {
    stats.inverse_accept_fixed += accept_prob_to_fixed(scaled_inverse_accept(alpha));
    ++stats.transitions;
  }
  EXPECT_NEAR(stats.harmonic_accept_prob(), 3.0 / 103.0, 1e-9);
  EXPECT_EQ(IterationStats{}.harmonic_accept_prob(), 0.0);
}

TEST(TrajectoryLengthAdaptation, StepsAreTheLearningRateWhenTheGradientKeepsItsSign) {
  TrajectoryLengthAdaptation adaptation(1.0, {});
  const double rate = TrajectoryLengthAdaptation::Options{}.learning_rate;
  // β₁ = 0 and bias correction: a constant gradient g gives steps of rate · g/|g|.
  for (int i = 1; i <= 5; ++i) {
    adaptation.update(3.7, 1e9);
    EXPECT_NEAR(std::log(adaptation.length()), i * rate, 1e-12);
  }
  adaptation.update(-100.0, 1e9);  // a larger gradient against: one step back, clipped
  EXPECT_LT(std::log(adaptation.length()), 5 * rate);
  EXPECT_GE(std::log(adaptation.length()),
            5 * rate - TrajectoryLengthAdaptation::Options{}.max_log_update - 1e-12);
}

TEST(TrajectoryLengthAdaptation, CapNanAndTheAverageSinceRestart) {
  TrajectoryLengthAdaptation adaptation(2.0, {});
  adaptation.update(NAN, 1e9);  // skipped
  EXPECT_DOUBLE_EQ(adaptation.length(), 2.0);
  adaptation.update(1.0, 1.5);  // capped at the maximum length
  EXPECT_DOUBLE_EQ(adaptation.length(), 1.5);
  adaptation.restart_average();
  EXPECT_DOUBLE_EQ(adaptation.final_length(), 1.5);  // no update since: the current length
  adaptation.update(1.0, 1.5);
  adaptation.update(1.0, 4.0);
  const double second = adaptation.length();
  EXPECT_NEAR(adaptation.final_length(), std::sqrt(1.5 * second), 1e-12);  // geometric mean
}

TEST(CpuHmcRunWithCriterion, SumsAreTheChainsTermsAndTheTransitionsThoseOfRun) {
  const auto model = models::Gaussian<double>::make(4, 0.3, 0.0, 1.0);
  const std::int64_t chains = 64;
  CpuHmcBackend<models::Gaussian<double>, double> probed(model, chains), plain(model, chains);
  ASSERT_EQ(probed.initialize(5, 2.0, 10, 1), 0);
  ASSERT_EQ(plain.initialize(5, 2.0, 10, 1), 0);
  HmcSettings<double> settings;
  settings.seed = 5;
  settings.step_size = 0.4;
  settings.max_leapfrog_steps = 6;
  settings.jitter = 1;
  settings.quasi_random_jitter = true;
  for (TrajectoryCriterion criterion : {TrajectoryCriterion::chees, TrajectoryCriterion::snaper}) {
    CriterionRequest<double> request;
    request.criterion = criterion;
    request.centre = {0.1, -0.2, 0.0, 0.3};
    request.direction = {0.5, 0.5, 0.5, 0.5};
    std::vector<double> sums;
    EnsembleMoments moments, plain_moments;
    const std::uint32_t iteration = criterion == TrajectoryCriterion::chees ? 3 : 4;
    const IterationStats stats =
        probed.run_with_criterion(settings, iteration, request, sums, moments);
    const IterationStats plain_stats =
        plain.run(settings, iteration, 1, nullptr, 0, 0, &plain_moments);
    // The same transitions: the criterion only observes them.
    EXPECT_EQ(probed.positions(), plain.positions());
    EXPECT_EQ(stats.accepted, plain_stats.accepted);
    EXPECT_EQ(stats.gradient_evaluations, plain_stats.gradient_evaluations);
    EXPECT_EQ(moments.mean, plain_moments.mean);
    ASSERT_EQ(static_cast<int>(sums.size()), criterion_term_count(criterion, 4));
    // Σ α over chains is the acceptance total (2^−32 fixed point per chain).
    EXPECT_NEAR(sums[kCriterionWeight], stats.accept_prob_sum(), chains * 1e-9);
    EXPECT_LE(stats.harmonic_accept_prob(), stats.mean_accept_prob());
    EXPECT_GE(sums[kCriterionValue], 0.0);
    if (criterion == TrajectoryCriterion::snaper) {
      // Σ (yᵀz) y over the chains' new points, recomputed from the positions.
      const std::vector<double> x = probed.positions();  // [dim][chain]
      for (int d = 0; d < 4; ++d) {
        double expected = 0;
        for (std::int64_t c = 0; c < chains; ++c) {
          double projection = 0;
          for (int e = 0; e < 4; ++e) projection += (x[e * chains + c] - request.centre[e]) * 0.5;
          expected += projection * (x[d * chains + c] - request.centre[d]);
        }
        EXPECT_NEAR(sums[kCriterionDirection + d], expected, 1e-9 * (1 + std::abs(expected)));
      }
    }
  }
}

}  // namespace
}  // namespace myriad
