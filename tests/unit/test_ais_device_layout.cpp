// The CUDA AIS backend's memory layout, exercised on the host (DESIGN.md, rule 1: one
// per-particle code path; rule 3: structure of arrays).
//
// kernels/cuda_ais_backend.cuh keeps each particle array [dim][particle] with the particle count
// padded to a multiple of 32 (stride = round_up(total, 32), chain_stride = 1), and the kernels of
// kernels/ais_kernels.cuh are loops over the bodies of detail/ais_particle_bodies.hpp
// (start_particle_at, anneal_particle_at, and kernels::AisEnsembleView::particle, which builds a
// particle's views from EnsembleView<T>::chain(i)). CpuAisBackend keeps [particle][dim] rows
// instead. Here those same bodies run on the host over the device layout (DeviceLayoutAis sets
// up the arrays as the backend does and loops as the kernels do) and must reproduce
// CpuAisBackend bit for bit: log weights, final positions, failed starts and every transition
// counter. On one compiler the two layouts run the same instructions on the same numbers, only
// through different strides, so any difference is an indexing bug (a stride, an offset, a particle
// reading its neighbour's column), not rounding. This is what lets the CPU suite vouch for the
// kernel bodies; tests/cuda/test_cuda_ais.cpp then checks the device itself where there is one.
//
// The layout run also differs from the CPU run where it must not matter: particles are visited
// in descending order (a GPU schedules them in any order), temperatures go in chunks of 7
// launches instead of one, every array starts filled with NaN (the device buffers' scratch is
// never read before it is written, and the padding lanes past the last particle must never be
// written at all: they are checked to still hold NaN).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/ais_layout_support.hpp"
#include "common/ais_test_targets.hpp"
#include "common/same_bits.hpp"
#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/cpu_ais_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/product_of_experts.hpp"

namespace myriad {
namespace {

using testing::base_view_of;
using testing::hais_settings;
using testing::same_bits;

/// Temperatures per simulated launch in the device-layout run (the CPU run uses one call).
constexpr std::uint32_t kLaunchTemperatures = 7;

/// The padded particle stride of CudaAisBackend: total rounded up to a multiple of 32.
std::int64_t padded_stride(std::int64_t total) { return (total + 31) / 32 * 32; }

/// CudaAisBackend's state in the thread mapping, and its two kernels' loops over the bodies of
/// detail/ais_particle_bodies.hpp, on the host.
template <class Target, class T>
class DeviceLayoutAis {
 public:
  DeviceLayoutAis(const Target& target, AisLayout<T> layout)
      : target_(target),
        layout_(std::move(layout)),
        total_(layout_.particles()),
        stride_(padded_stride(total_)) {
    const auto values = static_cast<std::size_t>(layout_.dim) * static_cast<std::size_t>(stride_);
    state_.fill_nan(values, total_);
  }

  std::int64_t stride() const { return stride_; }

  /// ais_start_kernel's loop over start_particle_at, particles visited last to first; returns
  /// the failed starts.
  std::int64_t start(std::uint64_t seed, bool reverse) {
    seed_ = seed;
    reverse_ = reverse;
    const AnnealingBase<T> base = base_view_of(layout_);
    const AisBatch batch{seed_, layout_.particles_per_problem, total_};
    std::vector<std::uint8_t> started(static_cast<std::size_t>(total_), 2);
    for (std::int64_t i = total_ - 1; i >= 0; --i)
      kernels::start_particle_at(target_, ensemble_view(), base, batch, reverse, started.data(), i);
    EXPECT_EQ(std::count(started.begin(), started.end(), std::uint8_t{2}), 0) << "unstarted";
    return std::count(started.begin(), started.end(), std::uint8_t{0});
  }

  /// ais_steps_kernel's loop over anneal_particle_at for [k_begin, k_end), particles visited
  /// last to first; the per-particle counters summed as reduce_sum does.
  IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin, std::uint32_t k_end) {
    const AnnealingBase<T> base = base_view_of(layout_);
    const AnnealingPath path{layout_.beta.data(), layout_.temperatures(), reverse_};
    const AisBatch batch{seed_, layout_.particles_per_problem, total_};
    std::vector<IterationStats> per_particle(static_cast<std::size_t>(total_));
    for (std::int64_t i = total_ - 1; i >= 0; --i)
      kernels::anneal_particle_at(target_, ensemble_view(), base, batch, path, k_begin, k_end,
                                  settings, per_particle.data(), i);
    IterationStats stats;
    for (const IterationStats& s : per_particle) stats += s;
    return stats;
  }

