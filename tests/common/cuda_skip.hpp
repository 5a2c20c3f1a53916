#pragma once
// The first line of every test that needs a CUDA device: without one it skips, saying why (no
// device, or a build without CUDA), so that `scripts/gpu-check verify` can require that nothing
// skipped on a GPU machine.

#include <gtest/gtest.h>

#include "myriad/backend/device.hpp"

namespace myriad::testing {

#if defined(MYRIAD_HAS_CUDA)
inline constexpr const char* kNoCudaDeviceReason =
    "no CUDA device: the CUDA backend cannot run here";
#else
inline constexpr const char* kNoCudaDeviceReason = "no CUDA device: myriad was built without CUDA";
#endif

}  // namespace myriad::testing

#define MYRIAD_SKIP_WITHOUT_CUDA() \
  if (!::myriad::cuda_device_available()) GTEST_SKIP() << ::myriad::testing::kNoCudaDeviceReason
