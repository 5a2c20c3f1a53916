// cuda_detail::DeviceScope (kernels/device_scope.cuh): a backend's calls run on the backend's
// device and give the caller's current device back. With one GPU only the error path and the
// restore can be checked; with two or more, the switch itself. Skips without a device; the suite
// exists only in builds with CUDA.

#if defined(MYRIAD_HAS_CUDA)

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/kernels/device_scope.cuh"

namespace myriad {
namespace {

int current_device() {
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  return device;
}

TEST(CudaDeviceScope, ANonexistentDeviceIsAnErrorAndLeavesTheCurrentDevice) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  const int before = current_device();
  EXPECT_THROW(cuda_detail::DeviceScope scope(count), cuda_error);
  // The failed call is not left as the runtime's last error (cuda_try.cuh), where the next launch
  // check in this process would report it again.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(current_device(), before);
}

TEST(CudaDeviceScope, SwitchesForTheScopeAndRestoresTheCallersDevice) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  const int before = current_device();
  {
    const cuda_detail::DeviceScope scope(before);
    EXPECT_EQ(current_device(), before);
  }
  EXPECT_EQ(current_device(), before);
  if (count < 2) GTEST_SKIP() << "one CUDA device: the switch to another cannot be checked";
  const int other = before == 0 ? 1 : 0;
  {
    const cuda_detail::DeviceScope scope(other);
    EXPECT_EQ(current_device(), other);
  }
  EXPECT_EQ(current_device(), before);
}

}  // namespace
}  // namespace myriad

#endif  // MYRIAD_HAS_CUDA
