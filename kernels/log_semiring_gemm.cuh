#pragma once
// The tiled log-semiring GEMM kernel (mpis.md §3.4): C[s, a, b] = LSE_e A + B (+ constant
// inputs) for a GEMM-shaped log-sum-product step (estimate/log_semiring_gemm.hpp), exact to
// rounding by an online max-rescaled sum per output, in FP64 (no TF32/FP16).
//
// One block per output tile of one batch index (a grid-stride loop over tiles when there are
// more than fit at once). Per round the block stages kChunk = 16 reduction terms of its A tile
// ([k][row]) and B tile ([k][col]) in shared memory, then every thread folds them into its
// outputs' running (max, sum) in registers (LogGemmAccumulator::fold, the tile body the host
// twin runs too). Each staged A value serves a whole row of the tile's columns, each B value a
// column of rows.
//
// Cost model: every term costs one FP64 exp (a ~20-instruction software sequence) against a
// handful of loads from shared memory, so the kernel is bound by FP64 arithmetic, not by
// memory; the tile only has to amortise index arithmetic and global loads over the tile's
// rows and columns, and occupancy matters more than tile size. Hence 256 threads with at most
// 2 × 2 outputs each (12 doubles of state per thread in the square tiling) and no double
// buffering: a round's arithmetic (16 terms × outputs per thread × ~25 instructions) hides the
// next round's staging loads, which the other resident blocks issue meanwhile. ptxas (CUDA
// 13.0, sm_90) reports per tiling: square 64 registers (40 bytes spilled) and 9.2 KB static
// shared memory; small 48 and 4.9 KB; tall and wide 64 and 10.3 KB; the two GEMV tilings 60
// and 35.5 KB. So 4 blocks (32 warps) per SM for square, tall, wide and the GEMVs, 5 for small,
// limited by registers, not shared memory (228 KB per SM on H100). The epilogue's 72-byte stack
// frame holds the per-input offsets of one output. Shapes per tiling: see LogGemmTilingId.
//
// Indices are 64-bit throughout; the kernel has hidden visibility (MYRIAD_KERNEL) and runs on
// the legacy default stream, as every launch of the CUDA policy.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "cuda_parallel.cuh"
#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "myriad/estimate/log_semiring_gemm.hpp"

namespace myriad {

// Kernel parameters may take 32764 bytes from CUDA 12.1 on (CMakeLists.txt requires it); the MP
// IS element functors use more than 4 KB of that, this one less.
static_assert(sizeof(LogSemiringGemm) <= 32764,
              "LogSemiringGemm is a kernel parameter: keep it within the 32764-byte limit");

namespace kernels {

/// Tiles t = blockIdx.x, blockIdx.x + gridDim.x, … of `gemm` with the phases of
/// LogGemmBlock<Tiling> separated by barriers (estimate/log_semiring_gemm.hpp).
template <class Tiling>
MYRIAD_KERNEL void __launch_bounds__(Tiling::kThreads)
    log_semiring_gemm_tiled_kernel(const LogSemiringGemm gemm, std::int64_t tiles) {
  using Block = LogGemmBlock<Tiling>;
  __shared__ LogGemmStage<Tiling> stage;
  const int thread = static_cast<int>(threadIdx.x);
  LogGemmAccumulator<Tiling> acc;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const LogGemmTile tile = Block::tile_at(gemm, t);
    Block::begin(gemm, tile, stage, thread);
    acc.clear();
    for (std::int64_t k0 = 0; k0 < gemm.k(); k0 += Tiling::kChunk) {
      Block::stage_reduce_offsets(gemm, k0, stage, thread);
      __syncthreads();  // begin's and this round's offsets are visible
      Block::stage_operands(gemm, tile, k0, stage, thread);
      __syncthreads();  // the round's tiles are staged
      Block::fold(gemm, k0, stage, acc, thread);
      __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    Block::finish(gemm, tile, acc, thread);
  }
}

}  // namespace kernels

/// Runs a GEMM-shaped step with the tiled kernel of the given tiling: one block per tile,
/// capped at one wave of resident blocks (tiles cost the same, so a grid-stride loop over the
/// rest balances as well as more blocks would).
inline void run_log_semiring_gemm_tiled(const CudaParallel& parallel, const LogSemiringGemm& gemm,
                                        LogGemmTilingId tiling) {
  with_log_gemm_tiling(tiling, [&](auto t) {
    using Tiling = decltype(t);
    const std::int64_t tiles = LogGemmBlock<Tiling>::tiles(gemm);
    if (tiles <= 0) return;
    const auto kernel = kernels::log_semiring_gemm_tiled_kernel<Tiling>;
    int blocks_per_sm = 0;
    MYRIAD_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, Tiling::kThreads, 0));
    const std::int64_t wave =
        static_cast<std::int64_t>(std::max(blocks_per_sm, 1)) * std::max(parallel.sm_count(), 1);
    const int grid = static_cast<int>(std::min(tiles, wave));
    kernel<<<grid, Tiling::kThreads>>>(gemm, tiles);
    MYRIAD_CHECK_LAUNCH();
  });
}

/// The tiled kernel with the tiling chosen by the output's shape (choose_log_gemm_tiling).
inline void run_log_semiring_gemm_tiled(const CudaParallel& parallel, const LogSemiringGemm& gemm) {
  run_log_semiring_gemm_tiled(parallel, gemm, choose_log_gemm_tiling(gemm.m(), gemm.n()));
}

}  // namespace myriad
