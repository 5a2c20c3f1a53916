#pragma once
// Kernels of the batched Cholesky tiers (linalg/batched_cholesky.hpp; launch code in
// kernels/batched_cholesky.cu). Every batch is contiguous and column-major: element (i, j) of
// matrix b at [b · n² + i + j · n]; right-hand side b at [b · n, b · n + n).
//
// registers tier: one thread per matrix, grid-stride, through the fixed-size functions of
//   linalg/fixed_cholesky.hpp instantiated for the batch's n (one kernel per n): the lower
//   triangle is read from global memory straight into registers, factored, and written back.
//   A warp's load of element (i, j) touches 32 matrices n² · sizeof(T) apart, so each load
//   instruction fetches 32 sectors; the next rows of the same column sit in those sectors and
//   are served from L1, so DRAM traffic stays near the matrices' bytes without the thread
//   tier's shared-memory staging (and its limit of a few blocks per SM).
// thread tier: a block of kThreadTierBlock threads owns a run of kThreadTierBlock consecutive
//   matrices. It copies them, coalesced, into shared memory interleaved as [element][matrix]
//   with a row pitch of kThreadTierBlock + 1 (element r of the block's matrix t at
//   r · (kThreadTierBlock + 1) + t: a warp's 32 threads touch 32 consecutive words of the same
//   element, and the staging loop's consecutive elements of one matrix fall in different
//   banks), then every thread runs the per-chain linalg::cholesky_in_place_info on its matrix
//   through a strided MatrixView — the same code the constrained-HMC kernels run on their
//   [element][chain] workspace — and the lower triangles are copied back.
// tile tier: one cooperative group per matrix (a warp for n ≤ 32, several matrices per block;
//   a whole block for n > 32), the matrix in shared memory with leading dimension n, and a
//   right-looking Cholesky (Golub & Van Loan, 4th ed., Alg. 4.2.2, outer-product form) with one
//   barrier per column: in step k every thread reads the pivot a_kk, applies the rank-1 update
//   a_ij ← a_ij − (a_ik / l_kk)(a_jk / l_kk) to the trailing lower triangle (a warp per column
//   j, lanes over rows i: conflict-free), the group synchronises, and column k is scaled by
//   1/l_kk — which no later step reads, so it needs no barrier of its own.
// Solves: thread tier per thread on the staged copy (linalg/triangular.hpp); tile tier one warp
//   per right-hand side, L streamed from global memory a column at a time (coalesced): forward
//   substitution in column (axpy) form, back substitution in dot-product form with a warp
//   reduction per unknown.

#include <cuda_runtime.h>

#include <cstdint>

#include "myriad/core/math.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/fixed_cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::kernels {

/// Threads (= matrices) per block of the registers tier.
constexpr int kRegistersTierBlock = 128;
/// Threads (= matrices) per block of the thread tier.
constexpr int kThreadTierBlock = 32;
/// Row pitch of the thread tier's interleaved shared-memory copy.
constexpr int kThreadTierPitch = kThreadTierBlock + 1;
/// Matrices per block of the tile tier's warp variant (n ≤ 32).
constexpr int kTileWarpsPerBlock = 4;
/// Right-hand sides (one warp each) per block of the tile tier's solve.
constexpr int kTileSolveWarpsPerBlock = 4;

/// Dynamic shared memory, aligned for double.
template <class T>
__device__ T* shared_buffer() {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  return reinterpret_cast<T*>(shared_bytes);
}

/// The block's staged matrices: element r of local matrix t at shared[r · pitch + t], so that
/// matrix t is a column-major MatrixView with row stride `pitch` and column stride n · pitch.
template <class T>
__device__ MatrixView<T> staged_matrix(T* shared, int n, int t) {
  return {shared + t, n, n, kThreadTierPitch, static_cast<std::int64_t>(n) * kThreadTierPitch};
}

/// Copies `count` consecutive matrices (count · n² elements from `global`) into the interleaved
/// shared layout; coalesced reads.
template <class T>
__device__ void stage_matrices(const T* global, int n, int count, T* shared) {
  const int n2 = n * n;
  for (int e = threadIdx.x; e < count * n2; e += blockDim.x) {
    const int t = e / n2;
    const int r = e - t * n2;
    shared[r * kThreadTierPitch + t] = global[e];
  }
}

/// Registers tier, factor: one thread per matrix of size N (see the file comment).
template <class T, int N>
__global__ void __launch_bounds__(kRegistersTierBlock)
    registers_tier_cholesky_kernel(T* matrices, std::int64_t batch, int* info) {
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
       b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    info[b] = linalg::fixed_cholesky_in_place<N>(linalg::batch_matrix(matrices, N, b));
  }
}

