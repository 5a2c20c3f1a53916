// MYRIAD_CUDA_TRY, MYRIAD_CUBLAS_TRY, MYRIAD_CUSOLVER_TRY (kernels/cuda_try.cuh): a failing
// status becomes a myriad::cuda_error naming the library, the call, the file, the line and the
// library's description, and leaves no last error behind. Status codes are passed directly, so
// only the last test needs a device; the suite exists only in builds with CUDA.

#if defined(MYRIAD_HAS_CUDA)

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <gtest/gtest.h>

#include <string>

#include "common/expect_error.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/kernels/cuda_try.cuh"

namespace myriad {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

cudaError_t failing_runtime_call() { return cudaErrorInvalidValue; }

TEST(CudaTry, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(MYRIAD_CUDA_TRY(cudaSuccess));
  EXPECT_NO_THROW(MYRIAD_CUBLAS_TRY(CUBLAS_STATUS_SUCCESS));
  EXPECT_NO_THROW(MYRIAD_CUSOLVER_TRY(CUSOLVER_STATUS_SUCCESS));
}

TEST(CudaTry, RuntimeErrorNamesCallFileLineAndStatus) {
  int line = 0;  // the line of the MYRIAD_CUDA_TRY, taken inside the lambda so formatting keeps it
  const std::string m = testing::thrown_message<cuda_error>([&line] {
    line = __LINE__ + 1;
    MYRIAD_CUDA_TRY(failing_runtime_call());
  });
  EXPECT_TRUE(contains(m, "CUDA call 'failing_runtime_call()'")) << m;
  EXPECT_TRUE(contains(m, "test_cuda_try.cpp:" + std::to_string(line))) << m;
  EXPECT_TRUE(contains(m, "cudaErrorInvalidValue")) << m;
}

TEST(CudaTry, CublasErrorUsesTheLibrarysStrings) {
  const std::string m =
      testing::thrown_message<cuda_error>([] { MYRIAD_CUBLAS_TRY(CUBLAS_STATUS_NOT_INITIALIZED); });
  EXPECT_TRUE(contains(m, "cuBLAS call 'CUBLAS_STATUS_NOT_INITIALIZED'")) << m;
  EXPECT_TRUE(contains(m, cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED))) << m;
}

TEST(CudaTry, CusolverErrorNamesTheStatus) {
  const std::string m = testing::thrown_message<cuda_error>(
      [] { MYRIAD_CUSOLVER_TRY(CUSOLVER_STATUS_INVALID_VALUE); });
  EXPECT_TRUE(contains(m, "cuSOLVER call")) << m;
  EXPECT_TRUE(contains(m, ": CUSOLVER_STATUS_INVALID_VALUE (status 3)")) << m;
  const std::string unknown = testing::thrown_message<cuda_error>(
      [] { MYRIAD_CUSOLVER_TRY(CUSOLVER_STATUS_INVALID_WORKSPACE); });
  EXPECT_TRUE(contains(unknown, "status 31")) << unknown;
}

// A real failing call also records its status as the runtime's last error, which every
// MYRIAD_CHECK_LAUNCH reads: thrown and caught once, it must not come back at the next launch.
// Needs a device: without a driver every call, cudaGetLastError included, reports that.
TEST(CudaTry, AThrownErrorIsNotReportedAgainByTheNextLaunchCheck) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  cudaGetLastError();  // whatever an earlier test left
  EXPECT_THROW(MYRIAD_CUDA_TRY(cudaSetDevice(-1)), cuda_error);
  EXPECT_NO_THROW(MYRIAD_CHECK_LAUNCH());
}

}  // namespace
}  // namespace myriad

#endif  // MYRIAD_HAS_CUDA
