#pragma once
// How the CUDA policy runs a log-sum-product step of MP IS (mpis.md §3.2–§3.4): the overload of
// run_log_sum_product (estimate/log_sum_product_element.hpp) that the engine's unqualified call
// finds for CudaParallel, preferred over the generic template as a non-template. It dispatches
// on CudaParallel::contraction() (MpisConfig::contraction, `myriad mpis --contraction`):
//
//   generic    one output element per thread (the element's max pass and shifted-sum pass);
//   tiled      GEMM-shaped steps on the tiled shared-memory kernel (kernels/log_semiring_gemm.cuh),
//              others generic;
//   cublas     GEMM-shaped steps by the max-shift algorithm on cublasDgemmStridedBatched
//              (kernels/log_semiring_gemm_cublas.cuh; exact to rounding through its checked
//              epilogue), tiled where M, N or K exceed cuBLAS's int, others generic;
//   automatic  tiled when the reduction is long enough and the tile full enough to reuse data,
//              else generic (resolve_contraction_path; the thresholds are unmeasured).
//
// Defined once in kernels/cuda_contraction.cu, so that the kernels and cuBLAS are compiled into
// the library rather than into every translation unit that instantiates the engine. Every
// translation unit that instantiates MpisEngine with CudaParallel must see this declaration
// (kernels/cuda_mpis_backend.cuh includes it); one that did not would silently run the generic
// template instead.

#include "cuda_parallel.cuh"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

/// Runs `step` (device pointers) on the CUDA policy by the path its contraction() selects
/// (see the file comment); asynchronous on the legacy default stream like every launch of the
/// policy, except that the cublas path synchronises when it frees its scratch.
void run_log_sum_product(const CudaParallel& parallel, const LogSumProductStep& step);

}  // namespace myriad
