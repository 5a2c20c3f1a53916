// The warp-per-particle path of AIS (kernels/ais_kernels.cuh, ais_*_warp_kernel), exercised on
// the host with a team of threads (tests/common/thread_team.hpp) in place of the warp.
//
// The team code of estimate/hais.hpp, annealing_base.hpp and model/team_density.hpp, and the
// product of experts' team gradient, run here with real concurrency: lanes are threads, sync()
// is a barrier, and the team layout below runs the warp kernels' own bodies
// (detail/ais_particle_bodies.hpp) over CudaAisBackend's warp-mapping arrays ([particle][padded
// dim], the team scratch; lane 0 writing the counters; particles visited in a grid-stride order
// by one team). Against CpuAisBackend (one lane):
//   * positions, the accept decisions and every counter must agree exactly: a team splits the
//     elementwise work and the random fills but computes every coordinate with the one-lane
//     arithmetic, and the team gradient writes each element with the one-lane bits;
//   * log weights agree to rounding: the energies are sums whose order depends on the lanes.
// A lane count that does not divide the dimension, one above the dimension and one above 32
// cover idle lanes and the partition arithmetic. A missing barrier shows up as a mismatch (or
// under ThreadSanitizer as a race), not only on a GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/ais_layout_support.hpp"
#include "common/ais_test_targets.hpp"
#include "common/same_bits.hpp"
#include "common/thread_team.hpp"
#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/cpu_ais_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"
#include "myriad/detail/ais_particle_bodies.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/model/team_density.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/product_of_experts.hpp"

