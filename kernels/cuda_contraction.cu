// run_log_sum_product on the CUDA policy (kernels/cuda_contraction.cuh): the path dispatch of
// MP IS's log-sum-product steps, compiled once into the library with the tiled kernels and the
// cuBLAS path.

#include "cuda_contraction.cuh"
#include "log_semiring_gemm.cuh"
#include "log_semiring_gemm_cublas.cuh"
#include "myriad/estimate/log_semiring_gemm.hpp"

namespace myriad {

void run_log_sum_product(const CudaParallel& parallel, const LogSumProductStep& step) {
  if (step.out_size <= 0) return;
  const std::optional<LogSemiringGemm> gemm = parallel.contraction() == ContractionPath::generic
                                                  ? std::nullopt
                                                  : as_log_semiring_gemm(step);
  switch (resolve_contraction_path(parallel.contraction(), gemm ? &*gemm : nullptr)) {
    case ContractionPath::tiled:
      run_log_semiring_gemm_tiled(parallel, *gemm);
      return;
    case ContractionPath::cublas:
      run_log_semiring_gemm_cublas(parallel, *gemm);
      return;
    case ContractionPath::generic:
    case ContractionPath::automatic:  // resolve_contraction_path never returns it
      break;
  }
  parallel.for_each(step.out_size, step);
}

}  // namespace myriad