/// Registers tier, solve: one thread per right-hand side, factor and vector in registers.
template <class T, int N>
__global__ void __launch_bounds__(kRegistersTierBlock)
    registers_tier_solve_kernel(const T* factors, std::int64_t batch, T* rhs,
                                linalg::CholeskySolve which) {
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
       b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    linalg::fixed_cholesky_solve<N, T>(linalg::batch_matrix(factors, N, b), rhs + b * N, which);
  }
}

/// Thread tier, factor: see the file comment.
template <class T>
__global__ void thread_tier_cholesky_kernel(T* matrices, int n, std::int64_t batch, int* info) {
  T* shared = shared_buffer<T>();
  const int n2 = n * n;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreadTierBlock; first < batch;
       first += static_cast<std::int64_t>(gridDim.x) * kThreadTierBlock) {
    const int count =
        static_cast<int>(batch - first < kThreadTierBlock ? batch - first : kThreadTierBlock);
    T* global = matrices + first * n2;
    stage_matrices(global, n, count, shared);
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < count) {
      info[first + threadIdx.x] =
          linalg::cholesky_in_place_info(staged_matrix(shared, n, threadIdx.x));
    }
    __syncthreads();
    // Lower triangles back (a failed matrix's partial factor too); the upper is never written.
    for (int e = threadIdx.x; e < count * n2; e += blockDim.x) {
      const int t = e / n2;
      const int r = e - t * n2;
      const int j = r / n;
      if (r - j * n >= j) global[e] = shared[r * kThreadTierPitch + t];
    }
    __syncthreads();
  }
}

/// Thread tier, solve: factors staged as in the factor kernel, right-hand sides interleaved
/// after them (element i of local vector t at rhs_shared[i · pitch + t]).
template <class T>
__global__ void thread_tier_solve_kernel(const T* factors, int n, std::int64_t batch, T* rhs,
                                         linalg::CholeskySolve which) {
  T* shared = shared_buffer<T>();
  T* rhs_shared = shared + static_cast<std::int64_t>(n) * n * kThreadTierPitch;
  const int n2 = n * n;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreadTierBlock; first < batch;
       first += static_cast<std::int64_t>(gridDim.x) * kThreadTierBlock) {
    const int count =
        static_cast<int>(batch - first < kThreadTierBlock ? batch - first : kThreadTierBlock);
    stage_matrices(factors + first * n2, n, count, shared);
    T* global_rhs = rhs + first * n;
    for (int e = threadIdx.x; e < count * n; e += blockDim.x) {
      const int t = e / n;
      rhs_shared[(e - t * n) * kThreadTierPitch + t] = global_rhs[e];
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < count) {
      const MatrixView<const T> l = staged_matrix(shared, n, threadIdx.x).as_const();
      const ChainVector<T> x{rhs_shared + threadIdx.x, kThreadTierPitch, n};
      if (which != linalg::CholeskySolve::backward) linalg::solve_lower(l, x);
      if (which != linalg::CholeskySolve::forward) linalg::solve_lower_transpose(l, x);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < count * n; e += blockDim.x) {
      const int t = e / n;
      global_rhs[e] = rhs_shared[(e - t * n) * kThreadTierPitch + t];
    }
    __syncthreads();
  }
}

/// A warp as a cooperative group (the tile tier for n ≤ 32).
struct WarpGroup {
  __device__ int rank() const { return threadIdx.x & 31; }
  __device__ int size() const { return 32; }
  __device__ void sync() const { __syncwarp(); }
};

/// A thread block as a cooperative group (the tile tier for n > 32); blockDim.x is a multiple
/// of 32.
struct BlockGroup {
  __device__ int rank() const { return threadIdx.x; }
  __device__ int size() const { return blockDim.x; }
  __device__ void sync() const { __syncthreads(); }
};

/// Right-looking Cholesky of the column-major n × n matrix `a` (leading dimension n) in shared
/// memory by the threads of `group`; returns LAPACK's info (uniform across the group).
template <class T, class Group>
__device__ int tile_cholesky(const Group& group, T* a, int n) {
  const int lane = group.rank() & 31;
  const int column_group = group.rank() >> 5;
  const int column_groups = group.size() >> 5;
  for (int k = 0; k < n; ++k) {
    const T pivot = a[k + k * n];
    if (!(pivot > T(0)) || !isfinite(pivot)) return k + 1;
    const T l_kk = sqrt(pivot);
    const T inverse_l_kk = T(1) / l_kk;
    const T* column_k = a + k * n;
    // Trailing update with l_ik = a_ik / l_kk formed on the fly (column k is scaled below).
    for (int j = k + 1 + column_group; j < n; j += column_groups) {
      const T l_jk = column_k[j] * inverse_l_kk;
      T* column_j = a + j * n;
      for (int i = j + lane; i < n; i += 32) column_j[i] -= (column_k[i] * inverse_l_kk) * l_jk;
    }
    group.sync();
    // Column k is read by no later step: scale it without a barrier of its own.
    for (int i = k + 1 + group.rank(); i < n; i += group.size()) a[i + k * n] *= inverse_l_kk;
    if (group.rank() == 0) a[k + k * n] = l_kk;
  }
  return 0;
}