namespace myriad {
namespace {

using testing::base_view_of;
using testing::hais_settings;
using testing::same_bits;

using testing::run_team;
using testing::ThreadTeam;

static_assert(model_has_team_gradient<models::ProductOfExperts<double>>);
static_assert(model_has_team_gradient<models::ProductOfExperts<float>>);
static_assert(!model_has_team_gradient<models::Gaussian<double>>);

// ---------------------------------------------------------------------------------------------
// The pieces: random fills and the target evaluation.

TEST(AisTeam, NormalFillDoesNotDependOnTheSplit) {
  const RandomStream rng(31, 7);
  const int n = 37;  // odd: the last pair has one element
  std::vector<double> expected(n);
  DenseVector<double> e{expected.data(), n};
  rng.fill_normal<double>(5, Purpose::momentum, e, n);
  for (int lanes : {1, 3, 32, 40}) {
    std::vector<double> filled(n, std::numeric_limits<double>::quiet_NaN());
    DenseVector<double> f{filled.data(), n};
    run_team(lanes, [&](const ThreadTeam& team) {
      fill_normal<double>(team, rng, 5, Purpose::momentum, f, n);
    });
    for (int i = 0; i < n; ++i)
      EXPECT_TRUE(same_bits(expected[i], filled[i])) << lanes << " lanes, element " << i;
  }
}

/// Evaluates `target` at x with `lanes` lanes through team_log_density_and_gradient and checks
/// it against the one-lane log_density_and_gradient: the gradient bit for bit, the value to
/// `value_tolerance` (relative) and the same in every lane.
template <class Target>
void expect_team_evaluation_matches(const Target& target, const std::vector<double>& x, int lanes,
                                    double value_tolerance, const std::string& what) {
  const int dim = static_cast<int>(x.size());
  std::vector<double> point = x;
  std::vector<double> one_lane_gradient(dim);
  DenseVector<double> xv{point.data(), dim};
  DenseVector<double> g1{one_lane_gradient.data(), dim};
  const double one_lane = log_density_and_gradient(target, xv, g1);

  std::vector<double> gradient(dim, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> scratch(static_cast<std::size_t>(std::max(1, team_scratch_size(target))));
  std::vector<double> values(static_cast<std::size_t>(lanes));
  DenseVector<double> g{gradient.data(), dim};
  run_team(lanes, [&](const ThreadTeam& team) {
    values[team.rank()] = team_log_density_and_gradient(team, target, xv, g, scratch.data());
  });
  for (int i = 0; i < dim; ++i)
    EXPECT_TRUE(same_bits(one_lane_gradient[i], gradient[i]))
        << what << ", " << lanes << " lanes: gradient[" << i << "] " << gradient[i]
        << " vs one lane " << one_lane_gradient[i];
  for (int l = 0; l < lanes; ++l) {
    EXPECT_TRUE(same_bits(values[0], values[l])) << what << ": lane " << l << " differs";
  }
  EXPECT_NEAR(values[0], one_lane, value_tolerance * std::fabs(one_lane))
      << what << ", " << lanes << " lanes";
}

std::vector<double> probe_point(int dim, std::uint64_t seed) {
  const RandomStream rng(seed, 0);
  std::vector<double> x(dim);
  DenseVector<double> v{x.data(), dim};
  rng.fill_normal<double>(0, Purpose::initial_point, v, dim);
  return x;
}

// The HAIS protocol's target (36 dimensions, 144 Student-t experts) and a complete Laplace
// product, with the transposed filters (the warp path) and without (the fallback).
TEST(AisTeam, ProductOfExpertsTeamGradientHasTheOneLaneBits) {
  const auto student = models::ProductOfExpertsData<double>::synthetic(
      models::ExpertKind::student_t, 36, 144, 1.5, 3.0, 2011);
  const auto laplace =
      models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 8, 8);
  for (const auto* data : {&student, &laplace}) {
    auto model = data->host_model();
    EXPECT_EQ(team_scratch_size(model), data->experts());
    const std::vector<double> x = probe_point(data->dim(), 3);
    for (int lanes : {1, 5, 32, 200}) {
      expect_team_evaluation_matches(model, x, lanes, 1e-13, std::string(data->name()));
      auto untransposed = model;
      untransposed.filters_transposed = nullptr;
      expect_team_evaluation_matches(untransposed, x, lanes, 1e-13,
                                     std::string(data->name()) + " without the transpose");
    }
  }
}

// Without a team member, lane 0 evaluates alone and the others receive its value: every bit the
// one-lane answer.
TEST(AisTeam, TargetsWithoutTeamGradientAreEvaluatedByLaneZero) {
  const auto target = models::Gaussian<double>::make(6, 0.4, 0.5, 1.2);
  EXPECT_EQ(team_scratch_size(target), 0);
  expect_team_evaluation_matches(target, probe_point(6, 9), 4, 0.0, "gaussian");
}

/// A problem of ScratchBatch: N(0, I) in one dimension, whose team gradient declares `scratch`
/// values of scratch (it uses none; only the declared size matters here).
struct ScratchProblem {
  using value_type = double;
  int scratch;
  int dim() const { return 1; }
  template <class Vec>
  double log_density(const Vec& x) const {
    return -0.5 * x[0] * x[0];
  }
  template <class Team, class Vec, class Grad>
  double log_density_gradient(const Team& /*team*/, const Vec& x, Grad& grad,
                              double* /*scratch*/) const {
    grad[0] = -x[0];
    return log_density(x);
  }
  int team_scratch_size() const { return scratch; }
};

/// A batch whose problems need different team scratch, the largest not first.
struct ScratchBatch {
  std::vector<int> scratch;
  int dim() const { return 1; }
  int num_problems() const { return static_cast<int>(scratch.size()); }
  ScratchProblem problem(int p) const { return {scratch[static_cast<std::size_t>(p)]}; }
};

// Every particle's slice of the scratch must hold its own problem's needs, so the size per
// particle is the largest over the problems, not problem 0's (which would let the particles of
// a larger problem write into their neighbours' slices).
TEST(AisTeam, ParticleScratchIsTheLargestOverProblems) {
  static_assert(model_has_team_gradient<ScratchProblem>);
  EXPECT_EQ(particle_team_scratch_size(ScratchBatch{{3, 7, 5}}), 7);
  EXPECT_EQ(particle_team_scratch_size(ScratchBatch{{4}}), 4);
  EXPECT_EQ(particle_team_scratch_size(ScratchProblem{6}), 6);
  EXPECT_EQ(particle_team_scratch_size(models::Gaussian<double>::make(6, 0.4, 0.5, 1.2)), 0);
}

// ---------------------------------------------------------------------------------------------
// Whole runs: CudaAisBackend's warp mapping, on host threads.

/// Coordinates per particle row in the warp mapping (CudaAisBackend: dimension rounded up to 4).

/// CudaAisBackend's warp-mapping state and its two warp kernels' loops over the bodies of
/// detail/ais_particle_bodies.hpp, on the host: one team of `lanes` threads visits the
/// particles last to first (a warp's grid-stride loop); lane 0 writes the counters and the start
/// flags.
template <class Target, class T>
class TeamLayoutAis {
 public:
  TeamLayoutAis(const Target& target, AisLayout<T> layout, int lanes)
      : target_(target),
        layout_(std::move(layout)),
        lanes_(lanes),
        total_(layout_.particles()),
        rows_(EnsembleLayout::chain_major(total_, 4)) {
    state_.scratch_size = particle_team_scratch_size(target_);
    state_.allocate(rows_, layout_.dim);
    // NaN everywhere, so that anything the bodies leave unwritten shows.
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    for (std::vector<T>* array : state_.vectors()) std::fill(array->begin(), array->end(), nan);
    for (auto* array : {&state_.target_log_density, &state_.base_log_density, &state_.scratch})
      std::fill(array->begin(), array->end(), nan);
    std::fill(state_.log_weight.begin(), state_.log_weight.end(),
              std::numeric_limits<double>::quiet_NaN());
  }

