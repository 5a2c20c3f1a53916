// run_log_sum_product on the CUDA policy (kernels/cuda_contraction.cuh): the path dispatch of
// MP IS's log-sum-product steps, compiled once into the library with the tiled kernels and the
// cuBLAS path.

#include "cuda_contraction.cuh"
#include "log_semiring_gemm.cuh"
#include "log_semiring_gemm_cublas.cuh"
#include "myriad/estimate/log_semiring_gemm.hpp"
#include "myriad/estimate/log_sum_product_split.hpp"

namespace myriad {

namespace {

/// Resident threads of the device: 2048 per SM on every architecture the library builds for.
std::int64_t thread_slots(const CudaParallel& parallel) {
  return std::int64_t{2048} * parallel.sm_count();
}

/// Blocks of the tiled kernel for `gemm`: one per output tile.
std::int64_t tiled_blocks(const LogSemiringGemm& gemm) {
  const LogGemmTileShape tile = log_gemm_tile_shape(choose_log_gemm_tiling(gemm.m(), gemm.n()));
  return gemm.batches() * ((gemm.m() + tile.rows - 1) / tile.rows) *
         ((gemm.n() + tile.cols - 1) / tile.cols);
}

}  // namespace

void run_log_sum_product(const CudaParallel& parallel, const LogSumProductStep& step) {
  if (step.out_size <= 0) return;
  const std::optional<LogSemiringGemm> gemm = parallel.contraction() == ContractionPath::generic
                                                  ? std::nullopt
                                                  : as_log_semiring_gemm(step);
  const ContractionPath path =
      resolve_contraction_path(parallel.contraction(), gemm ? &*gemm : nullptr);
  // Too few outputs to fill the device (one thread each on the generic path, one block per
  // tile on the tiled path when `automatic` chose it): the reduction split into parts
  // (estimate/log_sum_product_split.hpp). An explicitly requested tiled or cuBLAS path is kept.
  const bool starved =
      path == ContractionPath::generic ||
      (path == ContractionPath::tiled && parallel.contraction() == ContractionPath::automatic &&
       tiled_blocks(*gemm) < parallel.sm_count());
  if (starved) {
    const LogSumProductSplit split =
        choose_log_sum_product_split(step.out_size, step.element.elim_size, thread_slots(parallel));
    if (split.parts > 1) {
      run_log_sum_product_split(parallel, step, split);
      return;
    }
  }
  switch (path) {
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
