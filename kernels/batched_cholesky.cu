// Launch code of the batched Cholesky tiers (linalg/batched_cholesky.hpp; kernels in
// kernels/batched_cholesky_kernels.cuh) and the library tier: cuSOLVER potrfBatched for the
// factorisation and cuBLAS trsmBatched for the solves, with handles created once per device and
// host thread and the pointer arrays they need built on the device in stream-ordered memory.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "batched_cholesky_kernels.cuh"
#include "cuda_try.cuh"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"

namespace myriad::linalg {

namespace {

/// The pointer arrays built per library call hold at most this many pointers (8 MiB).
constexpr std::int64_t kLibraryChunk = kLibraryCholeskyChunk;

/// cuSOLVER and cuBLAS handles of one device, created on first use by this host thread and
/// destroyed when the thread exits (handles are not safe to share between threads issuing work
/// concurrently, and creating one costs milliseconds).
struct LibraryHandles {
  int device = -1;
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
};

class HandleCache {
 public:
  HandleCache() = default;
  HandleCache(const HandleCache&) = delete;
  HandleCache& operator=(const HandleCache&) = delete;
  ~HandleCache() {
    for (LibraryHandles& h : handles_) {
      if (h.solver) cusolverDnDestroy(h.solver);
      if (h.blas) cublasDestroy(h.blas);
    }
  }

  /// The handles of the current device. Each is created where it is missing, and is in the
  /// cache from then on, so that the destructor releases it even if creating the other fails.
  LibraryHandles& get() {
    int device = 0;
    MYRIAD_CUDA_TRY(cudaGetDevice(&device));
    auto it = std::find_if(handles_.begin(), handles_.end(),
                           [device](const LibraryHandles& h) { return h.device == device; });
    if (it == handles_.end()) {
      handles_.push_back(LibraryHandles{device});
      it = handles_.end() - 1;
    }
    if (!it->solver) MYRIAD_CUSOLVER_TRY(cusolverDnCreate(&it->solver));
    if (!it->blas) MYRIAD_CUBLAS_TRY(cublasCreate(&it->blas));
    return *it;
  }

 private:
  std::vector<LibraryHandles> handles_;
};

/// This thread's handles of the current device, bound to a stream for one call and back on the
/// legacy default stream when it ends: the cached handles outlive the call, and must not keep a
/// stream that its owner (a backend's compute stream) destroys before the thread exits.
class BoundHandles {
 public:
  BoundHandles(const LibraryHandles& handles, cudaStream_t stream)
      : solver(handles.solver), blas(handles.blas) {
    MYRIAD_CUSOLVER_TRY(cusolverDnSetStream(solver, stream));
    MYRIAD_CUBLAS_TRY(cublasSetStream(blas, stream));
  }
  ~BoundHandles() {  // never throws: a destructor path
    cusolverDnSetStream(solver, nullptr);
    cublasSetStream(blas, nullptr);
  }
  BoundHandles(const BoundHandles&) = delete;
  BoundHandles& operator=(const BoundHandles&) = delete;