  /// ais_start_warp_kernel; returns the failed starts.
  std::int64_t start(std::uint64_t seed, bool reverse) {
    seed_ = seed;
    reverse_ = reverse;
    const AnnealingBase<T> base = base_view_of(layout_);
    const AisBatch batch{seed_, layout_.particles_per_problem, total_};
    std::vector<std::uint8_t> started(static_cast<std::size_t>(total_), 2);
    run_team(lanes_, [&](const ThreadTeam& team) {
      for (std::int64_t i = total_ - 1; i >= 0; --i)
        start_particle_at(target_, ensemble_view(), base, batch, reverse, started.data(), i, team);
    });
    EXPECT_EQ(std::count(started.begin(), started.end(), std::uint8_t{2}), 0) << "unstarted";
    return std::count(started.begin(), started.end(), std::uint8_t{0});
  }

  /// ais_steps_warp_kernel over [k_begin, k_end): lane 0 adds each particle's counts; every
  /// lane must count the same.
  IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin, std::uint32_t k_end) {
    const AnnealingBase<T> base = base_view_of(layout_);
    const AnnealingPath path{layout_.beta.data(), layout_.temperatures(), reverse_};
    const AisBatch batch{seed_, layout_.particles_per_problem, total_};
    std::vector<IterationStats> per_particle(static_cast<std::size_t>(total_));
    std::vector<IterationStats> per_lane(static_cast<std::size_t>(lanes_));
    run_team(lanes_, [&](const ThreadTeam& team) {
      IterationStats mine;
      for (std::int64_t i = total_ - 1; i >= 0; --i)
        mine += anneal_particle_at(target_, ensemble_view(), base, batch, path, k_begin, k_end,
                                   settings, per_particle.data(), i, team);
      per_lane[static_cast<std::size_t>(team.rank())] = mine;
    });
    for (int l = 1; l < lanes_; ++l) {
      EXPECT_EQ(per_lane[l].accepted, per_lane[0].accepted) << "lane " << l;
      EXPECT_EQ(per_lane[l].accept_prob_fixed, per_lane[0].accept_prob_fixed) << "lane " << l;
      EXPECT_EQ(per_lane[l].non_finite, per_lane[0].non_finite) << "lane " << l;
    }
    IterationStats stats;
    for (const IterationStats& s : per_particle) stats += s;
    EXPECT_EQ(stats.transitions, per_lane[0].transitions) << "lane 0 wrote what it counted";
    EXPECT_EQ(stats.accepted, per_lane[0].accepted) << "lane 0 wrote what it counted";
    return stats;
  }

  const std::vector<double>& log_weights() const { return state_.log_weight; }

  /// CudaAisBackend::positions in the warp mapping: [particle][padded dim] → [particle][dim].
  std::vector<T> positions() const {
    std::vector<T> out(static_cast<std::size_t>(total_) * layout_.dim);
    for (std::int64_t i = 0; i < total_; ++i)
      for (int d = 0; d < layout_.dim; ++d)
        out[i * layout_.dim + d] = state_.position[offset(i, d)];
    return out;
  }

