// CPU HMC with chains in SIMD lanes (detail/hmc_lane_blocks.hpp) against the same backend one
// chain at a time: every built-in model whose gradient is written over its element type, in
// every instruction set the library holds a kernel for that this machine runs, float and double;
// the dense metric; ChEES's criterion iteration; chains that turn non-finite in some lanes and
// not others; thread counts. "Agree" and its tolerances: tests/common/hmc_agreement.hpp (the
// lanes differ from the scalar path as the GPU does: an ulp or two in exp and log, FMA).

#include <gtest/gtest.h>
#include <omp.h>

#if MYRIAD_SIMD_LANES  // builds with xsimd (scripts/setup installs it)
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "common/hmc_agreement.hpp"
#include "common/radon_test_data.hpp"
#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/detail/hmc_lane_blocks.hpp"
#include "myriad/mcmc/trajectory_criterion.hpp"
#include "myriad/models/builtin.hpp"

namespace myriad {
namespace {

using testing::close;
using testing::expect_hmc_backends_agree;
using testing::kAllowedFlippedChains;
using testing::kPositionTolerance;
using testing::test_settings;

template <class T>
class HmcLanes : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HmcLanes, Precisions);

/// The scalar backend against the lanes of every kernel the library holds for Model here.
template <class T, class Model>
void expect_lanes_agree(const Model& model, std::int64_t chains, const std::string& what,
                        const std::vector<T>& inverse_metric = {}) {
  const auto kernels = library_lane_kernels<HmcLaneFamily, Model, T>();
  ASSERT_FALSE(kernels.empty());
  for (const auto& kernel : kernels) {
    SCOPED_TRACE(what + " in " + kernel.isa + " lanes of " + std::to_string(kernel.width) +
                 ", chains = " + std::to_string(chains));
    CpuHmcBackend<Model, T> scalar(model, chains, /*simd_lanes=*/false), lanes(model, chains);
    ASSERT_EQ(scalar.lane_width(), 1);
    lanes.set_lane_kernel(kernel);
    ASSERT_EQ(lanes.lane_width(), kernel.width);
    expect_hmc_backends_agree<T>(model, &scalar, &lanes, chains, 1, inverse_metric);
  }
}

TYPED_TEST(HmcLanes, BuiltInModelsRunInLanesByDefault) {
  using T = TypeParam;
  // The widest instruction set is chosen at run time; at least SSE2's 128 bits.
  const CpuHmcBackend<models::Gaussian<T>, T> backend(models::Gaussian<T>::make(3, 0.5), 4);
  EXPECT_GE(backend.lane_width(), static_cast<int>(16 / sizeof(T)));
  const auto kernels = library_lane_kernels<HmcLaneFamily, models::Gaussian<T>, T>();
  EXPECT_EQ(backend.lane_width(), kernels.front().width);
  EXPECT_NE(backend.device_name().find(std::string(kernels.front().isa) + " lanes"),
            std::string::npos)
      << backend.device_name();
}

TYPED_TEST(HmcLanes, GaussianAgreesWithOneChainAtATime) {
  using T = TypeParam;
  const auto model = models::Gaussian<T>::make(5, 0.5, 1.0, 2.0);
  // One chain (a group of padding), and counts that leave a partial last group.
  for (std::int64_t chains : {1, 37, 100}) expect_lanes_agree<T>(model, chains, "gaussian");
}

TYPED_TEST(HmcLanes, GaussianWithADenseMetricAgrees) {
  using T = TypeParam;
  const int dim = 4;
  const auto model = models::Gaussian<T>::make(dim, 0.6);
  // M⁻¹ = Σ of the target with ρ = 0.6, followed by its Cholesky factor (metric_storage's
  // layout, which set_inverse_metric builds from the dim² entries).
  std::vector<T> inverse_metric(static_cast<std::size_t>(dim * dim));
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) inverse_metric[i * dim + j] = i == j ? T(1) : T(0.6);
  expect_lanes_agree<T>(model, 45, "gaussian, dense metric", inverse_metric);
}

