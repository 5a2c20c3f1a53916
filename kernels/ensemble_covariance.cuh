#pragma once
// The centred cross-products of an ensemble's positions, Σ_c (x_c − x̄)(x_c − x̄)ᵀ, on the device
// (EnsembleCovariance, mcmc/ensemble_moments.hpp): the statistics of a dense metric's window
// without copying every chain's position to the host (D · chains values per warm-up iteration;
// 800 MB for a million chains in 100 dimensions) and reducing them there.
//
// It is a GEMM (the centred D × chains positions times their transpose), written here rather
// than taken from cuBLAS's SYRK because its summation order must depend on the chain count and
// the dimension alone: cuBLAS promises the same bits only on GPUs of one architecture and SM
// count, and the adapted metric, and with it every later draw, must not change with the GPU
// (README: the same results for any launch configuration).
//
// Pass 1 (covariance_partials_kernel): a block of 16 × 16 threads owns one 16 × 16 tile of the
// matrix (tiles on or below the diagonal only) and one slice of chains; it stages 32 chains of its
// 16 + 16 rows, centred, in shared memory at a time, and each thread sums the products of its
// entry (i, j) over the slice in chain order: 16 multiply-adds per value loaded. Pass 2
// (finish_covariance_kernel): one thread per entry sums the slices in order and mirrors the
// tiles above the diagonal.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/core/ensemble.hpp"

namespace myriad::kernels {

constexpr int kCovarianceTile = 16;   ///< entries per tile side (16 × 16 threads per block)
constexpr int kCovarianceChunk = 32;  ///< chains staged in shared memory at a time

/// Tiles per side and tile pairs (on or below the diagonal) of a dim × dim matrix.
inline int covariance_tiles(int dim) { return (dim + kCovarianceTile - 1) / kCovarianceTile; }
inline int covariance_tile_pairs(int dim) {
  const int tiles = covariance_tiles(dim);
  return tiles * (tiles + 1) / 2;
}

/// The slices the chains are cut into: one per 4096 chains, at most as many as keep the partials
/// (slices · dim² doubles) within 2^25 values (256 MiB), and at least one. A function of the
/// chain count and the dimension alone.
inline std::int64_t covariance_slices(std::int64_t chains, int dim) {
  constexpr std::int64_t kChainsPerSlice = 4096;
  constexpr std::int64_t kMaxPartials = std::int64_t{1} << 25;
  const std::int64_t entries = static_cast<std::int64_t>(dim) * dim;
  const std::int64_t wanted = (chains + kChainsPerSlice - 1) / kChainsPerSlice;
  const std::int64_t cap = kMaxPartials / entries > 0 ? kMaxPartials / entries : 1;
  return wanted < cap ? wanted : cap;
}

/// partials[s · dim² + i · dim + j] = Σ over slice s of (x(i, c) − mean[i]) (x(j, c) − mean[j]),
/// for every entry of the tiles on or below the diagonal. Grid: (slices, covariance_tile_pairs),
/// block: (16, 16).
template <class T>
MYRIAD_KERNEL void __launch_bounds__(kCovarianceTile* kCovarianceTile)
    covariance_partials_kernel(EnsembleView<const T> x, const double* mean, std::int64_t slices,
                               double* partials) {
  // The tile pair: blockIdx.y = ti (ti + 1) / 2 + tj with tj ≤ ti.
  const int pair = static_cast<int>(blockIdx.y);
  int ti = 0;
  while ((ti + 1) * (ti + 2) / 2 <= pair) ++ti;
  const int tj = pair - ti * (ti + 1) / 2;
  // One padding column keeps the 16 rows a warp reads at once in distinct banks.
  __shared__ double rows_i[kCovarianceTile][kCovarianceChunk + 1];
  __shared__ double rows_j[kCovarianceTile][kCovarianceChunk + 1];

  const int a = static_cast<int>(threadIdx.y), b = static_cast<int>(threadIdx.x);
  const int thread = a * kCovarianceTile + b;
  const std::int64_t per_slice = (x.chains + slices - 1) / slices;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * per_slice;
  const std::int64_t end = begin + per_slice < x.chains ? begin + per_slice : x.chains;
  constexpr int kStaged = 2 * kCovarianceTile * kCovarianceChunk;
  double sum = 0;
  for (std::int64_t first = begin; first < end; first += kCovarianceChunk) {
    for (int k = thread; k < kStaged; k += kCovarianceTile * kCovarianceTile) {
      const int upper = k / (kCovarianceTile * kCovarianceChunk);
      const int r = (k / kCovarianceChunk) % kCovarianceTile;
      const int column = k % kCovarianceChunk;
      const int row = (upper == 0 ? ti : tj) * kCovarianceTile + r;
      const std::int64_t c = first + column;
      const double centred =
          row < x.dim && c < end ? static_cast<double>(x(row, c)) - mean[row] : 0.0;
      (upper == 0 ? rows_i : rows_j)[r][column] = centred;
    }
    __syncthreads();
    for (int column = 0; column < kCovarianceChunk; ++column)
      sum += rows_i[a][column] * rows_j[b][column];
    __syncthreads();
  }
  const int i = ti * kCovarianceTile + a, j = tj * kCovarianceTile + b;
  if (i < x.dim && j < x.dim) {
    const std::int64_t entries = static_cast<std::int64_t>(x.dim) * x.dim;
    partials[blockIdx.x * entries + static_cast<std::int64_t>(i) * x.dim + j] = sum;
  }
}

/// scatter[i · dim + j] = Σ_s partials of entry (i, j), or of (j, i) where (i, j) lies in a tile
/// above the diagonal (the matrix is symmetric; on the diagonal tiles both entries were
/// computed, from the same products). A template only so that it lives in the header.
template <class Value>
MYRIAD_KERNEL void finish_covariance_kernel(const Value* partials, std::int64_t slices, int dim,
                                            Value* scatter) {
  const std::int64_t entries = static_cast<std::int64_t>(dim) * dim;
  for (std::int64_t e = global_thread_index(); e < entries; e += grid_stride()) {
    const int i = static_cast<int>(e / dim), j = static_cast<int>(e % dim);
    const std::int64_t source =
        i / kCovarianceTile >= j / kCovarianceTile ? e : static_cast<std::int64_t>(j) * dim + i;
    Value sum{};
    for (std::int64_t s = 0; s < slices; ++s) sum += partials[s * entries + source];
    scatter[e] = sum;
  }
}

}  // namespace myriad::kernels