  const cusolverDnHandle_t solver;
  const cublasHandle_t blas;
};

BoundHandles library_handles(cudaStream_t stream) {
  thread_local HandleCache cache;
  return BoundHandles(cache.get(), stream);
}

/// Stream-ordered device scratch (cudaMallocAsync / cudaFreeAsync on the same stream).
template <class T>
class StreamBuffer {
 public:
  StreamBuffer(std::size_t count, cudaStream_t stream) : stream_(stream) {
    MYRIAD_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream));
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  ~StreamBuffer() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

void require_device(const char* name) {
  if (!cuda_device_available()) {
    throw unavailable_error(
        detail::concat(name, ": no CUDA device is available; use batched_cholesky_cpu"));
  }
}

void check_batch_arguments(const void* data, int n, std::int64_t batch, const char* name) {
  MYRIAD_EXPECTS(n >= 1, name, ": the matrix size n must be at least 1, got ", n);
  MYRIAD_EXPECTS(batch >= 0, name, ": the batch size must not be negative, got ", batch);
  MYRIAD_EXPECTS(batch == 0 || data != nullptr, name, ": null device data for a batch of ", batch);
}

int current_sm_count() {
  int device = 0, sm_count = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  MYRIAD_CUDA_TRY(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

std::size_t shared_memory_optin() {
  int device = 0, bytes = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  MYRIAD_CUDA_TRY(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(bytes);
}

/// Dynamic shared memory of each tier's factor kernel for size n.
template <class T>
std::size_t thread_tier_bytes(int n) {
  return static_cast<std::size_t>(n) * n * kernels::kThreadTierPitch * sizeof(T);
}
template <class T>
std::size_t tile_tier_bytes(int n) {
  const std::size_t per_matrix = static_cast<std::size_t>(n) * n * sizeof(T);
  return n <= 32 ? per_matrix * kernels::kTileWarpsPerBlock : per_matrix;
}
/// Dynamic shared memory of the solve kernels: the thread tier stages n × n factors and
/// n-vectors, the tile tier one n-vector per warp.
template <class T>
std::size_t thread_tier_solve_bytes(int n) {
  return static_cast<std::size_t>(n) * (n + 1) * kernels::kThreadTierPitch * sizeof(T);
}
template <class T>
std::size_t tile_solve_bytes(int n) {
  return static_cast<std::size_t>(n) * kernels::kTileSolveWarpsPerBlock * sizeof(T);
}
/// Threads per block of the tile tier for n > 32: enough warps that each trailing column of a
/// step early in the factorisation has a warp, capped at 256 (per-column work is ≤ n/32 rows per
/// lane).
int tile_block_threads(int n) { return n <= 64 ? 64 : (n <= 128 ? 128 : 256); }

/// Lets `kernel` use `bytes` of dynamic shared memory (above 48 KiB needs the opt-in).
template <class Kernel>
void allow_shared_memory(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024) {
    MYRIAD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
  }
}

/// Blocks for a grid-stride kernel over `items` units of `per_block`: enough to cover them, at
/// most one wave of resident blocks.
template <class Kernel>
int grid_blocks(Kernel kernel, int threads, std::size_t shared_bytes, std::int64_t items,
                std::int64_t per_block) {
  int blocks_per_sm = 0;
  MYRIAD_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, shared_bytes));
  const std::int64_t wave =
      static_cast<std::int64_t>(current_sm_count()) * std::max(blocks_per_sm, 1);
  const std::int64_t needed = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(needed, wave)));
}

cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** a, int* info, int count) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** a, int* info, int count) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
}
cublasStatus_t trsv_batched(cublasHandle_t h, cublasOperation_t op, int n, const float* const* l,
                            float* const* b, int count) {
  const float one = 1;
  return cublasStrsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT,
                            n, 1, &one, l, n, b, n, count);
}
cublasStatus_t trsv_batched(cublasHandle_t h, cublasOperation_t op, int n, const double* const* l,
                            double* const* b, int count) {
  const double one = 1;
  return cublasDtrsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT,
                            n, 1, &one, l, n, b, n, count);
}

cublasStatus_t gram_batched(cublasHandle_t h, int n, const float* const* a, float* const* b,
                            int count) {
  const float one = 1, zero = 0;
  return cublasSgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, b, n,
                            count);
}
cublasStatus_t gram_batched(cublasHandle_t h, int n, const double* const* a, double* const* b,
                            int count) {
  const double one = 1, zero = 0;
  return cublasDgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, b, n,
                            count);
}

/// Launches a grid-stride kernel with `bytes` of dynamic shared memory, `threads` per block,
/// over `batch` matrices of which a block takes `per_block`: at most one wave of resident blocks.
template <class Kernel, class... Args>
void launch_with_shared_memory(Kernel kernel, int threads, std::size_t bytes, std::int64_t batch,
                               std::int64_t per_block, cudaStream_t stream, Args... args) {
  allow_shared_memory(kernel, bytes);
  const int blocks = grid_blocks(kernel, threads, bytes, batch, per_block);
  kernel<<<blocks, threads, bytes, stream>>>(args...);
  MYRIAD_CHECK_LAUNCH();
}

