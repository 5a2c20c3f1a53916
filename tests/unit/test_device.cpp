// Device selection (backend/device.hpp) and the CUDA factory's behaviour where CUDA is absent.
// Runs in every build; assertions about a missing device are skipped where one is present.

#include <gtest/gtest.h>

#include <string>

#include "myriad/app/option_names.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin.hpp"

namespace myriad {
namespace {

TEST(Device, ParsesTheThreeNames) {
  EXPECT_EQ(parse_device("auto"), Device::automatic);
  EXPECT_EQ(parse_device("cpu"), Device::cpu);
  EXPECT_EQ(parse_device("cuda"), Device::cuda);
}

TEST(Device, ToStringRoundTrips) {
  for (Device d : {Device::automatic, Device::cpu, Device::cuda}) {
    EXPECT_EQ(parse_device(to_string(d)), d);
  }
}

TEST(Device, RejectsUnknownNamesNamingThem) {
  for (const char* name : {"", "gpu", "CUDA", "cpu "}) {
    try {
      parse_device(name);
      ADD_FAILURE() << "parse_device accepted '" << name << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + name + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Device, CpuAlwaysResolvesToCpu) {
  EXPECT_EQ(resolve_device(Device::cpu), Device::cpu);
  EXPECT_NE(describe_device(Device::cpu).find("OpenMP threads"), std::string::npos);
}

TEST(Device, AutoPicksCudaExactlyWhenADeviceIsAvailable) {
  const Device expected = cuda_device_available() ? Device::cuda : Device::cpu;
  EXPECT_EQ(resolve_device(Device::automatic), expected);
}

TEST(Device, AvailabilityIsStable) {
  // Cached per process and never throws, also without a driver.
  EXPECT_EQ(cuda_device_available(), cuda_device_available());
}

TEST(Device, CudaWithoutADeviceIsAnUnavailableErrorWithAReason) {
  if (cuda_device_available()) {
    EXPECT_EQ(resolve_device(Device::cuda), Device::cuda);
    EXPECT_EQ(describe_device(Device::cuda).rfind("cuda: ", 0), 0u)
        << describe_device(Device::cuda);
    GTEST_SKIP() << "a CUDA device is present; the no-device message is not reachable";
  }
  try {
    resolve_device(Device::cuda);
    FAIL() << "resolve_device(cuda) succeeded without a CUDA device";
  } catch (const unavailable_error& e) {
    const std::string message = e.what();
#if defined(MYRIAD_HAS_CUDA)
    EXPECT_EQ(message, "--device cuda was requested but no CUDA device is available");
#else
    EXPECT_EQ(message, "--device cuda was requested but myriad was built without CUDA");
#endif
  }
  EXPECT_THROW(describe_device(Device::cuda), unavailable_error);
}

TEST(Device, CudaBackendFactoryThrowsUnavailableWithoutADevice) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const auto model = models::Gaussian<double>::make(3, 0.2);
  EXPECT_THROW((make_cuda_hmc_backend<models::Gaussian<double>, double>(model, 64)),
               unavailable_error);
  const auto funnel = models::Funnel<float>::make(4);
  EXPECT_THROW((make_cuda_hmc_backend<models::Funnel<float>, float>(funnel, 1)), unavailable_error);
}

TEST(Device, CudaBackendFactoryValidatesArgumentsOrReportsNoDevice) {
  // Without a device the device check may come first; either way it is a myriad exception
  // with a message, never a crash.
  const auto model = models::Gaussian<double>::make(3, 0.2);
  try {
    make_cuda_hmc_backend<models::Gaussian<double>, double>(model, 0);
    FAIL() << "0 chains accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chains"), std::string::npos) << e.what();
  } catch (const unavailable_error&) {
  }
}

}  // namespace
}  // namespace myriad
