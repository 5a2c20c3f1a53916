// Launches for tests/cuda/test_log_semiring_gemm.cpp, which the host compiler builds: the CUDA
// policy's run_log_sum_product on a chosen path, and the tiled kernel and the cuBLAS path
// called directly (every tiling, and rounds of one batch). Built only with CUDA.

#include <cstdint>

#include "myriad/kernels/cuda_contraction.cuh"
#include "myriad/kernels/log_semiring_gemm.cuh"
#include "myriad/kernels/log_semiring_gemm_cublas.cuh"

namespace myriad::log_semiring_gemm_test {

void run_step_on_device(const LogSumProductStep& step, ContractionPath path) {
  const CudaParallel parallel(path);
  run_log_sum_product(parallel, step);
  parallel.synchronize();
}

void run_tiled_on_device(const LogSemiringGemm& gemm, LogGemmTilingId tiling) {
  const CudaParallel parallel(ContractionPath::tiled);
  run_log_semiring_gemm_tiled(parallel, gemm, tiling);
  parallel.synchronize();
}

void run_cublas_on_device(const LogSemiringGemm& gemm, std::int64_t budget_bytes) {
  const CudaParallel parallel(ContractionPath::cublas);
  run_log_semiring_gemm_cublas(parallel, gemm, budget_bytes);
  parallel.synchronize();
}

}  // namespace myriad::log_semiring_gemm_test
