// The CUDA tempering backend against the CPU backend (DESIGN.md, rule 1: one per-chain code
// path, detail/tempering_chain_bodies.hpp). Compiled by the host compiler: it reaches the CUDA
// backend through make_cuda_tempering_backend, which the library instantiates for the built-in
// annealing targets (kernels/builtin_instances.cmake). Every test skips without a CUDA device.
//
// What "agree" means: both backends run the same transitions on the same Philox numbers (chain
// c's stream is (seed, c), each counter fixed by iteration and purpose), so the same seed gives
// the same chains up to rounding (nvcc's FMA contraction, libdevice's exp/log/expm1 within an ulp
// or two of glibc's). In double, over 70 transitions of ≤ 20 leapfrog steps on these small
// targets the differences stay near 1e-12 relative; an accept/reject or index decision flips only
// when its uniform falls within that of the threshold (probability ~1e-12 per decision, ~10^5
// decisions here), so the estimates must agree to kTolerance = 1e-8 relative and the counters
// exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/cuda_skip.hpp"
#include "common/run_configs.hpp"
#include "common/temper_methods.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/models/builtin_targets.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {
namespace {

constexpr double kTolerance = 1e-8;

bool close(double a, double b) {
  return std::fabs(a - b) <= kTolerance * std::max(1.0, std::fabs(a));
}

/// 77 chains: not a multiple of the warp size, so the padded lanes and the last, partial warp
/// are exercised; 70 transitions in chunks of 30, so a launch resumes every chain mid-run.
TemperConfig short_config(TemperMethod method) {
  TemperConfig config = testing::run_config<TemperConfig>(77, 20, 50, 8675309);
  config.method = method;
  config.step_size = 0.2;
  config.leapfrog_steps = 10;
  config.log_zeta = -0.5;
  config.temperatures = 21;
  config.initial_u = -2;
  config.chunk_iterations = 30;
  return config;
}

/// The same target on either side: `on_host` for the CPU, `on_device` (its device copy, for a
/// target that owns arrays) for CUDA.
template <class Target>
void expect_agree(const Target& on_host, const Target& on_device, TemperConfig config,
                  const std::string& what) {
  config.device = Device::cpu;
  const TemperResult cpu = temper(on_host, config);
  config.device = Device::cuda;
  const TemperResult cuda = temper(on_device, config);
  EXPECT_NE(cuda.device.find("sm_"), std::string::npos) << what << ": ran on " << cuda.device;
  EXPECT_EQ(cpu.stats.transitions, cuda.stats.transitions) << what;
  EXPECT_EQ(cpu.stats.gradient_evaluations, cuda.stats.gradient_evaluations) << what;
  EXPECT_EQ(cpu.stats.accepted, cuda.stats.accepted) << what;
  EXPECT_EQ(cpu.stats.divergent, cuda.stats.divergent) << what;
  EXPECT_EQ(cpu.dropped, cuda.dropped) << what;
  EXPECT_TRUE(close(cpu.log_z.value, cuda.log_z.value))
      << what << ": log Z " << cpu.log_z.value << " (cpu) vs " << cuda.log_z.value;
  EXPECT_TRUE(close(cpu.log_z.se, cuda.log_z.se)) << what;
  EXPECT_TRUE(close(cpu.mean_beta, cuda.mean_beta)) << what;
  EXPECT_TRUE(close(cpu.beta_rhat, cuda.beta_rhat)) << what;
  for (int i = 0; i < cpu.dim; ++i) {
    EXPECT_TRUE(close(cpu.target_mean[i].value, cuda.target_mean[i].value)) << what << " " << i;
    EXPECT_TRUE(close(cpu.target_sd[i], cuda.target_sd[i])) << what << " " << i;
    EXPECT_TRUE(close(cpu.base_mean[i].value, cuda.base_mean[i].value)) << what << " " << i;
  }
}

class CudaTempering : public ::testing::TestWithParam<TemperMethod> {};

TEST_P(CudaTempering, GaussianAgreesWithTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  TemperConfig config = short_config(GetParam());
  config.base.mean = {0.5, -0.5, 0.0, 1.0, 0.0};  // a base with its own mean and scale
  config.base.scale = {1.0, 2.0, 0.5, 1.0, 1.5};
  const auto gaussian = models::Gaussian<double>::make(5, 0.3, 1.0, 0.8);
  expect_agree(gaussian, gaussian, config, "gaussian");
}

TEST_P(CudaTempering, BuiltinTargetsAgreeWithTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const TemperConfig config = short_config(GetParam());
  auto boltzmann = models::BoltzmannRelaxationData<double>::synthetic(10);
  expect_agree(boltzmann.host_model(), boltzmann.device_model(), config, "boltzmann_relaxation");
  auto laplace = models::ProductOfExpertsData<double>::synthetic(models::ExpertKind::laplace, 8, 8);
  expect_agree(laplace.host_model(), laplace.device_model(), config, "poe_laplace");
}

INSTANTIATE_TEST_SUITE_P(Methods, CudaTempering, testing::kTemperMethods,
                         testing::TemperMethodName{});

}  // namespace
}  // namespace myriad
