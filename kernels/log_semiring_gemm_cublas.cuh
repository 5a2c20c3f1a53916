#pragma once
// The max-shift log-semiring GEMM on cuBLAS (mpis.md §3.4), the alternative to the tiled
// kernel for GEMM-shaped log-sum-product steps (estimate/log_semiring_gemm.hpp):
//
//   m_A[s, a] = max_e A,  m_B[s, b] = max_e B,
//   P_A[s][e][a] = exp(A − m_A),  P_B[s][e][b] = exp(B − m_B)      (packed, contiguous)
//   S[s] = P_A[s] P_B[s]ᵀ                                           (cublasDgemmStridedBatched)
//   C[s, a, b] = log S + m_A + m_B + Σ constant inputs               (scattered through the
//                                                                    step's output strides)
//
// Exactness caveat (mpis.md §3.4). The factorisation shifts A and B by their own maxima, not by
// the maximum of A + B: when the maximising e of A and of B differ, S is small, and once the
// gap passes ~708 nats S underflows to 0 (the plain formula then returns −inf) or, a little
// before, to a subnormal with few significant bits. No eps is added (the reference code's
// log(S + eps) is wrong by tens of nats far sooner). The epilogue therefore checks each
// element: finite maxima and S ≥ K · 2^-1020 guarantee that the terms lost to underflow are
// below one unit roundoff of S (LogSemiringGemm::kMaxShiftSafeSumPerTerm); any other element
// is recomputed exactly by the generic element's two passes in the same thread. The check
// costs one comparison per output; the fallback K terms per flagged output, which do not
// occur unless offsets between rows reach hundreds of nats.
//
// Precision: FP64 throughout. cublasDgemmStridedBatched computes in CUBLAS_COMPUTE_64F; on
// sm_80+ it may use the FP64 tensor cores (DMMA), which round like FP64 FMA. The handle's math
// mode is set to CUBLAS_DEFAULT_MATH, which never enables TF32 (that applies to single
// precision anyway) nor the FP64 fixed-point emulation of CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH.
//
// Memory: the packed operands, maxima and S of a round of batches, allocated through the
// policy (so the MemoryTracker and MP IS's peak memory count them) and bounded by
// kMaxShiftScratchBytes; batches are processed in as many rounds as that takes.
//
// Handle: one cuBLAS handle per (host thread, device), created on first use and kept until
// the thread exits (cublasCreate costs milliseconds, a GEMM step microseconds; a handle must
// not be used by two threads at once). Its stream is set to the legacy default stream before
// each use, where the CUDA policy launches everything else, so the steps stay ordered.
//
// Include only from nvcc translation units that need it (kernels/cuda_contraction.cu): it pulls
// in cublas_v2.h.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_buffers.cuh"
#include "cuda_parallel.cuh"
#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "myriad/core/error.hpp"
#include "myriad/estimate/log_semiring_gemm.hpp"

namespace myriad {

namespace kernels {

/// Threads per block of the max-shift path's element-wise kernels.
constexpr int kMaxShiftBlockSize = 256;

/// m and exp(X − m) of every operand row of batches [first, first + batches): X = A (side 0,
/// rows = M) or B (side 1, rows = N); packed[s][e][row], max[s][row]. One thread per row, so
/// the packed stores of a warp are contiguous. A template (on the GEMM type) so that the
/// kernel has vague linkage like every kernel of the headers.
template <class Gemm>
MYRIAD_KERNEL void __launch_bounds__(kMaxShiftBlockSize)
    max_shift_pack_kernel(const Gemm gemm, int side, std::int64_t first, std::int64_t batches,
                          double* packed, double* max) {
  const std::int64_t rows = side == 0 ? gemm.m() : gemm.n();
  const std::int64_t k = gemm.k();
  for (std::int64_t i = global_thread_index(); i < batches * rows; i += grid_stride()) {
    const std::int64_t s = i / rows, row = i - s * rows;
    max[i] = gemm.pack_max_shifted(side, first + s, row, packed + s * k * rows + row, rows);
  }
}

/// C = log S + m_A + m_B + constants (or the exact element where that is inaccurate) for
/// every output of batches [first, first + batches); S column-major M × N per batch, read
/// with the row index fastest (coalesced).
template <class Gemm>
MYRIAD_KERNEL void __launch_bounds__(kMaxShiftBlockSize)
    max_shift_epilogue_kernel(const Gemm gemm, std::int64_t first, std::int64_t batches,
                              const double* shifted_sum, const double* max_a, const double* max_b) {
  const std::int64_t m = gemm.m(), n = gemm.n();
  for (std::int64_t i = global_thread_index(); i < batches * m * n; i += grid_stride()) {
    const std::int64_t a = i % m, rest = i / m;
    const std::int64_t b = rest % n, s = rest / n;
    gemm.write_max_shift(first + s, a, b, shifted_sum[i], max_a[s * m + a], max_b[s * n + b]);
  }
}

}  // namespace kernels

namespace cuda_detail {

/// An owning cuBLAS handle.
class CublasHandle : public cuda_detail::OwnedHandle<cublasHandle_t, &cublasDestroy> {
 public:
  CublasHandle() { MYRIAD_CUBLAS_TRY(cublasCreate(&handle_)); }
};

/// The calling thread's handle for the current device, created on first use. Thread-local
/// objects are destroyed before static ones, hence before the CUDA runtime's own teardown.
inline cublasHandle_t thread_cublas_handle() {
  thread_local std::vector<std::unique_ptr<CublasHandle>> handles;
  int device = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  const auto slot = static_cast<std::size_t>(device);
  if (handles.size() <= slot) handles.resize(slot + 1);
  if (!handles[slot]) handles[slot] = std::make_unique<CublasHandle>();
  return handles[slot]->get();
}

/// Blocks for a grid-stride loop over n items: enough to cover n, at most a few waves.
inline int max_shift_grid(std::int64_t n, int sm_count) {
  const std::int64_t needed = (n + kernels::kMaxShiftBlockSize - 1) / kernels::kMaxShiftBlockSize;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(needed, 8ll * std::max(sm_count, 1))));
}

}  // namespace cuda_detail