  const std::vector<double>& log_weights() const { return state_.log_weight; }

  /// CudaAisBackend::positions: [dim][padded particle] → [particle][dim].
  std::vector<T> positions() const {
    return testing::particle_major(state_.position, total_, layout_.dim, offset());
  }

  /// Number of padding entries (particle index ≥ total in some array) that are no longer NaN.
  std::int64_t written_padding() const {
    return testing::written_padding(state_, total_, layout_.dim, offset());
  }

 private:
  /// Where coordinate d of particle i lives: [dim][padded particle].
  auto offset() const {
    return [stride = stride_](std::int64_t i, int d) { return d * stride + i; };
  }

  /// CudaAisBackend::view: chain_stride 1, the padded stride between dimensions.
  EnsembleView<T> view(std::vector<T>& array) {
    return {array.data(), total_, layout_.dim, stride_};
  }

  /// CudaAisBackend::state_view in the thread mapping.
  kernels::AisEnsembleView<T> ensemble_view() {
    return state_.ensemble_view([this](std::vector<T>& array) { return view(array); });
  }

  Target target_;
  AisLayout<T> layout_;
  std::int64_t total_;
  std::int64_t stride_;
  std::uint64_t seed_ = 0;
  bool reverse_ = false;
  testing::ParticleArrays<T> state_;
};

void expect_same_stats(const IterationStats& cpu, const IterationStats& layout,
                       const std::string& what) {
  EXPECT_EQ(cpu.accept_prob_fixed, layout.accept_prob_fixed) << what;
  EXPECT_EQ(cpu.transitions, layout.transitions) << what;
  EXPECT_EQ(cpu.accepted, layout.accepted) << what;
  EXPECT_EQ(cpu.divergent, layout.divergent) << what;
  EXPECT_EQ(cpu.non_finite, layout.non_finite) << what;
  EXPECT_EQ(cpu.gradient_evaluations, layout.gradient_evaluations) << what;
}

template <class V>
void expect_bitwise_equal(const std::vector<V>& cpu, const std::vector<V>& layout,
                          const std::string& what) {
  ASSERT_EQ(cpu.size(), layout.size()) << what;
  std::size_t mismatches = 0, first = cpu.size();
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    if (!same_bits(cpu[i], layout[i])) {
      if (mismatches++ == 0) first = i;
    }
  }
  EXPECT_EQ(mismatches, 0u) << what << ": first difference at " << first << ": cpu "
                            << (first < cpu.size() ? cpu[first] : V(0)) << ", device layout "
                            << (first < cpu.size() ? layout[first] : V(0));
}

/// Runs `target` through CpuAisBackend (one call for all temperatures) and through the device
/// layout (chunks of kLaunchTemperatures), forward and, if asked, then reverse on the same
/// objects (as run_ais does), and requires bit-identical results. Returns the forward counters
/// so callers can check that the run did something.
template <class Target, class T = typename Target::value_type>
IterationStats expect_layouts_agree(const Target& target, std::int64_t particles, int temperatures,
                                    const AisSettings<T>& settings, bool with_reverse,
                                    const std::string& what, const AisBaseSpec& base = {},
                                    std::uint64_t seed = 977) {
  AisLayout<T> layout = make_ais_layout<Target, T>(
      target, particles, make_schedule(ScheduleKind::linear, temperatures, 0.0), base);
  const auto n = static_cast<std::uint32_t>(layout.temperatures());
  CpuAisBackend<Target, T> cpu(target, layout, /*simd_lanes=*/false);
  DeviceLayoutAis<Target, T> device(target, layout);
  EXPECT_NE(device.stride(), layout.particles()) << what << ": pick a total that needs padding";

  IterationStats forward;
  for (const bool reverse : {false, true}) {
    if (reverse && !with_reverse) break;
    const std::string pass = what + (reverse ? " (reverse)" : " (forward)");
    EXPECT_EQ(cpu.start(seed, reverse), device.start(seed, reverse)) << pass << ": failed starts";
    const IterationStats cpu_stats = cpu.run(settings, 1, n + 1);
    IterationStats device_stats;
    for (std::uint32_t k = 1; k <= n; k += kLaunchTemperatures)
      device_stats += device.run(settings, k, std::min(k + kLaunchTemperatures, n + 1));
    expect_same_stats(cpu_stats, device_stats, pass);
    expect_bitwise_equal(cpu.log_weights(), device.log_weights(), pass + " log weights");
    expect_bitwise_equal(cpu.positions(), device.positions(), pass + " positions");
    EXPECT_EQ(device.written_padding(), 0) << pass << ": a particle wrote past the last column";
    if (!reverse) forward = cpu_stats;
  }
  return forward;
}

