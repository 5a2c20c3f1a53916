// The CUDA backend of the auxiliary-variable samplers against the CPU backend (DESIGN.md rule 1:
// one per-chain code path, detail/auxiliary_chain_bodies.hpp), through the library's instances
// (kernels/builtin_instances.cmake), the GP probit's with its preparations batched across chains;
// and one exact-answer run on the device. Every test skips
// without a CUDA device.
//
// Agreement: both backends draw the same Philox numbers for (seed, chain, iteration, purpose,
// draw), so a chain takes the same path on either, up to rounding (FMA contraction, CUDA's
// libdevice log/exp/sincospi against glibc's): ~1e-13 relative over these short runs. A slice's
// accept-or-shrink and a Metropolis decision flip only when a uniform falls within that rounding
// of its threshold, probability ~1e-13 per decision, so none may flip here; positions agree to
// kTolerance = 1e-9 relative and the capped counts exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_skip.hpp"
#include "common/run_configs.hpp"
#include "myriad/backend/cpu_auxiliary_backend.hpp"
#include "myriad/models/breast_cancer_wisconsin.hpp"
#include "myriad/models/gaussian_latent_variable.hpp"
#include "myriad/models/gp_probit.hpp"
#include "myriad/models/standard_logistic.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad {
namespace {

constexpr double kTolerance = 1e-9;

/// The backends on the same model: `model` on the CPU, `device_model` (the same data where they
/// live on the device) on CUDA.
template <class Model>
void expect_backends_agree(const Model& model, AuxiliaryMethod method,
                           const Model* device_model = nullptr, int iterations = 25) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  constexpr std::int64_t kChains = 77;  // a partial last warp
  CpuAuxiliaryBackend<Model, double> cpu(model, kChains, method);
  const auto cuda = make_cuda_auxiliary_backend<Model, double>(
      device_model != nullptr ? *device_model : model, kChains, method);
  AuxiliarySettings<double> settings;
  settings.method = method;
  settings.seed = 31;
  settings.slice.max_shrinks = 6;  // some updates cap
  std::vector<double> scale(static_cast<std::size_t>(model.dim()), 0.7);
  cpu.set_scale(scale);
  cuda->set_scale(scale);
  ASSERT_EQ(cpu.initialize(settings, 2.0, 100), 0);
  ASSERT_EQ(cuda->initialize(settings, 2.0, 100), 0);
  const IterationStats a = cpu.run(settings, 0, iterations, nullptr, 0, 0, nullptr);
  const IterationStats b = cuda->run(settings, 0, iterations, nullptr, 0, 0, nullptr);
  const std::string name = to_string(method);
  EXPECT_EQ(a.accepted, b.accepted) << name;
  EXPECT_EQ(a.density_evaluations, b.density_evaluations) << name;
  EXPECT_EQ(a.slice_capped, b.slice_capped) << name;
  EXPECT_EQ(a.auxiliary_accepted, b.auxiliary_accepted) << name;
  EXPECT_EQ(cpu.capped_per_chain(), cuda->capped_per_chain()) << name;
  const std::vector<double> x = cpu.positions(), y = cuda->positions();
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(x[i], y[i], kTolerance * std::max(1.0, std::abs(x[i]))) << name << " entry " << i;
}

TEST(CudaAuxiliary, EveryEstimatorMethodAgreesWithTheCpuBackend) {
  const auto model = models::GaussianLatentVariable<double>::make(10, 3, 4);
  for (const AuxiliaryMethod method :
       {AuxiliaryMethod::pm_mh, AuxiliaryMethod::apm_mi_mh, AuxiliaryMethod::apm_ss_mh,
        AuxiliaryMethod::apm_mi_ss, AuxiliaryMethod::apm_ss_ss})
    expect_backends_agree(model, method);
}

TEST(CudaAuxiliary, UniformVariatesUnderReflectiveSlicesAgreeWithTheCpuBackend) {
  const auto model = models::GaussianLatentVariable<double, AuxiliaryLaw::uniform>::make(10, 3, 4);
  for (const AuxiliaryMethod method : {AuxiliaryMethod::apm_ss_mh, AuxiliaryMethod::apm_ss_ss})
    expect_backends_agree(model, method);
}

TEST(CudaAuxiliary, EverySliceSamplerAgreesWithTheCpuBackend) {
  const auto model = models::GaussianLatentVariable<double>::make(10, 3, 4);
  for (const AuxiliaryMethod method : {AuxiliaryMethod::slice, AuxiliaryMethod::elliptical_slice,
                                       AuxiliaryMethod::reflective_slice})
    expect_backends_agree(model, method);
  expect_backends_agree(models::StandardLogistic<double>::make(3), AuxiliaryMethod::slice);
}

// The GP probit's preparations run batched across chains on the device (cuSOLVER potrfBatched,
// cuBLAS gemmBatched: kernels/staged_preparation.cuh) and serially in the chain on the CPU: the
// factors differ by rounding, so the estimates do, by ~1e-12 relative, and no decision flips
// (a Newton stopping rule's could, with probability of that order).
TEST(CudaAuxiliary, GpProbitsBatchedPreparationsAgreeWithTheCpuBackend) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const models::BreastCancerRows rows = models::breast_cancer_wisconsin(40);
  auto data = models::GpProbitData<double>::from_arrays(
      rows.rows, models::BreastCancerRows::kFeatures, rows.features, rows.labels);
  const models::GpProbit<double> host = data.host_model(8), device = data.device_model(8);
  for (const AuxiliaryMethod method :
       {AuxiliaryMethod::pm_mh, AuxiliaryMethod::apm_mi_mh, AuxiliaryMethod::apm_ss_mh,
        AuxiliaryMethod::apm_mi_ss, AuxiliaryMethod::apm_ss_ss})
    expect_backends_agree(host, method, &device, 10);
}

TEST(CudaAuxiliary, ApmOnTheDeviceRecoversTheExactPosteriorMean) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const auto model = models::GaussianLatentVariable<double>::make(10, 3, 8);
  AuxiliaryConfig config;
  static_cast<SampleConfig&>(config) = testing::run_config(1024, 500, 500, 9, Device::cuda);
  config.method = AuxiliaryMethod::apm_mi_mh;
  const SampleResult result = sample_auxiliary(model, config);
  for (int d = 0; d < model.dim(); ++d) {
    const auto& row = result.summary[static_cast<std::size_t>(d)];
    EXPECT_NEAR(row.mean, model.exact_mean(d), 5 * row.mcse_mean) << row.name;
  }
}

}  // namespace
}  // namespace myriad
