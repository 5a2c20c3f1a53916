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
// A generic step with fewer outputs than the device has thread slots, or an automatic tiled one
// with fewer tiles than SMs, runs with its reduction split into parts when it is long enough
// (choose_log_sum_product_split, estimate/log_sum_product_split.hpp): window 5 on an H200 found
// a chimpanzees step of a few outputs running 178 ms on one block and GEMMs on 7 and 42 blocks.
//
// Defined once in kernels/cuda_contraction.cu, so that the kernels and cuBLAS are compiled into
// the library rather than into every translation unit that instantiates the engine. The
// declaration lives in kernels/cuda_parallel.cuh with the policy, so no translation unit that
// runs the engine on CudaParallel can miss it and fall back to the generic template.

#include "cuda_parallel.cuh"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

// run_log_sum_product(const CudaParallel&, const LogSumProductStep&) (kernels/cuda_parallel.cuh)
// runs `step` (device pointers) by the path the policy's contraction() selects; asynchronous on
// the legacy default stream like every launch of the policy (the cublas path's scratch is freed
// in stream order too).

}  // namespace myriad
