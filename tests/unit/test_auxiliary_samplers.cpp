// The pieces of the auxiliary-variable samplers (mcmc/slice.hpp, mcmc/auxiliary_samplers.hpp,
// model/estimator.hpp) one at a time: reflection into the unit cube, the slice updates' brackets,
// shrinkage and caps on lines whose slices are known, the counter-keyed variates, the estimator's
// unbiasedness, the CPU backend's independence of the thread count, and the refusals.

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/expect_error.hpp"
#include "common/run_configs.hpp"
#include "myriad/backend/cpu_auxiliary_backend.hpp"
#include "myriad/mcmc/slice.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian_latent_variable.hpp"
#include "myriad/models/standard_logistic.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad {
namespace {

using testing::expect_invalid_argument;

TEST(ReflectIntoUnit, FoldsEveryRealIntoTheCubeWithUnitSlope) {
  EXPECT_DOUBLE_EQ(reflect_into_unit(0.3), 0.3);
  EXPECT_DOUBLE_EQ(reflect_into_unit(1.2), 0.8);
  EXPECT_NEAR(reflect_into_unit(-0.3), 0.3, 1e-15);
  EXPECT_NEAR(reflect_into_unit(2.3), 0.3, 1e-15);
  EXPECT_NEAR(reflect_into_unit(-1.7), 0.3, 1e-15);  // fmod would give a negative remainder
  EXPECT_NEAR(reflect_into_unit(3.6), 0.4, 1e-15);
  for (double u = -5; u < 5; u += 0.137) {
    const double v = reflect_into_unit(u);
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
}

/// A line whose slice at any height is the interval (lower, upper) ∋ 0: log target 0 inside,
/// −∞ outside. Records the trials and where it moved.
struct IntervalLine {
  double lower, upper;
  std::vector<double> trials;
  double moved_to = NAN;
  double log_target(double t) {
    trials.push_back(t);
    return t > lower && t < upper ? 0.0 : -INFINITY;
  }
  void move_to(double t, double) { moved_to = t; }
};

const SliceTags kTags{Purpose::slice_height, Purpose::slice_direction, Purpose::slice_bracket};

TEST(LinearSlice, AcceptsAPointInsideTheSliceAndShrinksTowardsTheStart) {
  for (std::uint32_t iteration = 0; iteration < 200; ++iteration) {
    IntervalLine line{-0.2, 0.05, {}, NAN};
    const RandomStream rng(7, 3);
    const SliceOutcome<double> out =
        linear_slice_update(line, 0.0, SliceShape<double>{1.0, 0, 64}, rng, iteration, kTags);
    ASSERT_FALSE(out.capped);
    EXPECT_TRUE(line.moved_to > -0.2 && line.moved_to < 0.05) << line.moved_to;
    EXPECT_EQ(out.evaluations, static_cast<int>(line.trials.size()));
    // Every rejected trial lies outside the slice, and the bracket only shrinks towards 0.
    double lo = -INFINITY, hi = INFINITY;
    for (std::size_t k = 0; k + 1 < line.trials.size(); ++k) {
      const double t = line.trials[k];
      EXPECT_TRUE(t > lo && t < hi) << "trial outside the current bracket";
      (t < 0 ? lo : hi) = t;
    }
  }
}

TEST(LinearSlice, StepOutWidensATooShortBracketWithinItsBudget) {
  IntervalLine line{-3.5, 2.5, {}, NAN};
  const RandomStream rng(1, 0);
  const SliceOutcome<double> out =
      linear_slice_update(line, 0.0, SliceShape<double>{1.0, 8, 64}, rng, 0, kTags);
  EXPECT_FALSE(out.capped);
  // The ends stepped out to (or past) the slice's: at most 8 step-out evaluations.
  EXPECT_LE(out.evaluations, 8 + 64);
  EXPECT_GT(line.trials.size(), 1u);
}

TEST(LinearSlice, ACappedUpdateKeepsThePointAndSaysSo) {
  IntervalLine line{-1e-12, 1e-12, {}, NAN};  // a slice no trial will hit
  const RandomStream rng(2, 0);
  const SliceOutcome<double> out =
      linear_slice_update(line, 0.0, SliceShape<double>{1.0, 0, 5}, rng, 4, kTags);
  EXPECT_TRUE(out.capped);
  EXPECT_FALSE(out.moved);
  EXPECT_EQ(out.evaluations, 5);
  EXPECT_TRUE(std::isnan(line.moved_to)) << "a capped update moved";
}

TEST(EllipticalSlice, TriesTheWholeEllipseFirstThenShrinksTowardsTheStart) {
  IntervalLine ellipse{-0.3, 0.4, {}, NAN};  // angles θ with f above any height
  const RandomStream rng(5, 1);
  const SliceOutcome<double> out = elliptical_slice_update(ellipse, 0.0, 64, rng, 9, kTags);
  ASSERT_FALSE(out.capped);
  EXPECT_TRUE(ellipse.moved_to > -0.3 && ellipse.moved_to < 0.4);
  ASSERT_FALSE(ellipse.trials.empty());
  EXPECT_GT(ellipse.trials.front(), 0.0);  // θ ~ U(0, 2π): the bracket's upper end
  EXPECT_LT(ellipse.trials.front(), 6.2832);
}

TEST(AuxiliaryVariates, EqualTheStreamsNormalsAndUniformsInAnyOrderOfReading) {
  const RandomStream rng(11, 4);
  const AuxiliaryVariates<double> normal{rng, 17, AuxiliaryLaw::normal};
  const AuxiliaryVariates<double> uniform{rng, 17, AuxiliaryLaw::uniform};
  for (const int i : {5, 4, 0, 1, 9, 8, 8, 3, 2}) {
    EXPECT_EQ(normal[i], rng.normal<double>(17, Purpose::auxiliary, i)) << i;
    EXPECT_EQ(uniform[i], rng.uniform<double>(17, Purpose::auxiliary, i)) << i;
  }
}

TEST(GaussianLatentVariable, EstimatorIsUnbiasedForTheMarginalLikelihood) {
  // D = 1, M = 2, N = 1: E_u[ε(x, u)] ∝ N(x; 0, 1) Π_m N(y_m; x, σ² + ε²), so the ratio of the
  // estimator's means at two points is the exact density ratio.
  using Lvm = models::GaussianLatentVariable<double>;
  const Lvm model = Lvm::make(1, 2, 1);
  const double a[] = {0.2}, b[] = {1.1};
  const RandomStream rng(3, 0);
  const int n = 400000;
  double sum_a = 0, sum_b = 0, sq_a = 0, sq_b = 0;
  for (int k = 0; k < n; ++k) {
    const AuxiliaryVariates<double> u{rng, static_cast<std::uint32_t>(k), AuxiliaryLaw::normal};
    const double ea = std::exp(model.log_estimate(a, u)), eb = std::exp(model.log_estimate(b, u));
    sum_a += ea;
    sum_b += eb;
    sq_a += ea * ea;
    sq_b += eb * eb;
  }
  const double mean_a = sum_a / n, mean_b = sum_b / n;
  const double se_a = std::sqrt((sq_a / n - mean_a * mean_a) / n);
  const double se_b = std::sqrt((sq_b / n - mean_b * mean_b) / n);
  const double ratio = mean_a / mean_b;
  const double exact = std::exp(model.log_density(a) - model.log_density(b));
  const double se =
      ratio * std::sqrt(se_a * se_a / (mean_a * mean_a) + se_b * se_b / (mean_b * mean_b));
  EXPECT_NEAR(ratio, exact, 5 * se) << "ratio " << ratio << " exact " << exact;
}

TEST(CpuAuxiliaryBackend, ChainsDoNotDependOnTheThreadCount) {
  using Lvm = models::GaussianLatentVariable<double, AuxiliaryLaw::uniform>;
  const Lvm model = Lvm::make(4, 3, 2);
  for (const AuxiliaryMethod method : {AuxiliaryMethod::apm_ss_ss, AuxiliaryMethod::apm_mi_mh,
                                       AuxiliaryMethod::reflective_slice}) {
    std::vector<std::vector<double>> positions;
    std::vector<std::int64_t> evaluations;
    for (const int threads : {1, 2}) {
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      CpuAuxiliaryBackend<Lvm, double> backend(model, 37, method);
      AuxiliarySettings<double> settings;
      settings.method = method;
      settings.seed = 5;
      ASSERT_EQ(backend.initialize(settings, 2.0, 100), 0);
      const IterationStats s = backend.run(settings, 0, 20, nullptr, 0, 0, nullptr);
      positions.push_back(backend.positions());
      evaluations.push_back(s.density_evaluations);
      omp_set_num_threads(before);
    }
    EXPECT_EQ(positions[0], positions[1]) << to_string(method);
    EXPECT_EQ(evaluations[0], evaluations[1]) << to_string(method);
  }
}

TEST(SampleAuxiliary, RefusesAMethodTheModelCannotTake) {
  AuxiliaryConfig config;
  static_cast<SampleConfig&>(config) = testing::run_config(4, 10, 10, 1);
  const auto funnel = models::Funnel<double>::make(3);
  config.method = AuxiliaryMethod::elliptical_slice;
  expect_invalid_argument([&] { sample_auxiliary(funnel, config); },
                          "needs a model with a Gaussian prior factor");
  config.method = AuxiliaryMethod::apm_mi_mh;
  expect_invalid_argument([&] { sample_auxiliary(funnel, config); }, "needs an estimator model");
  config.method = AuxiliaryMethod::slice;
  config.max_shrinks = 0;
  expect_invalid_argument([&] { sample_auxiliary(funnel, config); }, "the shrink cap must lie in");
  config.max_shrinks = 8;
  config.slice_width = -1;
  expect_invalid_argument([&] { sample_auxiliary(funnel, config); },
                          "the slice width must be positive");
}

}  // namespace
}  // namespace myriad
