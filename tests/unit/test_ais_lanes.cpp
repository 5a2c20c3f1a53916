// CPU AIS with particles in SIMD lanes (detail/ais_lane_blocks.hpp) against the same backend one
// particle at a time: the built-in Gaussian target in every instruction set the library holds a
// kernel for that this machine runs, float and double, forward and reverse; a boxed target
// (reflections at one- and two-sided bounds) and a target where some starts have zero weight and
// some proposals are non-finite, both users' targets compiled here; problems that do not fill
// whole groups. Tolerances: tests/common/hmc_agreement.hpp (the lanes round as the GPU does:
// xsimd's exp and log, FMA), for log weights relative to max(1, |log w|).

#include <gtest/gtest.h>

#if MYRIAD_SIMD_LANES  // builds with xsimd (scripts/setup installs it)

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/ais_layout_support.hpp"
#include "common/hmc_agreement.hpp"
#include "common/radon_test_data.hpp"
#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/cpu_ais_backend.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/detail/ais_lane_blocks.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/mcrbm.hpp"
#include "myriad/models/product_of_experts.hpp"

namespace myriad {
namespace {

using testing::close;
using testing::hais_settings;
using testing::kAllowedFlippedChains;
using testing::kPositionTolerance;

/// Runs `target` one particle at a time and with `kernel`, forward and (with_reverse) reverse,
/// and compares failed starts, statistics and log weights.
template <class Target, class T>
void expect_ais_lanes_agree(const Target& target, const AisLaneKernel<Target, T>& kernel,
                            std::int64_t particles_per_problem, int temperatures, bool with_reverse,
                            const std::string& what) {
  SCOPED_TRACE(what + " in " + kernel.isa + " lanes of " + std::to_string(kernel.width));
  const AisLayout<T> layout = make_ais_layout<Target, T>(
      target, particles_per_problem, make_schedule(ScheduleKind::linear, temperatures, 0.0), {});
  CpuAisBackend<Target, T> scalar(target, layout, /*simd_lanes=*/false), lanes(target, layout);
  lanes.set_lane_kernel(kernel);
  ASSERT_EQ(lanes.lane_width(), kernel.width);
  const auto n = static_cast<std::uint32_t>(layout.temperatures());
  const AisSettings<T> settings = hais_settings<T>(0.3);
  for (const bool reverse : {false, true}) {
    if (reverse && !with_reverse) break;
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    EXPECT_EQ(scalar.start(17, reverse), lanes.start(17, reverse));
    // Two calls, as the scheduler makes them: the state carries across.
    IterationStats a = scalar.run(settings, 1, n / 2 + 1);
    a += scalar.run(settings, n / 2 + 1, n + 1);
    IterationStats b = lanes.run(settings, 1, n / 2 + 1);
    b += lanes.run(settings, n / 2 + 1, n + 1);
    EXPECT_EQ(a.transitions, b.transitions);
    EXPECT_EQ(a.gradient_evaluations, b.gradient_evaluations);
    EXPECT_EQ(a.divergent, b.divergent);
    EXPECT_EQ(a.non_finite, b.non_finite);
    EXPECT_LE(std::abs(a.accepted - b.accepted), kAllowedFlippedChains<T> * temperatures);
    EXPECT_NEAR(a.accept_prob_sum(), b.accept_prob_sum(),
                static_cast<double>(a.transitions) * kPositionTolerance<T> +
                    kAllowedFlippedChains<T> * temperatures);
    const std::vector<double> wa = scalar.log_weights(), wb = lanes.log_weights();
    ASSERT_EQ(wa.size(), wb.size());
    int mismatches = 0;
    for (std::size_t i = 0; i < wa.size(); ++i) {
      const bool same =
          std::isinf(wa[i]) ? wa[i] == wb[i] : close(wa[i], wb[i], kPositionTolerance<T>);
      if (!same && ++mismatches <= 3)
        ADD_FAILURE() << "particle " << i << ": log weight " << wa[i] << " vs " << wb[i];
    }
    EXPECT_LE(mismatches, kAllowedFlippedChains<T>);
  }
}

template <class T>
class AisLanes : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AisLanes, Precisions);

TYPED_TEST(AisLanes, GaussianAgreesInEveryInstructionSetForwardAndReverse) {
  using T = TypeParam;
  using Target = models::Gaussian<T>;
  const auto target = Target::make(5, 0.3, 1.0, 0.8);
  const auto kernels = library_lane_kernels<AisLaneFamily, Target, T>();
  ASSERT_FALSE(kernels.empty());
  const CpuAisBackend<Target, T> backend(
      target, make_ais_layout<Target, T>(target, 4, make_schedule(ScheduleKind::linear, 4, 0), {}));
  EXPECT_EQ(backend.lane_width(), kernels.front().width) << "the widest is the default";
  for (const auto& kernel : kernels)
    expect_ais_lanes_agree<Target, T>(target, kernel, 45, 30, true, "gaussian");
}

TYPED_TEST(AisLanes, ProductOfStudentTExpertsAgreesInEveryInstructionSet) {
  using T = TypeParam;
  // The HAIS protocol's target at small sizes (M = 6, L = 12 experts), and Laplace experts,
  // whose slope is a select on the sign.
  for (const auto kind : {models::ExpertKind::student_t, models::ExpertKind::laplace}) {
    const auto data = models::ProductOfExpertsData<T>::synthetic(kind, 6, 12, 1.5, 3.0, 5);
    const auto target = data.host_model();
    using Target = std::decay_t<decltype(target)>;
    for (const auto& kernel : library_lane_kernels<AisLaneFamily, Target, T>())
      expect_ais_lanes_agree<Target, T>(target, kernel, 37, 20, false,
                                        models::poe_model_name(kind));
  }
}

TYPED_TEST(AisLanes, BoltzmannRelaxationAndLinearGenerativeBatchesAgree) {
  using T = TypeParam;
  const auto boltzmann = models::BoltzmannRelaxationData<T>::synthetic(6, 3);
  using Boltzmann = std::decay_t<decltype(boltzmann.host_model())>;
  for (const auto& kernel : library_lane_kernels<AisLaneFamily, Boltzmann, T>())
    expect_ais_lanes_agree<Boltzmann, T>(boltzmann.host_model(), kernel, 37, 20, true,
                                         "boltzmann_relaxation");
  // Three problems of 13 particles: partial groups in each; the Laplace prior's slope is a
  // select on the sign.
  for (const auto prior :
       {models::LinearGenerativePrior::gaussian, models::LinearGenerativePrior::laplace}) {
    const auto data = models::LinearGenerativeData<T>::synthetic(5, 4, 3, prior, 0.3, 1.0, 17);
    using Target = std::decay_t<decltype(data.host_model())>;
    for (const auto& kernel : library_lane_kernels<AisLaneFamily, Target, T>())
      expect_ais_lanes_agree<Target, T>(data.host_model(), kernel, 13, 20, true,
                                        "linear_generative");
  }
}

TYPED_TEST(AisLanes, RadonAgrees) {
  using T = TypeParam;
  const auto data = testing::twelve_homes_radon<T>();
  using Target = std::decay_t<decltype(data.host_model())>;
  for (const auto& kernel : library_lane_kernels<AisLaneFamily, Target, T>())
    expect_ais_lanes_agree<Target, T>(data.host_model(), kernel, 21, 15, false, "radon");
}

TYPED_TEST(AisLanes, McrbmAgrees) {
  using T = TypeParam;
  // Small sizes (M = 5, L = 6 factors, K = 70 covariance units: two tiles, J = 3 mean units).
  const auto data = models::McrbmData<T>::synthetic(5, 6, 70, 3, 11);
  using Target = std::decay_t<decltype(data.host_model())>;
  for (const auto& kernel : library_lane_kernels<AisLaneFamily, Target, T>())
    expect_ais_lanes_agree<Target, T>(data.host_model(), kernel, 21, 15, false, "mcrbm");
}

/// BoxedGaussian of tests/common/ais_test_targets.hpp with its gradient written over S:
/// exp(−2 Σ (x_i − 1)²) on x₀ ≥ 0, x₁ ∈ [−1, 2], x₂ free, so leapfrog steps reflect.
template <class T>
struct LaneBoxedGaussian {
  using value_type = T;
  MYRIAD_HD int dim() const { return 3; }
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    element_t<Vec> sum = 0;
    for (int i = 0; i < 3; ++i) sum += (x[i] - T(1)) * (x[i] - T(1));
    return T(-2) * sum;
  }
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    for (int i = 0; i < 3; ++i) grad[i] = T(-4) * (x[i] - T(1));
    return log_density(x);
  }
  T lower_bound(int i) const {
    return i == 0 ? T(0) : (i == 1 ? T(-1) : -std::numeric_limits<T>::infinity());
  }
  T upper_bound(int i) const { return i == 1 ? T(2) : std::numeric_limits<T>::infinity(); }
};