/// Launches the registers tier's kernel of size n, kernel_for(std::integral_constant<int, n>),
/// with one thread per matrix of the batch.
template <class T, class KernelFor, class... Args>
void launch_registers_tier(int n, std::int64_t batch, cudaStream_t stream, KernelFor kernel_for,
                           Args... args) {
  const bool launched = with_fixed_cholesky_size<T>(n, [&](auto size) {
    const auto kernel = kernel_for(size);
    const int blocks =
        grid_blocks(kernel, kernels::kRegistersTierBlock, 0, batch, kernels::kRegistersTierBlock);
    kernel<<<blocks, kernels::kRegistersTierBlock, 0, stream>>>(args...);
    MYRIAD_CHECK_LAUNCH();
  });
  MYRIAD_EXPECTS(launched, "the registers tier has no kernel for n = ", n);
}

/// Fills pointers[b] = base + b · stride on the device.
template <class T>
void build_pointers(T* base, std::int64_t stride, std::int64_t count, T** pointers,
                    cudaStream_t stream) {
  constexpr int threads = 256;
  const int blocks = static_cast<int>(
      std::min<std::int64_t>((count + threads - 1) / threads, std::int64_t{1} << 16));
  kernels::batch_pointers_kernel<<<blocks, threads, 0, stream>>>(base, stride, count, pointers);
  MYRIAD_CHECK_LAUNCH();
}

}  // namespace

void prepare_batched_cholesky_cuda(CholeskyTier tier) {
  require_device("prepare_batched_cholesky_cuda");
  if (tier == CholeskyTier::library) library_handles(nullptr);
}

template <class T>
int batched_cholesky_max_size(CholeskyTier tier) {
  require_device("batched_cholesky_max_size");
  const std::size_t optin = shared_memory_optin();
  switch (tier) {
    case CholeskyTier::registers:
      return kFixedCholeskyMaxSize<T>;
    case CholeskyTier::thread: {
      const int fits = static_cast<int>(
          std::sqrt(static_cast<double>(optin) / (kernels::kThreadTierPitch * sizeof(T))));
      return std::min(32, fits);
    }
    case CholeskyTier::tile:
      return static_cast<int>(std::sqrt(static_cast<double>(optin) / sizeof(T)));
    case CholeskyTier::library:
      return std::numeric_limits<int>::max();
  }
  return 0;
}

template <class T>
void batched_cholesky_cuda(T* device_matrices, int n, std::int64_t batch, int* device_info,
                           CholeskyTier tier, void* stream_handle) {
  constexpr const char* name = "batched_cholesky_cuda";
  check_batch_arguments(device_matrices, n, batch, name);
  MYRIAD_EXPECTS(batch == 0 || device_info != nullptr, name, ": null device info array");
  require_device(name);
  const int max_n = batched_cholesky_max_size<T>(tier);
  MYRIAD_EXPECTS(n <= max_n, name, ": the ", to_string(tier), " tier supports n <= ", max_n,
                 " for ", sizeof(T) == 4 ? "float" : "double", " on this device, got n = ", n);
  if (batch == 0) return;
  const auto stream = static_cast<cudaStream_t>(stream_handle);

  switch (tier) {
    case CholeskyTier::registers:
      launch_registers_tier<T>(
          n, batch, stream,
          [](auto size) {
            return kernels::registers_tier_cholesky_kernel<T, decltype(size)::value>;
          },
          device_matrices, batch, device_info);
      return;
    case CholeskyTier::thread:
      launch_with_shared_memory(kernels::thread_tier_cholesky_kernel<T>, kernels::kThreadTierBlock,
                                thread_tier_bytes<T>(n), batch, kernels::kThreadTierBlock, stream,
                                device_matrices, n, batch, device_info);
      return;
    case CholeskyTier::tile:
      if (n <= 32) {
        launch_with_shared_memory(kernels::tile_warp_cholesky_kernel<T>,
                                  32 * kernels::kTileWarpsPerBlock, tile_tier_bytes<T>(n), batch,
                                  kernels::kTileWarpsPerBlock, stream, device_matrices, n, batch,
                                  device_info);
      } else {
        launch_with_shared_memory(kernels::tile_block_cholesky_kernel<T>, tile_block_threads(n),
                                  tile_tier_bytes<T>(n), batch, 1, stream, device_matrices, n,
                                  batch, device_info);
      }
      return;
    case CholeskyTier::library: {
      const BoundHandles handles = library_handles(stream);
      const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
      const std::int64_t chunk = std::min(batch, kLibraryChunk);
      StreamBuffer<T*> pointers(static_cast<std::size_t>(chunk), stream);
      for (std::int64_t first = 0; first < batch; first += chunk) {
        const std::int64_t count = std::min(chunk, batch - first);
        build_pointers(device_matrices + first * n2, n2, count, pointers.get(), stream);
        MYRIAD_CUSOLVER_TRY(potrf_batched(handles.solver, n, pointers.get(), device_info + first,
                                          static_cast<int>(count)));
      }
      return;
    }
  }
}

