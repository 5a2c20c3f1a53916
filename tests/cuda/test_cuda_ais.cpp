// The CUDA AIS backend against the CPU backend (DESIGN.md, rule 1: one per-particle code path).
// Compiled by the host compiler: it reaches the CUDA backend through make_cuda_ais_backend, which
// the library instantiates for the built-in targets (kernels/builtin_instances.cmake). Every test
// skips without a CUDA device. The exact-answer checks on the device are in
// tests/stat/test_ais_exact.cpp; the CPU backend is a loop over the kernels' own per-particle
// bodies (detail/ais_particle_bodies.hpp), so the CPU suites run them too.
//
// What "agree" means, and why the tolerances are what they are:
//  * Both backends run estimate/hais.hpp on the same Philox numbers: the stream of particle i is
//    (seed, i) forward and (seed, total + i) reverse on either device, and each counter is fixed
//    by (temperature, purpose, draw), not by the launch. So the same seed gives the same path,
//    particle by particle, up to rounding: nvcc contracts a·b + c into FMAs where g++ (baseline
//    x86-64, no FMA) rounds twice, and CUDA's libdevice log/exp/log1p/sqrt/sin/cos (the normals
//    are Box–Muller) may differ from glibc's by an ulp or two.
//  * Double: a log weight is Σ_n Δβ (log p̃ − log q̃) over ≤ 50 temperatures of terms ≲ 10²; a
//    particle's trajectory at ε ≤ 0.3 is a stable map, so rounding differences grow about
//    linearly with the number of operations (≲ 50 temperatures × 3 leapfrog steps × ~10³
//    operations per gradient for these sizes): ≲ 10⁵ ulp ≈ 1e-11 relative. kTolerance = 1e-9
//    relative to max(1, |value|) leaves a margin of 100.
//  * Float: ulp 6e-8, so the same count gives ≈ 6e-3 in the worst case and far less in
//    practice (errors do not all add with one sign); kTolerance = 2e-3 as for the HMC backends
//    (tests/cuda/test_cuda_hmc.cpp), with the same margin argument.
//  * An accept/reject decision differs only when log u falls within the rounding error δ of the
//    energy difference; log u has density ≤ 1, so that happens with probability ≤ δ per
//    transition: ~1e-13 in double, ~1e-4 in float (energies ~10² with ~10 ulp of error). With
//    ≲ 10⁴ transitions per comparison no particle may flip in double, at most kAllowedFlips in
//    float; a flipped particle's path legitimately parts from the CPU's and is left out of the
//    position comparison (it shows up as a log-weight mismatch, which is what is counted).
//  * Launch configuration and chunking change nothing on the device: each particle's arithmetic
//    is the same code in the same order however the temperatures are split into launches, so
//    chunked and unchunked CUDA runs are bit-identical.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cuda_skip.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/models/builtin_targets.hpp"
#include "myriad/run/ais.hpp"