/// N(0, I) on x₀ ≥ 0 without declaring the bound (branch-free in S): about half the base draws
/// start at zero weight, and proposals across x₀ = 0 are non-finite, in some lanes of a group
/// and not others.
template <class T>
struct LaneHalfSpaceGaussian {
  using value_type = T;
  MYRIAD_HD int dim() const { return 2; }
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = element_t<Vec>;
    const S inside = T(-0.5) * (x[0] * x[0] + x[1] * x[1]);
    return LaneOps<S>::select(x[0] < S(0), S(-std::numeric_limits<T>::infinity()), inside);
  }
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    grad[0] = -x[0];
    grad[1] = -x[1];
    return log_density(x);
  }
};

TYPED_TEST(AisLanes, BoundsReflectAndZeroWeightStartsStayOutOfTheCountsLikeOneAtATime) {
  using T = TypeParam;
  const auto boxed = lane_kernel_for<AisLaneFamily, LaneBoxedGaussian<T>, T>();
  const auto half = lane_kernel_for<AisLaneFamily, LaneHalfSpaceGaussian<T>, T>();
  ASSERT_GT(boxed.width, 1) << "a user's target written over S runs in lanes";
  expect_ais_lanes_agree<LaneBoxedGaussian<T>, T>(LaneBoxedGaussian<T>{}, boxed, 37, 25, false,
                                                  "boxed");
  expect_ais_lanes_agree<LaneHalfSpaceGaussian<T>, T>(LaneHalfSpaceGaussian<T>{}, half, 37, 25,
                                                      false, "half space");
  // The half-space target did what the test is for: failed starts, and non-finite proposals.
  CpuAisBackend<LaneHalfSpaceGaussian<T>, T> backend(
      LaneHalfSpaceGaussian<T>{},
      make_ais_layout<LaneHalfSpaceGaussian<T>, T>(
          LaneHalfSpaceGaussian<T>{}, 37, make_schedule(ScheduleKind::linear, 25, 0.0), {}));
  const std::int64_t failed = backend.start(17, false);
  EXPECT_GT(failed, 5);
  EXPECT_LT(failed, 32);
  EXPECT_GT(backend.run(hais_settings<T>(0.3), 1, 26).non_finite, 0);
}