TYPED_TEST(HmcLanes, FunnelEightSchoolsAndBananaAgree) {
  using T = TypeParam;
  expect_lanes_agree<T>(models::Funnel<T>::make(4), 65, "funnel");
  expect_lanes_agree<T>(models::EightSchools<T>::make(), 65, "eight_schools");
  expect_lanes_agree<T>(models::Banana<T>::make(3, 1.0, 0.5), 65, "banana");
}

TYPED_TEST(HmcLanes, LogisticAgrees) {
  using T = TypeParam;
  // Small n, as in the CUDA test: a float log density over n terms carries ~n ulp of error.
  const auto data = models::LogisticData<T>::synthetic(40, 3, 7);
  expect_lanes_agree<T>(data.host_model(T(10)), 96, "logistic");
}

TYPED_TEST(HmcLanes, RadonAgrees) {
  using T = TypeParam;
  const auto data = testing::twelve_homes_radon<T>();
  expect_lanes_agree<T>(data.host_model(), 45, "radon");
}

/// One ChEES warm-up iteration (run_with_criterion) in lanes and one chain at a time: the same
/// decisions (none flipped in double), criterion sums and moments to the position tolerance.
TYPED_TEST(HmcLanes, CriterionIterationAgrees) {
  using T = TypeParam;
  using Model = models::Gaussian<T>;
  const auto model = Model::make(6, 0.3);
  const std::int64_t chains = 53;
  CpuHmcBackend<Model, T> scalar(model, chains, false), lanes(model, chains);
  ASSERT_GT(lanes.lane_width(), 1);
  const HmcSettings<T> settings = test_settings<T>(31);
  ASSERT_EQ(scalar.initialize(settings.seed, T(2), 100, 1), 0);
  ASSERT_EQ(lanes.initialize(settings.seed, T(2), 100, 1), 0);
  CriterionRequest<T> request;
  request.criterion = TrajectoryCriterion::chees;
  request.centre.assign(6, T(0.1));
  std::vector<double> sums_scalar, sums_lanes;
  EnsembleMoments moments_scalar, moments_lanes;
  for (std::uint32_t iteration = 0; iteration < 3; ++iteration) {
    const IterationStats a =
        scalar.run_with_criterion(settings, iteration, request, sums_scalar, moments_scalar);
    const IterationStats b =
        lanes.run_with_criterion(settings, iteration, request, sums_lanes, moments_lanes);
    EXPECT_EQ(a.transitions, b.transitions);
    EXPECT_LE(std::abs(a.accepted - b.accepted), kAllowedFlippedChains<T>);
    EXPECT_EQ(a.divergent, b.divergent);
    EXPECT_EQ(a.gradient_evaluations, b.gradient_evaluations);
    ASSERT_EQ(sums_scalar.size(), sums_lanes.size());
    // Each chain's terms are O(1)·(energy scale) and differ by the position tolerance unless a
    // decision flipped (kAllowedFlippedChains: O(10) per flipped chain in these units).
    for (std::size_t r = 0; r < sums_scalar.size(); ++r)
      EXPECT_NEAR(sums_lanes[r], sums_scalar[r],
                  static_cast<double>(chains) * 100 * kPositionTolerance<T> *
                          (1 + std::fabs(sums_scalar[r])) +
                      50.0 * kAllowedFlippedChains<T>)
          << "row " << r << ", iteration " << iteration;
  }
}

/// The chains of a group decide alone: one thread or two, the same bits.
TYPED_TEST(HmcLanes, ThreadCountChangesNothing) {
  using T = TypeParam;
  using Model = models::Gaussian<T>;
  const auto model = Model::make(7, 0.4);
  const std::int64_t chains = 77;
  std::vector<std::vector<T>> positions;
  std::vector<std::int64_t> accepted;
  const int threads = omp_get_max_threads();
  for (int n : {1, 2}) {
    omp_set_num_threads(n);
    CpuHmcBackend<Model, T> lanes(model, chains);
    const HmcSettings<T> settings = test_settings<T>(41);
    ASSERT_EQ(lanes.initialize(settings.seed, T(2), 100, 1), 0);
    accepted.push_back(lanes.run(settings, 0, 6, nullptr, 0, 0, nullptr).accepted);
    positions.push_back(lanes.positions());
  }
  omp_set_num_threads(threads);
  EXPECT_EQ(accepted[0], accepted[1]);
  EXPECT_EQ(positions[0], positions[1]);
}