namespace myriad {
namespace {

template <class T>
constexpr double kTolerance = sizeof(T) == sizeof(float) ? 2e-3 : 1e-9;
template <class T>
constexpr int kAllowedFlips = sizeof(T) == sizeof(float) ? 2 : 0;

/// 77 particles per problem: not a multiple of the warp size, so the device's padded lanes and
/// its last, partial warp are exercised.
AisConfig short_config(std::int64_t particles = 77, int temperatures = 50,
                       std::uint64_t seed = 424242) {
  AisConfig config;
  config.particles = particles;
  config.temperatures = temperatures;
  config.seed = seed;
  config.bootstrap_replicates = 0;
  config.keep_particles = true;
  return config;
}

/// `config` with its reverse half: annealing back from exact draws too (BDMC).
AisConfig with_reverse(AisConfig config) {
  config.reverse = true;
  return config;
}

bool close(double a, double b, double tolerance) {
  if (a == b) return true;  // also ±inf (zero-weight particles)
  return std::fabs(a - b) <= tolerance * std::max(1.0, std::fabs(a));
}

/// Compares one pass; returns the particles whose log weights differ beyond the tolerance.
template <class T>
std::vector<std::int64_t> compare_pass(const AisPass& cpu, const AisPass& cuda,
                                       const std::string& what) {
  std::vector<std::int64_t> flipped;
  EXPECT_EQ(cpu.failed_starts, cuda.failed_starts) << what;
  EXPECT_EQ(cpu.log_weights.size(), cuda.log_weights.size()) << what;
  const std::size_t n = std::min(cpu.log_weights.size(), cuda.log_weights.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!close(cpu.log_weights[i], cuda.log_weights[i], kTolerance<T>)) {
      // In double every mismatch is a failure worth printing; in float a few are expected.
      if (kAllowedFlips<T> == 0 && flipped.size() < 5) {
        ADD_FAILURE() << what << ": particle " << i << " log weight " << cpu.log_weights[i]
                      << " (cpu) vs " << cuda.log_weights[i] << " (cuda)";
      }
      flipped.push_back(static_cast<std::int64_t>(i));
    }
  }
  EXPECT_LE(static_cast<int>(flipped.size()), kAllowedFlips<T>)
      << what << ": particles whose log weights differ beyond " << kTolerance<T>;
  // Counters: the same work everywhere; decisions the same except on flipped particles.
  EXPECT_EQ(cpu.stats.transitions, cuda.stats.transitions) << what;
  EXPECT_EQ(cpu.stats.gradient_evaluations, cuda.stats.gradient_evaluations) << what;
  const std::int64_t per_particle =
      n > 0 ? cpu.stats.transitions / static_cast<std::int64_t>(n) : 0;
  EXPECT_LE(std::abs(cpu.stats.accepted - cuda.stats.accepted),
            static_cast<std::int64_t>(flipped.size()) * per_particle)
      << what << ": accepted " << cpu.stats.accepted << " (cpu) vs " << cuda.stats.accepted;
  EXPECT_NEAR(cpu.stats.mean_accept_prob(), cuda.stats.mean_accept_prob(),
              1e-6 + static_cast<double>(flipped.size()) / std::max<double>(1.0, n))
      << what;
  EXPECT_EQ(cpu.stats.divergent, cuda.stats.divergent) << what;
  EXPECT_EQ(cpu.stats.non_finite, cuda.stats.non_finite) << what;
  return flipped;
}

/// Forward (and reverse) passes, estimates and final positions of two runs agree.
template <class T>
void expect_agree(const AisResult& cpu, const AisResult& cuda, const std::string& what) {
  ASSERT_EQ(cpu.problems, cuda.problems) << what;
  ASSERT_EQ(cpu.particles, cuda.particles) << what;
  EXPECT_NE(cuda.device.find("sm_"), std::string::npos) << what << ": ran on " << cuda.device;
  EXPECT_EQ(cpu.log_z_base, cuda.log_z_base) << what;
  const auto flipped = compare_pass<T>(cpu.forward, cuda.forward, what + " forward");
  if (flipped.empty()) {
    for (int p = 0; p < cpu.problems; ++p)
      EXPECT_TRUE(
          close(cpu.forward.estimates[p].log_z, cuda.forward.estimates[p].log_z, kTolerance<T>))
          << what << " problem " << p << ": log Z " << cpu.forward.estimates[p].log_z
          << " (cpu) vs " << cuda.forward.estimates[p].log_z << " (cuda)";
  }
  ASSERT_EQ(cpu.positions.size(), cuda.positions.size()) << what;
  const int dim = cpu.dim;
  int mismatched = 0;
  for (std::size_t i = 0; i < cpu.positions.size(); ++i) {
    const auto particle = static_cast<std::int64_t>(i / dim);
    if (std::find(flipped.begin(), flipped.end(), particle) != flipped.end()) continue;
    if (!close(cpu.positions[i], cuda.positions[i], kTolerance<T>) && mismatched++ < 5) {
      ADD_FAILURE() << what << ": particle " << particle << " coordinate " << i % dim << ": "
                    << cpu.positions[i] << " (cpu) vs " << cuda.positions[i] << " (cuda)";
    }
  }
  EXPECT_EQ(mismatched, 0) << what << ": final positions";
  ASSERT_EQ(cpu.has_reverse, cuda.has_reverse) << what;
  if (cpu.has_reverse) {
    const auto reverse_flipped = compare_pass<T>(cpu.reverse, cuda.reverse, what + " reverse");
    if (reverse_flipped.empty()) {
      for (int p = 0; p < cpu.problems; ++p)
        EXPECT_TRUE(
            close(cpu.reverse.estimates[p].log_z, cuda.reverse.estimates[p].log_z, kTolerance<T>))
            << what << " problem " << p << " (reverse)";
    }
  }
}

/// Runs an owning model on both devices with the same configuration.
template <class Data>
void expect_owned_agree(Data& data, AisConfig config, const std::string& what) {
  using T = typename decltype(data.host_model())::value_type;
  config.device = Device::cpu;
  const AisResult cpu = ais(data.host_model(), config);
  config.device = Device::cuda;
  const AisResult cuda = ais(data.device_model(), config);
  expect_agree<T>(cpu, cuda, what);
}

/// The same for a model that owns no data (models::Gaussian).
template <class Target>
void expect_plain_agree(const Target& target, AisConfig config, const std::string& what) {
  config.device = Device::cpu;
  const AisResult cpu = ais(target, config);
  config.device = Device::cuda;
  const AisResult cuda = ais(target, config);
  expect_agree<typename Target::value_type>(cpu, cuda, what);
}

TEST(CudaAis, GaussianAgreesWithTheCpuForwardAndReverse) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  AisConfig config = with_reverse(short_config());
  expect_plain_agree(models::Gaussian<double>::make(8, 0.5, 1.5, 0.7), config, "gaussian");
}