TEST(AisDeviceLayout, GaussianForwardAndReverse) {
  const auto target = models::Gaussian<double>::make(5, 0.3, 1.0, 0.8);
  const IterationStats s =
      expect_layouts_agree(target, 70, 40, hais_settings<double>(), true, "gaussian");
  EXPECT_EQ(s.transitions, 70 * 39);
  EXPECT_GT(s.accepted, 0);
  EXPECT_LT(s.accepted, s.transitions);  // both branches of the Metropolis test were taken
}

TEST(AisDeviceLayout, StudentTExpertsForwardAndReverseInBothPrecisions) {
  const auto d = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::student_t, 6,
                                                                 6, 0.8, 2.0, 5);
  expect_layouts_agree(d.host_model(), 45, 30, hais_settings<double>(0.3), true,
                       "poe_student_t double");
  const auto f = models::ProductOfExpertsData<float>::synthetic(models::ExpertKind::student_t, 6, 6,
                                                                0.8, 2.0, 5);
  expect_layouts_agree(f.host_model(), 45, 30, hais_settings<float>(0.3), true,
                       "poe_student_t float");
}

// A two-level batch (hais.md §6): three data points, problem p = particle / B, each with its own
// x_p and, in reverse, its own exact posterior draws.
TEST(AisDeviceLayout, LinearGenerativeBatchForwardAndReverse) {
  const auto gaussian = models::LinearGenerativeData<double>::synthetic(
      5, 4, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0, 17);
  expect_layouts_agree(gaussian.host_model(), 45, 25, hais_settings<double>(), true,
                       "linear_generative gaussian batch");
  // Laplace prior: the reverse run starts every particle of problem p at the generating latent.
  const auto laplace = models::LinearGenerativeData<double>::synthetic(
      5, 4, 3, models::LinearGenerativePrior::laplace, 0.3, 1.0, 17);
  expect_layouts_agree(laplace.host_model(), 45, 25, hais_settings<double>(), true,
                       "linear_generative laplace batch");
}

// The other transitions: full-refresh HMC with several leapfrog steps, and random-walk
// Metropolis with two moves per temperature (proposal draws indexed step · D + i).
TEST(AisDeviceLayout, BaselineTransitionsOnTheBoltzmannRelaxation) {
  const auto data = models::BoltzmannRelaxationData<double>::synthetic(6, 3);
  AisSettings<double> hmc = hais_settings<double>(0.25);
  hmc.refresh = 1.0;
  hmc.steps = 3;
  const IterationStats s =
      expect_layouts_agree(data.host_model(), 50, 20, hmc, true, "boltzmann plain HMC");
  EXPECT_EQ(s.gradient_evaluations, 50 * 19 * 3);
  AisSettings<double> rwm;
  rwm.transition = AisTransition::metropolis;
  rwm.proposal_scale = 0.4;
  rwm.steps = 2;
  const IterationStats w =
      expect_layouts_agree(data.host_model(), 50, 20, rwm, true, "boltzmann random walk");
  EXPECT_EQ(w.transitions, 50 * 19 * 2);
}

TEST(AisDeviceLayout, BoundsReflectionAndAUserBase) {
  AisBaseSpec base;
  base.mean = {0.0, 0.0, 0.5};
  base.scale = {0.7, 1.0, 1.5};
  // A long step so that proposals cross the bounds and get reflected.
  expect_layouts_agree(testing::BoxedGaussian{}, 40, 30, hais_settings<double>(0.6), false,
                       "boxed gaussian", base);
}

TEST(AisDeviceLayout, ZeroDensityStartsAndRejections) {
  const IterationStats s =
      expect_layouts_agree(testing::HalfSpaceGaussian{}, 60, 20, hais_settings<double>(0.5), false,
                           "half-space gaussian");
  EXPECT_GT(s.non_finite, 0);
}

}  // namespace
}  // namespace myriad