template <class T>
void batched_cholesky_solve_cuda(const T* device_factors, int n, std::int64_t batch, T* device_rhs,
                                 CholeskyTier tier, void* stream_handle, CholeskySolve which) {
  constexpr const char* name = "batched_cholesky_solve_cuda";
  check_batch_arguments(device_factors, n, batch, name);
  MYRIAD_EXPECTS(batch == 0 || device_rhs != nullptr, name, ": null device right-hand sides");
  require_device(name);
  if (tier == CholeskyTier::registers) {
    MYRIAD_EXPECTS(n <= kFixedCholeskyMaxSize<T>, name,
                   ": the registers tier supports n <= ", kFixedCholeskyMaxSize<T>, " for ",
                   sizeof(T) == 4 ? "float" : "double", ", got n = ", n);
  } else if (tier == CholeskyTier::thread) {
    const std::size_t optin = shared_memory_optin();
    MYRIAD_EXPECTS(thread_tier_solve_bytes<T>(n) <= optin, name,
                   ": the thread tier's staged factors and right-hand sides of n = ", n, " need ",
                   thread_tier_solve_bytes<T>(n), " bytes of shared memory per block; ", optin,
                   " available");
  } else if (tier == CholeskyTier::tile) {
    MYRIAD_EXPECTS(tile_solve_bytes<T>(n) <= 48 * 1024, name, ": the tile tier supports n <= ",
                   48 * 1024 / (kernels::kTileSolveWarpsPerBlock * sizeof(T)),
                   " for solves, got n = ", n);
  }
  if (batch == 0) return;
  const auto stream = static_cast<cudaStream_t>(stream_handle);

  switch (tier) {
    case CholeskyTier::registers:
      launch_registers_tier<T>(
          n, batch, stream,
          [](auto size) { return kernels::registers_tier_solve_kernel<T, decltype(size)::value>; },
          device_factors, batch, device_rhs, which);
      return;
    case CholeskyTier::thread:
      launch_with_shared_memory(kernels::thread_tier_solve_kernel<T>, kernels::kThreadTierBlock,
                                thread_tier_solve_bytes<T>(n), batch, kernels::kThreadTierBlock,
                                stream, device_factors, n, batch, device_rhs, which);
      return;
    case CholeskyTier::tile:
      // At most 48 KiB (checked above): no opt-in needed, and none asked for.
      launch_with_shared_memory(kernels::tile_solve_kernel<T>,
                                32 * kernels::kTileSolveWarpsPerBlock, tile_solve_bytes<T>(n),
                                batch, kernels::kTileSolveWarpsPerBlock, stream, device_factors, n,
                                batch, device_rhs, which);
      return;
    case CholeskyTier::library: {
      const BoundHandles handles = library_handles(stream);
      const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
      const std::int64_t chunk = std::min(batch, kLibraryChunk);
      StreamBuffer<T*> factor_pointers(static_cast<std::size_t>(chunk), stream);
      StreamBuffer<T*> rhs_pointers(static_cast<std::size_t>(chunk), stream);
      for (std::int64_t first = 0; first < batch; first += chunk) {
        const std::int64_t count = std::min(chunk, batch - first);
        // trsmBatched takes const T* const[]; the factors are only read.
        build_pointers(const_cast<T*>(device_factors) + first * n2, n2, count,
                       factor_pointers.get(), stream);
        build_pointers(device_rhs + first * n, n, count, rhs_pointers.get(), stream);
        const T* const* l = factor_pointers.get();
        if (which != CholeskySolve::backward) {
          MYRIAD_CUBLAS_TRY(trsv_batched(handles.blas, CUBLAS_OP_N, n, l, rhs_pointers.get(),
                                         static_cast<int>(count)));
        }
        if (which != CholeskySolve::forward) {
          MYRIAD_CUBLAS_TRY(trsv_batched(handles.blas, CUBLAS_OP_T, n, l, rhs_pointers.get(),
                                         static_cast<int>(count)));
        }
      }
      return;
    }
  }
}