TEST(CudaAis, BuiltinTargetsAgreeWithTheCpuInDouble) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  AisConfig config = with_reverse(short_config());
  auto laplace =
      models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 12, 12);
  expect_owned_agree(laplace, config, "poe_laplace");
  auto student =
      models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::student_t, 12, 12);
  expect_owned_agree(student, config, "poe_student_t");
  // A batch of three problems: 3 × 77 = 231 particles, problem p = particle / 77.
  auto gaussian_prior = models::LinearGenerativeData<double>::synthetic(
      8, 6, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  expect_owned_agree(gaussian_prior, config, "linear_generative gaussian");
  auto laplace_prior = models::LinearGenerativeData<double>::synthetic(
      8, 6, 3, models::LinearGenerativePrior::laplace, 0.3, 1.0);
  expect_owned_agree(laplace_prior, config, "linear_generative laplace");
  auto boltzmann = models::BoltzmannRelaxationData<double>::synthetic(10);
  expect_owned_agree(boltzmann, config, "boltzmann_relaxation");
  // No exact answer and no exact draws: forward only.
  auto mcrbm = models::McrbmData<double>::synthetic(12, 16, 16, 8);
  expect_owned_agree(mcrbm, short_config(), "mcrbm");
}

TEST(CudaAis, FloatAgreesWithTheCpuLoosely) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  AisConfig config = with_reverse(short_config());
  expect_plain_agree(models::Gaussian<float>::make(8, 0.5, 1.5, 0.7), config, "gaussian float");
  auto student =
      models::ProductOfExpertsData<float>::synthetic(models::ExpertKind::student_t, 12, 12);
  expect_owned_agree(student, config, "poe_student_t float");
  auto linear = models::LinearGenerativeData<float>::synthetic(
      8, 6, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  expect_owned_agree(linear, config, "linear_generative float");
}

// Full-refresh HMC with several leapfrog steps and random-walk Metropolis (hais.md §10's
// baselines) take the other branches of the per-particle code.
TEST(CudaAis, BaselineTransitionsAgreeWithTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  auto boltzmann = models::BoltzmannRelaxationData<double>::synthetic(10);
  AisConfig hmc = with_reverse(short_config());
  hmc.refresh = 1.0;
  hmc.steps = 3;
  expect_owned_agree(boltzmann, hmc, "boltzmann plain HMC");
  AisConfig rwm = with_reverse(short_config());
  rwm.transition = AisTransition::metropolis;
  rwm.proposal_scale = 0.4;
  rwm.steps = 2;
  expect_owned_agree(boltzmann, rwm, "boltzmann random walk");
}