/// Runs a GEMM-shaped step by the max-shift algorithm with cublasDgemmStridedBatched (see the
/// file comment), in rounds of batches whose scratch fits `budget_bytes`. M, N and K must fit
/// cuBLAS's int (resolve_contraction_path sends larger steps to the tiled kernel).
inline void run_log_semiring_gemm_cublas(const CudaParallel& parallel, const LogSemiringGemm& gemm,
                                         std::int64_t budget_bytes = kMaxShiftScratchBytes) {
  const std::int64_t m = gemm.m(), n = gemm.n(), k = gemm.k();
  MYRIAD_EXPECTS(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX,
                 "log-semiring GEMM on cuBLAS: M = ", m, ", N = ", n, ", K = ", k,
                 " exceed cuBLAS's int dimensions");
  if (gemm.batches() <= 0 || m * n <= 0) return;
  const std::int64_t per_round = max_shift_batches_per_round(gemm, budget_bytes);
  CudaParallel::Array<double> packed_a = parallel.allocate<double>(per_round * k * m);
  CudaParallel::Array<double> packed_b = parallel.allocate<double>(per_round * k * n);
  CudaParallel::Array<double> max_a = parallel.allocate<double>(per_round * m);
  CudaParallel::Array<double> max_b = parallel.allocate<double>(per_round * n);
  CudaParallel::Array<double> shifted_sum = parallel.allocate<double>(per_round * m * n);

  const cublasHandle_t handle = cuda_detail::thread_cublas_handle();
  MYRIAD_CUBLAS_TRY(cublasSetStream(handle, cudaStreamLegacy));
  MYRIAD_CUBLAS_TRY(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const double one = 1.0, zero = 0.0;
  const int sms = parallel.sm_count();
  for (std::int64_t first = 0; first < gemm.batches(); first += per_round) {
    const std::int64_t count = std::min(per_round, gemm.batches() - first);
    kernels::max_shift_pack_kernel<<<cuda_detail::max_shift_grid(count * m, sms),
                                     kernels::kMaxShiftBlockSize>>>(gemm, 0, first, count,
                                                                    packed_a.data(), max_a.data());
    MYRIAD_CHECK_LAUNCH();
    kernels::max_shift_pack_kernel<<<cuda_detail::max_shift_grid(count * n, sms),
                                     kernels::kMaxShiftBlockSize>>>(gemm, 1, first, count,
                                                                    packed_b.data(), max_b.data());
    MYRIAD_CHECK_LAUNCH();
    // S = P_A P_Bᵀ per batch: P_A is M × K column-major (lda = M), P_B is N × K (ldb = N), S is
    // M × N (ldc = M).
    MYRIAD_CUBLAS_TRY(cublasDgemmStridedBatched(
        handle, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(m), static_cast<int>(n),
        static_cast<int>(k), &one, packed_a.data(), static_cast<int>(m), m * k, packed_b.data(),
        static_cast<int>(n), n * k, &zero, shifted_sum.data(), static_cast<int>(m), m * n,
        static_cast<int>(count)));
    kernels::max_shift_epilogue_kernel<<<cuda_detail::max_shift_grid(count * m * n, sms),
                                         kernels::kMaxShiftBlockSize>>>(
        gemm, first, count, shifted_sum.data(), max_a.data(), max_b.data());
    MYRIAD_CHECK_LAUNCH();
  }
}

}  // namespace myriad