  /// Entries of the six vectors' row padding (coordinate ≥ dim) that are no longer NaN.
  std::int64_t written_padding() {
    std::int64_t written = 0;
    for (const std::vector<T>* array : state_.vectors())
      for (std::int64_t i = 0; i < total_; ++i)
        for (int d = layout_.dim; d < rows_.row(layout_.dim); ++d)
          written += std::isnan((*array)[offset(i, d)]) ? 0 : 1;
    return written;
  }

 private:
  /// Where coordinate d of particle i lives: [particle][padded dim].
  std::size_t offset(std::int64_t i, int d) const {
    return static_cast<std::size_t>(i * rows_.row(layout_.dim) + d);
  }

  /// CudaAisBackend::state_view in the warp mapping, with the target's team scratch.
  AisEnsembleView<T> ensemble_view() { return state_.view(rows_, layout_.dim); }

  Target target_;
  AisLayout<T> layout_;
  int lanes_;
  std::int64_t total_;
  EnsembleLayout rows_;  ///< CudaAisBackend's warp mapping: [particle][dim rounded up to 4]
  std::uint64_t seed_ = 0;
  bool reverse_ = false;
  AisEnsembleArrays<HostVector, T> state_;
};

/// Temperatures per simulated launch in the team run (the CPU run uses one call).
constexpr std::uint32_t kLaunchTemperatures = 6;

/// Runs `target` through CpuAisBackend and through the team layout with `lanes` lanes, forward
/// and, if asked, reverse, and requires the agreement of the file comment. Returns the forward
/// counters.
template <class Target, class T = typename Target::value_type>
IterationStats expect_team_agrees(const Target& target, std::int64_t particles, int temperatures,
                                  const AisSettings<T>& settings, bool with_reverse, int lanes,
                                  const std::string& what, const AisBaseSpec& base = {}) {
  constexpr std::uint64_t kSeed = 4242;
  AisLayout<T> layout = make_ais_layout<Target, T>(
      target, particles, make_schedule(ScheduleKind::linear, temperatures, 0.0), base);
  const auto n = static_cast<std::uint32_t>(layout.temperatures());
  CpuAisBackend<Target, T> cpu(target, layout, /*simd_lanes=*/false);
  TeamLayoutAis<Target, T> team(target, layout, lanes);
  // Log weights average Δβ (log p̃ − log q̃) along the path, and the team sums each energy over
  // the coordinates (or experts) in another order: a few ulps of the precision per coordinate,
  // relative to the weight's own scale.
  const double tolerance =
      8 * static_cast<double>(std::numeric_limits<T>::epsilon()) * (1 + layout.dim);

  IterationStats forward;
  for (const bool reverse : {false, true}) {
    if (reverse && !with_reverse) break;
    const std::string pass =
        what + ", " + std::to_string(lanes) + " lanes" + (reverse ? " (reverse)" : " (forward)");
    EXPECT_EQ(cpu.start(kSeed, reverse), team.start(kSeed, reverse)) << pass << ": failed starts";
    const IterationStats one_lane = cpu.run(settings, 1, n + 1);
    IterationStats teamed;
    for (std::uint32_t k = 1; k <= n; k += kLaunchTemperatures)
      teamed += team.run(settings, k, std::min(k + kLaunchTemperatures, n + 1));
    EXPECT_EQ(one_lane.transitions, teamed.transitions) << pass;
    EXPECT_EQ(one_lane.accepted, teamed.accepted) << pass;
    EXPECT_EQ(one_lane.divergent, teamed.divergent) << pass;
    EXPECT_EQ(one_lane.non_finite, teamed.non_finite) << pass;
    EXPECT_EQ(one_lane.gradient_evaluations, teamed.gradient_evaluations) << pass;
    // accept_prob_fixed sums min(1, e^{ΔH}) in 2^-32 units, and ΔH carries the energies'
    // rounding (a few ulps of H, H of order ten here): besides one unit (2^-32) of rounding per
    // transition, 64 ε per transition.
    const double transitions = static_cast<double>(one_lane.transitions);
    EXPECT_NEAR(one_lane.accept_prob_sum(), teamed.accept_prob_sum(),
                transitions * (1 / kAcceptProbScale +
                               64 * static_cast<double>(std::numeric_limits<T>::epsilon())))
        << pass;

    const std::vector<T> x1 = cpu.positions(), xt = team.positions();
    EXPECT_EQ(x1.size(), xt.size());
    if (x1.size() != xt.size()) return forward;
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < x1.size(); ++i) mismatches += same_bits(x1[i], xt[i]) ? 0 : 1;
    EXPECT_EQ(mismatches, 0u) << pass << ": positions differ";

    const std::vector<double>& w1 = cpu.log_weights();
    const std::vector<double>& wt = team.log_weights();
    EXPECT_EQ(w1.size(), wt.size());
    if (w1.size() != wt.size()) return forward;
    for (std::size_t i = 0; i < w1.size(); ++i) {
      if (std::isinf(w1[i])) {
        EXPECT_EQ(w1[i], wt[i]) << pass << ": particle " << i;
      } else {
        EXPECT_NEAR(w1[i], wt[i], tolerance * (1 + std::fabs(w1[i]))) << pass << ": particle " << i;
      }
    }
    EXPECT_EQ(team.written_padding(), 0) << pass << ": a lane wrote into the row padding";
    if (!reverse) forward = one_lane;
  }
  return forward;
}