// Totals of 1, 31, 33 and 3 × 45 = 135 particles: a lone thread, a partial warp, one lane past
// a warp, several problems ending mid-warp.
TEST(CudaAis, ParticleCountsThatAreNotMultiplesOf32) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const auto gaussian = models::Gaussian<double>::make(5, 0.3, 1.0, 0.8);
  for (const std::int64_t particles : {1, 31, 33}) {
    AisConfig config = with_reverse(short_config(particles, 20));
    expect_plain_agree(gaussian, config, "gaussian, " + std::to_string(particles) + " particles");
  }
  auto linear = models::LinearGenerativeData<double>::synthetic(
      6, 4, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
  AisConfig config = with_reverse(short_config(45, 20));
  expect_owned_agree(linear, config, "linear_generative, 3 x 45 particles");
}

// Both particle mappings on every kind of target: the protocol's shape with the team gradient
// (more experts than lanes), targets evaluated by lane 0 alone, a batch with reverse runs from
// exact draws, and the random-walk baseline. The device name says which mapping ran.
TEST(CudaAis, BothParticleMappingsAgreeWithTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  for (const AisParticleMapping mapping : {AisParticleMapping::thread, AisParticleMapping::warp}) {
    const std::string name = to_string(mapping);
    AisConfig config = short_config(45, 30);
    config.particle_mapping = mapping;
    auto student = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::student_t,
                                                                   36, 144, 1.5, 3.0, 2011);
    expect_owned_agree(student, config, "poe_student_t 36x144, " + name);
    config.reverse = true;
    const AisResult cuda = [&] {
      AisConfig c = config;
      c.device = Device::cuda;
      return ais(models::Gaussian<double>::make(37, 0.3, 1.0, 0.8), c);
    }();
    EXPECT_NE(cuda.device.find("one " + name + " per particle"), std::string::npos) << cuda.device;
    expect_plain_agree(models::Gaussian<double>::make(37, 0.3, 1.0, 0.8), config,
                       "gaussian 37, " + name);
    auto linear = models::LinearGenerativeData<double>::synthetic(
        8, 6, 3, models::LinearGenerativePrior::gaussian, 0.3, 1.0);
    expect_owned_agree(linear, config, "linear_generative batch, " + name);
    auto boltzmann = models::BoltzmannRelaxationData<double>::synthetic(10);
    AisConfig rwm = config;
    rwm.transition = AisTransition::metropolis;
    rwm.proposal_scale = 0.4;
    rwm.steps = 2;
    expect_owned_agree(boltzmann, rwm, "boltzmann random walk, " + name);
    auto single =
        models::ProductOfExpertsData<float>::synthetic(models::ExpertKind::student_t, 12, 30);
    AisConfig forward = short_config(45, 30);
    forward.particle_mapping = mapping;
    expect_owned_agree(single, forward, "poe_student_t float, " + name);
  }
}

TEST(CudaAis, ChunkingDoesNotChangeResultsOnTheDevice) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  auto data = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::student_t, 8, 8);
  AisConfig config = with_reverse(short_config(77, 40));
  config.device = Device::cuda;
  std::vector<AisResult> runs;
  for (const int chunk : {1, 7, 1000}) {
    config.chunk_temperatures = chunk;
    runs.push_back(ais(data.device_model(), config));
  }
  for (std::size_t r = 1; r < runs.size(); ++r) {
    EXPECT_EQ(runs[0].forward.log_weights, runs[r].forward.log_weights) << "run " << r;
    EXPECT_EQ(runs[0].positions, runs[r].positions) << "run " << r;
    EXPECT_EQ(runs[0].reverse.log_weights, runs[r].reverse.log_weights) << "run " << r;
    EXPECT_EQ(runs[0].forward.stats.accept_prob_fixed, runs[r].forward.stats.accept_prob_fixed);
    EXPECT_EQ(runs[0].forward.stats.accepted, runs[r].forward.stats.accepted);
    EXPECT_EQ(runs[0].reverse.stats.accepted, runs[r].reverse.stats.accepted);
  }
}

}  // namespace
}  // namespace myriad