/// What the pointer-list calls share: their arguments checked, the device required, and
/// `call(handles)` on the stream's bound library handles unless the list is empty.
template <class Call>
void pointer_list_call(const char* name, int n, int count, bool arrays_given, void* stream_handle,
                       Call call) {
  MYRIAD_EXPECTS(n > 0 && count >= 0, name,
                 ": n must be positive and count non-negative, got n = ", n, ", count = ", count);
  MYRIAD_EXPECTS(count == 0 || arrays_given, name, ": null device array");
  require_device(name);
  if (count == 0) return;
  call(library_handles(static_cast<cudaStream_t>(stream_handle)));
}

template <class T>
void batched_cholesky_pointers_cuda(T** device_matrices, int n, int count, int* device_info,
                                    void* stream_handle) {
  pointer_list_call(
      "batched_cholesky_pointers_cuda", n, count,
      device_matrices != nullptr && device_info != nullptr, stream_handle,
      [&](const BoundHandles& handles) {
        MYRIAD_CUSOLVER_TRY(potrf_batched(handles.solver, n, device_matrices, device_info, count));
      });
}

template <class T>
void batched_gram_pointers_cuda(const T* const* device_a, T* const* device_b, int n, int count,
                                void* stream_handle) {
  pointer_list_call("batched_gram_pointers_cuda", n, count,
                    device_a != nullptr && device_b != nullptr, stream_handle,
                    [&](const BoundHandles& handles) {
                      MYRIAD_CUBLAS_TRY(gram_batched(handles.blas, n, device_a, device_b, count));
                    });
}

template void batched_cholesky_cuda<float>(float*, int, std::int64_t, int*, CholeskyTier, void*);
template void batched_cholesky_cuda<double>(double*, int, std::int64_t, int*, CholeskyTier, void*);
template void batched_cholesky_solve_cuda<float>(const float*, int, std::int64_t, float*,
                                                 CholeskyTier, void*, CholeskySolve);
template void batched_cholesky_solve_cuda<double>(const double*, int, std::int64_t, double*,
                                                  CholeskyTier, void*, CholeskySolve);
template void batched_cholesky_pointers_cuda<float>(float**, int, int, int*, void*);
template void batched_cholesky_pointers_cuda<double>(double**, int, int, int*, void*);
template void batched_gram_pointers_cuda<float>(const float* const*, float* const*, int, int,
                                                void*);
template void batched_gram_pointers_cuda<double>(const double* const*, double* const*, int, int,
                                                 void*);
template int batched_cholesky_max_size<float>(CholeskyTier);
template int batched_cholesky_max_size<double>(CholeskyTier);

}  // namespace myriad::linalg