// The protocol's target shape (more experts than lanes, dimension not a multiple of the lanes)
// with the team gradient, and a complete product for the reverse run from exact draws.
TEST(AisTeam, ProductOfExpertsRunsAgreeWithOneLane) {
  const auto overcomplete = models::ProductOfExpertsData<double>::synthetic(
      models::ExpertKind::student_t, 12, 40, 1.5, 3.0, 7);
  const IterationStats s =
      expect_team_agrees(overcomplete.host_model(), 9, 24, hais_settings<double>(0.3), false, 32,
                         "poe_student_t 12x40");
  EXPECT_GT(s.accepted, 0);
  EXPECT_LT(s.accepted, s.transitions);
  const auto complete =
      models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 6, 6);
  expect_team_agrees(complete.host_model(), 7, 20, hais_settings<double>(0.3), true, 5,
                     "poe_laplace 6x6");
  const auto single = models::ProductOfExpertsData<float>::synthetic(models::ExpertKind::student_t,
                                                                     6, 10, 1.5, 3.0, 3);
  expect_team_agrees(single.host_model(), 5, 15, hais_settings<float>(0.3), false, 7,
                     "poe_student_t float");
}

TEST(AisTeam, GaussianAndBatchedProblemsAgreeWithOneLane) {
  expect_team_agrees(models::Gaussian<double>::make(5, 0.3, 1.0, 0.8), 6, 20,
                     hais_settings<double>(), true, 40, "gaussian");
  const auto batch = models::LinearGenerativeData<double>::synthetic(
      5, 4, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0, 17);
  expect_team_agrees(batch.host_model(), 12, 15, hais_settings<double>(), true, 3,
                     "linear_generative batch");
}

TEST(AisTeam, BaselineTransitionsBoundsAndFailedStartsAgreeWithOneLane) {
  const auto data = models::BoltzmannRelaxationData<double>::synthetic(6, 3);
  AisSettings<double> hmc = hais_settings<double>(0.25);
  hmc.refresh = 1.0;
  hmc.steps = 3;
  expect_team_agrees(data.host_model(), 6, 12, hmc, true, 4, "boltzmann plain HMC");
  AisSettings<double> rwm;
  rwm.transition = AisTransition::metropolis;
  rwm.proposal_scale = 0.4;
  rwm.steps = 2;
  expect_team_agrees(data.host_model(), 6, 12, rwm, true, 4, "boltzmann random walk");

  AisBaseSpec base;
  base.mean = {0.0, 0.0, 0.5};
  base.scale = {0.7, 1.0, 1.5};
  expect_team_agrees(testing::BoxedGaussian{}, 8, 20, hais_settings<double>(0.6), false, 2,
                     "boxed gaussian", base);
  const IterationStats s =
      expect_team_agrees(testing::HalfSpaceGaussian{}, 12, 15, hais_settings<double>(0.5), false, 3,
                         "half-space gaussian");
  EXPECT_GT(s.non_finite, 0);
}

}  // namespace
}  // namespace myriad
