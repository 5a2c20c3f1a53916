#pragma once
// Error checking for CUDA runtime, cuBLAS and cuSOLVER calls (STYLE.md, "Errors").
//
//   MYRIAD_CUDA_TRY(cudaMalloc(&p, bytes));
//   kernel<<<grid, block, 0, stream>>>(...);
//   MYRIAD_CHECK_LAUNCH();
//
// A failed call throws myriad::cuda_error whose message names the call as written, the file,
// the line and the library's own description of the status. MYRIAD_CHECK_LAUNCH catches launch
// configuration errors at once; with MYRIAD_SYNC_AFTER_LAUNCH defined (the CMake option of the
// same name) it also synchronises the device, so that a fault inside a kernel is reported at
// the launch that caused it rather than at the next synchronising call.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "myriad/core/error.hpp"

namespace myriad::detail {

/// cuSOLVER has no status-to-string function; these are the names of cusolverStatus_t.
inline const char* cusolver_status_string(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
      return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT:
      return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE:
      return "CUSOLVER_STATUS_INVALID_LICENSE";
    default:
      return "unrecognised cusolverStatus_t";
  }
}

[[noreturn]] inline void throw_cuda_error(const char* library, const char* call, const char* file,
                                          int line, const char* status_name,
                                          const char* description) {
  throw cuda_error(concat(library, " call '", call, "' failed at ", file, ":", line, ": ",
                          status_name, " (", description, ")"));
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw_cuda_error("CUDA", call, file, line, cudaGetErrorName(status),
                     cudaGetErrorString(status));
  }
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw_cuda_error("cuBLAS", call, file, line, cublasGetStatusName(status),
                     cublasGetStatusString(status));
  }
}

inline void check_cusolver(cusolverStatus_t status, const char* call, const char* file, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    const char* name = cusolver_status_string(status);
    throw_cuda_error("cuSOLVER", call, file, line, name, name);
  }
}

/// After a kernel launch: launch errors (bad configuration, missing kernel image) always; with
/// MYRIAD_SYNC_AFTER_LAUNCH also faults during execution.
inline void check_launch(const char* file, int line) {
  check_cuda(cudaGetLastError(), "kernel launch", file, line);
#if defined(MYRIAD_SYNC_AFTER_LAUNCH)
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after kernel launch", file, line);
#endif
}

}  // namespace myriad::detail

/// Evaluates a CUDA runtime call and throws myriad::cuda_error unless it returns cudaSuccess.
#define MYRIAD_CUDA_TRY(call) ::myriad::detail::check_cuda((call), #call, __FILE__, __LINE__)

/// Evaluates a cuBLAS call and throws myriad::cuda_error unless it returns
/// CUBLAS_STATUS_SUCCESS.
#define MYRIAD_CUBLAS_TRY(call) ::myriad::detail::check_cublas((call), #call, __FILE__, __LINE__)

/// Evaluates a cuSOLVER call and throws myriad::cuda_error unless it returns
/// CUSOLVER_STATUS_SUCCESS.
#define MYRIAD_CUSOLVER_TRY(call) \
  ::myriad::detail::check_cusolver((call), #call, __FILE__, __LINE__)

/// Checks the most recent kernel launch (and, in debug builds, its execution).
#define MYRIAD_CHECK_LAUNCH() ::myriad::detail::check_launch(__FILE__, __LINE__)