/// A batch of problems (one per data point) whose particle counts leave partial groups: each
/// group stays within one problem.
template <class T>
struct ShiftedGaussians {
  using value_type = T;
  struct Problem {
    T shift;
    MYRIAD_HD int dim() const { return 2; }
    template <class Vec>
    MYRIAD_HD auto log_density(const Vec& x) const {
      return T(-0.5) * ((x[0] - shift) * (x[0] - shift) + x[1] * x[1]);
    }
    template <class Vec, class Grad>
    MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
      grad[0] = -(x[0] - shift);
      grad[1] = -x[1];
      return log_density(x);
    }
  };
  MYRIAD_HD int dim() const { return 2; }
  int num_problems() const { return 3; }
  MYRIAD_HD Problem problem(int p) const { return {T(p)}; }
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    return problem(0).log_density(x);
  }
};

TYPED_TEST(AisLanes, GroupsStayWithinAProblem) {
  using T = TypeParam;
  const auto kernel = lane_kernel_for<AisLaneFamily, ShiftedGaussians<T>, T>();
  ASSERT_GT(kernel.width, 1);
  // 11 particles per problem: never a whole number of groups of 2, 4, 8 or 16.
  expect_ais_lanes_agree<ShiftedGaussians<T>, T>(ShiftedGaussians<T>{}, kernel, 11, 20, false,
                                                 "three problems");
}

}  // namespace
}  // namespace myriad

#endif  // MYRIAD_SIMD_LANES
