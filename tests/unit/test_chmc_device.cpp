// Device selection for constrained HMC, in every build: asking for CUDA without a device (or in
// a build without CUDA) is an unavailable_error with a clear message, never a silent fallback;
// `automatic` and `cpu` run on the CPU when no device is present; a generator without a CUDA
// backend reachable from host code is an error on `cuda` even when a device is present.

#include <gtest/gtest.h>

#include <string>

#include "common/expect_error.hpp"
#include "common/run_configs.hpp"
#include "common/test_generators.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_generators.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {
namespace {

ChmcConfig small_config(Device device) {
  return testing::run_config<ChmcConfig>(8, 5, 5, 3, device);
}

TEST(ChmcDevice, BuiltinGeneratorsDeclareTheirCudaBackends) {
  static_assert(has_cuda_chmc_backend<models::Sphere>::value);
  static_assert(has_cuda_chmc_backend<models::LotkaVolterra>::value);
  static_assert(has_cuda_chmc_backend<models::Noisy<models::Gld>>::value);
  static_assert(!has_cuda_chmc_backend<models::Noisy<models::Noisy<models::Sphere>>>::value);
  static_assert(!has_cuda_chmc_backend<test_generators::TestSphere>::value);
  static_assert(cuda_chmc_backend_reachable<models::Sphere>());
  static_assert(!cuda_chmc_backend_reachable<test_generators::TestCurved>());
  SUCCEED();
}

TEST(ChmcDevice, CudaBackendWithoutDeviceThrowsUnavailable) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: the backend would run";
  // In a CPU-only build this is the inline factory of backend/chmc_backend.hpp; with CUDA but no
  // device, the backend's constructor.
  const std::string message = testing::thrown_message<unavailable_error>(
      [] { make_cuda_chmc_backend<models::Sphere, double>(models::Sphere::make(3, 1.0), 16); });
  EXPECT_NE(message.find("CUDA"), std::string::npos) << message;
  const std::string noisy = testing::thrown_message<unavailable_error>([] {
    const auto g = models::Noisy<models::Sphere>::make(models::Sphere::make(3, 1.0), 0.1);
    make_cuda_chmc_backend<models::Noisy<models::Sphere>, double>(g, 16);
  });
  EXPECT_NE(noisy.find("CUDA"), std::string::npos) << noisy;
#if !defined(MYRIAD_HAS_CUDA)
  EXPECT_NE(message.find("built without CUDA"), std::string::npos) << message;
#endif
}

TEST(ChmcDevice, SampleChmcOnCudaWithoutDeviceThrows) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: the run would proceed";
  const std::string builtin = testing::thrown_message<unavailable_error>(
      [] { sample_chmc(models::Sphere::make(3, 1.0), small_config(Device::cuda)); });
  EXPECT_NE(builtin.find("--device cuda"), std::string::npos) << builtin;
  const std::string custom = testing::thrown_message<unavailable_error>(
      [] { sample_chmc(test_generators::TestSphere{}, small_config(Device::cuda)); });
  EXPECT_FALSE(custom.empty());
  EXPECT_THROW(choose_chmc_device<models::Sphere>(Device::cuda), unavailable_error);
  EXPECT_EQ(choose_chmc_device<models::Sphere>(Device::automatic), Device::cpu);
}

TEST(ChmcDevice, HostCompiledCustomGeneratorOnCudaIsAnErrorEvenWithADevice) {
  // Host-compiled code holds no kernels for a generator of its own: `cuda` names the remedy
  // (compile with nvcc) when a device exists, and `automatic` stays on the CPU.
  if (cuda_device_available()) {
    const std::string message = testing::thrown_message<unavailable_error>(
        [] { choose_chmc_device<test_generators::TestCurved>(Device::cuda); });
    EXPECT_NE(message.find("nvcc"), std::string::npos) << message;
  } else {
    EXPECT_THROW(choose_chmc_device<test_generators::TestCurved>(Device::cuda), unavailable_error);
  }
  EXPECT_EQ(choose_chmc_device<test_generators::TestCurved>(Device::automatic), Device::cpu);
  EXPECT_EQ(choose_chmc_device<test_generators::TestCurved>(Device::cpu), Device::cpu);
}

TEST(ChmcDevice, AutomaticWithoutDeviceRunsOnTheCpu) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: automatic picks it";
  const SampleResult result =
      sample_chmc(models::Sphere::make(3, 1.0), small_config(Device::automatic));
  EXPECT_NE(result.device.find("cpu"), std::string::npos) << result.device;
  EXPECT_EQ(result.chains, 8);
}

}  // namespace
}  // namespace myriad
