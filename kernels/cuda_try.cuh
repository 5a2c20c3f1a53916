#pragma once
// Error checking for CUDA runtime, cuBLAS and cuSOLVER calls (STYLE.md, "Errors").
//
//   MYRIAD_CUDA_TRY(cudaMalloc(&p, bytes));
//   MYRIAD_CUBLAS_TRY(cublasDgemmStridedBatched(handle, ...));
//   kernel<<<grid, block, 0, stream>>>(...);
//   MYRIAD_CHECK_LAUNCH();
//
// A failed call throws myriad::cuda_error whose message names the library, the call as written,
// the file, the line and the library's own description of the status. MYRIAD_CHECK_LAUNCH
// catches launch-configuration errors at once; with MYRIAD_SYNC_AFTER_LAUNCH defined (the CMake
// option of the same name) it also synchronises the device, so that a fault inside a kernel is
// reported at the launch that caused it rather than at the next synchronising call.
//
// Only the runtime's header is included. The cuBLAS and cuSOLVER checks are templates on the
// status type whose string functions are found by argument-dependent lookup where they are
// used, i.e. in files that include cublas_v2.h or cusolverDn.h anyway; this keeps those headers
// (~10k lines, ~0.6 s per nvcc job) out of every kernel file. Plain host C++ can include this
// header too.

#include <cuda_runtime_api.h>

#include "myriad/core/error.hpp"

namespace myriad::detail {

/// Throws the error, first clearing the runtime's last error (cudaGetLastError): a failed call
/// such as an out-of-memory cudaMallocAsync also records its status there, and left in place it
/// would be reported again by the next MYRIAD_CHECK_LAUNCH, at an unrelated launch, after the
/// caller had caught and handled the first. (A sticky error, a fault in a kernel, stays.)
[[noreturn]] inline void throw_cuda_error(const char* library, const char* call, const char* file,
                                          int line, const char* status_name,
                                          const char* description) {
  cudaGetLastError();
  throw cuda_error(concat(library, " call '", call, "' failed at ", file, ":", line, ": ",
                          status_name, " (", description, ")"));
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw_cuda_error("CUDA", call, file, line, cudaGetErrorName(status),
                     cudaGetErrorString(status));
  }
}

/// cublasStatus_t: CUBLAS_STATUS_SUCCESS is 0; cublasGetStatusName/String by ADL.
template <class CublasStatus>
void check_cublas(CublasStatus status, const char* call, const char* file, int line) {
  if (status != CublasStatus{}) {
    throw_cuda_error("cuBLAS", call, file, line, cublasGetStatusName(status),
                     cublasGetStatusString(status));
  }
}

/// The names of cusolverStatus_t 0–11 (cuSOLVER has no status-to-string function).
inline const char* cusolver_status_name(int status) {
  static const char* const names[] = {"CUSOLVER_STATUS_SUCCESS",
                                      "CUSOLVER_STATUS_NOT_INITIALIZED",
                                      "CUSOLVER_STATUS_ALLOC_FAILED",
                                      "CUSOLVER_STATUS_INVALID_VALUE",
                                      "CUSOLVER_STATUS_ARCH_MISMATCH",
                                      "CUSOLVER_STATUS_MAPPING_ERROR",
                                      "CUSOLVER_STATUS_EXECUTION_FAILED",
                                      "CUSOLVER_STATUS_INTERNAL_ERROR",
                                      "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
                                      "CUSOLVER_STATUS_NOT_SUPPORTED",
                                      "CUSOLVER_STATUS_ZERO_PIVOT",
                                      "CUSOLVER_STATUS_INVALID_LICENSE"};
  const int count = static_cast<int>(sizeof names / sizeof names[0]);
  return status >= 0 && status < count ? names[status] : "cusolverStatus_t (see cusolver_common.h)";
}

/// cusolverStatus_t: CUSOLVER_STATUS_SUCCESS is 0.
template <class CusolverStatus>
void check_cusolver(CusolverStatus status, const char* call, const char* file, int line) {
  if (status != CusolverStatus{}) {
    const int code = static_cast<int>(status);
    throw_cuda_error("cuSOLVER", call, file, line, cusolver_status_name(code),
                     concat("status ", code).c_str());
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
/// CUBLAS_STATUS_SUCCESS. Needs cublas_v2.h (or cublas_api.h) included before the use.
#define MYRIAD_CUBLAS_TRY(call) ::myriad::detail::check_cublas((call), #call, __FILE__, __LINE__)

/// Evaluates a cuSOLVER call and throws myriad::cuda_error unless it returns
/// CUSOLVER_STATUS_SUCCESS. Needs a cuSOLVER header included before the use.
#define MYRIAD_CUSOLVER_TRY(call) \
  ::myriad::detail::check_cusolver((call), #call, __FILE__, __LINE__)

/// Checks the most recent kernel launch (and, in debug builds, its execution).
#define MYRIAD_CHECK_LAUNCH() ::myriad::detail::check_launch(__FILE__, __LINE__)