/// Copies a column-major n × n matrix between global and shared memory (all n² elements in,
/// the lower triangle out).
template <class T, class Group>
__device__ void tile_load(const Group& group, const T* global, T* shared, int n) {
  for (int e = group.rank(); e < n * n; e += group.size()) shared[e] = global[e];
}
template <class T, class Group>
__device__ void tile_store_lower(const Group& group, const T* shared, T* global, int n) {
  for (int e = group.rank(); e < n * n; e += group.size()) {
    const int j = e / n;
    if (e - j * n >= j) global[e] = shared[e];
  }
}

/// Tile tier, n ≤ 32: one warp per matrix, kTileWarpsPerBlock matrices per block.
template <class T>
__global__ void tile_warp_cholesky_kernel(T* matrices, int n, std::int64_t batch, int* info) {
  const WarpGroup warp;
  const int n2 = n * n;
  T* shared = shared_buffer<T>() + (threadIdx.x >> 5) * n2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kTileWarpsPerBlock;
  for (std::int64_t b =
           static_cast<std::int64_t>(blockIdx.x) * kTileWarpsPerBlock + (threadIdx.x >> 5);
       b < batch; b += stride) {
    T* global = matrices + b * n2;
    tile_load(warp, global, shared, n);
    warp.sync();
    const int status = tile_cholesky(warp, shared, n);
    warp.sync();
    tile_store_lower(warp, shared, global, n);
    if (warp.rank() == 0) info[b] = status;
    warp.sync();
  }
}

/// Tile tier, n > 32: one block per matrix.
template <class T>
__global__ void tile_block_cholesky_kernel(T* matrices, int n, std::int64_t batch, int* info) {
  const BlockGroup block;
  T* shared = shared_buffer<T>();
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  for (std::int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    T* global = matrices + b * n2;
    tile_load(block, global, shared, n);
    block.sync();
    const int status = tile_cholesky(block, shared, n);
    block.sync();
    tile_store_lower(block, shared, global, n);
    if (block.rank() == 0) info[b] = status;
    block.sync();
  }
}

/// Sum over the 32 lanes of a warp, returned to every lane.
template <class T>
__device__ T warp_sum(T x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

/// Tile tier, solve: one warp per right-hand side, x in shared memory.
template <class T>
__global__ void tile_solve_kernel(const T* factors, int n, std::int64_t batch, T* rhs,
                                  linalg::CholeskySolve which) {
  const int lane = threadIdx.x & 31;
  T* x = shared_buffer<T>() + (threadIdx.x >> 5) * n;
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kTileSolveWarpsPerBlock;
  for (std::int64_t b =
           static_cast<std::int64_t>(blockIdx.x) * kTileSolveWarpsPerBlock + (threadIdx.x >> 5);
       b < batch; b += stride) {
    const T* l = factors + b * n2;
    T* global_x = rhs + b * n;
    for (int i = lane; i < n; i += 32) x[i] = global_x[i];
    __syncwarp();
    if (which != linalg::CholeskySolve::backward) {
      // L x = b, column form: x_j = b_j / l_jj, then b_i −= l_ij x_j for i > j (column j of L
      // is contiguous). x_j is written after the barrier, when no lane still reads b_j.
      for (int j = 0; j < n; ++j) {
        const T x_j = x[j] / l[j + j * n];
        for (int i = j + 1 + lane; i < n; i += 32) x[i] -= l[i + j * n] * x_j;
        __syncwarp();
        if (lane == 0) x[j] = x_j;
      }
      __syncwarp();
    }
    if (which != linalg::CholeskySolve::forward) {
      // Lᵀ x = b, dot form: x_i = (b_i − Σ_{k>i} l_ki x_k) / l_ii (column i of L contiguous).
      for (int i = n - 1; i >= 0; --i) {
        T partial = T(0);
        for (int k = i + 1 + lane; k < n; k += 32) partial += l[k + i * n] * x[k];
        const T x_i = (x[i] - warp_sum(partial)) / l[i + i * n];
        __syncwarp();
        if (lane == 0) x[i] = x_i;
        __syncwarp();
      }
    }
    for (int i = lane; i < n; i += 32) global_x[i] = x[i];
    __syncwarp();
  }
}

/// pointers[b] = base + b · stride for b < count: the pointer arrays of cuSOLVER's and
/// cuBLAS's batched calls, built on the device.
template <class T>
__global__ void batch_pointers_kernel(T* base, std::int64_t stride, std::int64_t count,
                                      T** pointers) {
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < count;
       b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    pointers[b] = base + b * stride;
  }
}

}  // namespace myriad::kernels