/// A standard normal with a cliff: the log density is NaN where x₀ > 1 (branch-free, written
/// over S), so that within one group some trajectories turn non-finite and stop while the others
/// go on. A user's model: not in the library, so its kernel is compiled here, for this
/// translation unit's instruction set.
template <class T>
struct Cliff {
  using value_type = T;
  int dimension = 3;
  MYRIAD_HD int dim() const { return dimension; }
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    element_t<Vec> sum = 0;
    for (int i = 0; i < dimension; ++i) sum += x[i] * x[i];
    return T(-0.5) * sum;
  }
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;
    S sum = S(0);
    for (int i = 0; i < dimension; ++i) {
      sum += x[i] * x[i];
      grad[i] = -x[i];
    }
    const S nan = S(std::numeric_limits<T>::quiet_NaN());
    return LaneOps<S>::select(x[0] > S(1), nan, T(-0.5) * sum);
  }
};

/// The same model with a gradient declared to return T: one chain at a time.
template <class T>
struct ScalarCliff : Cliff<T> {
  template <class Vec, class Grad>
  MYRIAD_HD T log_density_gradient(const Vec& x, Grad& grad) const {
    return Cliff<T>::log_density_gradient(x, grad);
  }
};

TYPED_TEST(HmcLanes, NonFiniteLanesStopAloneAndCountAsTheScalarPathDoes) {
  using T = TypeParam;
  static_assert(model_gradient_in_lanes<Cliff<T>, xsimd::batch<T>>);
  const std::int64_t chains = 61;
  CpuHmcBackend<Cliff<T>, T> scalar(Cliff<T>{}, chains, false), lanes(Cliff<T>{}, chains);
  ASSERT_GT(lanes.lane_width(), 1) << "a user's model written over S runs in lanes";
  HmcSettings<T> settings = test_settings<T>(23);
  settings.step_size = T(0.5);
  settings.max_leapfrog_steps = 12;
  for (auto* backend : {&scalar, &lanes}) {
    // Start every chain below the cliff (|x| ≤ 0.9): the initial points are finite.
    ASSERT_EQ(backend->initialize(settings.seed, T(0.9), 100, 1), 0);
  }
  const IterationStats a = scalar.run(settings, 0, 8, nullptr, 0, 0, nullptr);
  const IterationStats b = lanes.run(settings, 0, 8, nullptr, 0, 0, nullptr);
  ASSERT_GT(a.non_finite, 0) << "the test needs trajectories that fall off the cliff";
  ASSERT_LT(a.non_finite, a.transitions / 2) << "and others that do not";
  // Where the scalar path stopped a trajectory the lane stopped it too: the counts agree
  // exactly unless a decision flipped by rounding (then a whole later trajectory differs).
  EXPECT_EQ(a.non_finite, b.non_finite);
  EXPECT_EQ(a.divergent, b.divergent);
  EXPECT_EQ(a.gradient_evaluations, b.gradient_evaluations);
  EXPECT_LE(std::abs(a.accepted - b.accepted), kAllowedFlippedChains<T>);
  const std::vector<T> pa = scalar.positions(), pb = lanes.positions();
  int mismatches = 0;
  for (std::size_t k = 0; k < pa.size(); ++k)
    mismatches += close(pa[k], pb[k], kPositionTolerance<T>) ? 0 : 1;
  EXPECT_LE(mismatches, 3 * kAllowedFlippedChains<T>);
}

TYPED_TEST(HmcLanes, AGradientDeclaredOverTRunsOneChainAtATime) {
  using T = TypeParam;
  static_assert(!model_gradient_in_lanes<ScalarCliff<T>, xsimd::batch<T>>);
  const CpuHmcBackend<ScalarCliff<T>, T> backend(ScalarCliff<T>{}, 8);
  EXPECT_EQ(backend.lane_width(), 1);
  EXPECT_STREQ(backend.lane_isa(), "scalar");
}

}  // namespace
}  // namespace myriad

#endif  // MYRIAD_SIMD_LANES
