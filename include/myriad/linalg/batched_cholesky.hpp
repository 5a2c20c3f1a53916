#pragma once
// Batched Cholesky factorisation and solves of many small SPD matrices (DESIGN.md rule 6): the
// three CUDA tiers, the CPU twin they are tested against, and the cuSOLVER/cuBLAS tier that is
// both the fallback for large sizes and the correctness oracle. Plain C++: host code includes
// this header without CUDA.
//
// Layout (every function, CPU and CUDA). A batch of `batch` n × n matrices is one contiguous
// array of batch · n² elements; matrix b starts at element b · n² and is column-major with leading
// dimension n: element (i, j) of matrix b is at [b · n² + i + j · n]. This is the layout of LAPACK
// and of cuSOLVER's potrfBatched, so the library tier needs no copies. Only the lower triangle
// (i ≥ j) is read and, on success, overwritten with L (A = L Lᵀ). The thread and tile tiers and
// the CPU twin never write the strict upper triangle; the library tier may (cuSOLVER documents
// the other triangle as potrfBatched's workspace), so no caller may keep data there.
// Right-hand sides of the solves are contiguous too: vector b at [b · n, b · n + n).
//
// Status. info[b] follows LAPACK: 0 when matrix b was factored, k > 0 when the pivot of column k
// (1-based) was not positive (the leading minor of order k is not positive definite). The
// thread and tile tiers and the CPU twin also flag a NaN or infinite pivot this way;
// cuSOLVER's potrfBatched (library tier) may not flag NaN. After a failure the lower triangle
// of that matrix is partially factored and tier-dependent.
//
// Tiers (CUDA):
//   registers  one thread per matrix, the lower triangle in registers (linalg/fixed_cholesky.hpp:
//              fixed-size templates for n ≤ kFixedCholeskyMaxSize<T>, 12 in double, 16 in
//              float), loaded from and stored to global memory directly; no shared memory.
//   thread     one thread per matrix running linalg::cholesky_in_place_info (the per-chain code
//              of the constrained-HMC kernels) on a copy of its matrix staged in shared memory,
//              [element][matrix] interleaved so that a warp's accesses are conflict-free; loads
//              and stores of the block's contiguous run of matrices are coalesced. For n ≲ 16.
//   tile       one warp (n ≤ 32) or one thread block (n > 32) per matrix, the matrix in shared
//              memory, right-looking column Cholesky with one barrier per column. For n ~
//              16–128; n² · sizeof(T) must fit the device's opt-in shared memory per block
//              (batched_cholesky_max_size).
//   library    cuSOLVER potrfBatched (factor) and cuBLAS trsmBatched (solves), any n.
// Which of registers and thread is faster at a given n (direct, uncoalesced loads against
// O(n³) shared-memory reads) is what bench/bm_cholesky.cpp's rows are for.
// The CUDA functions enqueue work on `stream` (a cudaStream_t; nullptr for the legacy default
// stream) and return without synchronising; device pointers must stay valid until the stream
// has passed the work. They throw myriad::unavailable_error in a build without CUDA or when no
// device is present, and myriad::invalid_argument for a size the tier does not support.

#include <cstdint>

#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad::linalg {

/// Matrix b of a contiguous column-major batch (the layout above): (i, j) at b · n² + i + j · n.
template <class T>
MYRIAD_HD MatrixView<T> batch_matrix(T* matrices, int n, std::int64_t b) {
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  return {matrices + b * n2, n, n, 1, n};
}

/// How a batch of small factorisations is mapped onto the GPU (DESIGN.md rule 6).
enum class CholeskyTier { registers, thread, tile, library };

inline constexpr EnumName<CholeskyTier> kCholeskyTierNames[] = {
    {CholeskyTier::registers, "registers"},
    {CholeskyTier::thread, "thread"},
    {CholeskyTier::tile, "tile"},
    {CholeskyTier::library, "library"}};

inline const char* to_string(CholeskyTier tier) { return enum_name(kCholeskyTierNames, tier); }

/// Which triangular solves a Cholesky solve applies to each right-hand side b, A = L Lᵀ.
enum class CholeskySolve {
  full,      ///< b ← A⁻¹ b = L⁻ᵀ L⁻¹ b
  forward,   ///< b ← L⁻¹ b (forward substitution)
  backward,  ///< b ← L⁻ᵀ b (back substitution)
};

/// CPU twin: factors every matrix of the batch in place with linalg::cholesky_in_place_info
/// (OpenMP over the batch) and writes info[b] for each. `matrices` holds batch · n² elements in
/// the layout above, `info` batch entries.
template <class T>
void batched_cholesky_cpu(T* matrices, int n, std::int64_t batch, int* info);

/// CPU twin of the solves: rhs_b ← (per `which`) A_b⁻¹ rhs_b, L_b⁻¹ rhs_b or L_b⁻ᵀ rhs_b for the
/// factors of batched_cholesky_cpu (lower triangles; the strict upper triangle is not read).
template <class T>
void batched_cholesky_solve_cpu(const T* factors, int n, std::int64_t batch, T* rhs,
                                CholeskySolve which = CholeskySolve::full);

/// Largest batch handed to one potrfBatched / trsmBatched call (their counts are int); the
/// library tier builds device arrays of pointers to a chunk's matrices for each call.
inline constexpr std::int64_t kLibraryCholeskyChunk = std::int64_t{1} << 20;

/// Device bytes a batched_cholesky_cuda or batched_cholesky_solve_cuda call on `tier` allocates
/// while it runs, for `batch` matrices: the library tier's pointer arrays (two for a solve:
/// factors and right-hand sides; at most 16 MiB), nothing on the other tiers.
inline std::int64_t batched_cholesky_call_bytes(CholeskyTier tier, std::int64_t batch) {
  if (tier != CholeskyTier::library) return 0;
  const std::int64_t chunk = batch < kLibraryCholeskyChunk ? batch : kLibraryCholeskyChunk;
  return 2 * static_cast<std::int64_t>(sizeof(void*)) * chunk;
}

// The device entry points: defined in kernels/batched_cholesky.cu in the CUDA variant of the
// library (myriad::cuda); in a program built without it, inline definitions that throw
// myriad::unavailable_error, so that code naming them links either way.
#if defined(MYRIAD_HAS_CUDA)

/// Factors a batch of SPD matrices in device memory in place on the given tier (see the file
/// comment); device_info receives batch statuses. Asynchronous on `stream`.
template <class T>
void batched_cholesky_cuda(T* device_matrices, int n, std::int64_t batch, int* device_info,
                           CholeskyTier tier, void* stream = nullptr);

/// Solves with a batch of factors in device memory, one right-hand side per matrix, in place in
/// device_rhs (batch · n elements). Asynchronous on `stream`.
template <class T>
void batched_cholesky_solve_cuda(const T* device_factors, int n, std::int64_t batch, T* device_rhs,
                                 CholeskyTier tier, void* stream = nullptr,
                                 CholeskySolve which = CholeskySolve::full);

/// The library tier on matrices at scattered addresses: factors in place the n × n matrices that
/// the device array device_matrices[0 … count) points to (each column-major with leading
/// dimension n; only the lower triangle read, LAPACK statuses in device_info[0 … count)), with
/// cuSOLVER's potrfBatched. For callers whose matrices sit at per-chain offsets rather than in
/// one contiguous batch (kernels/staged_preparation.cuh). Asynchronous on `stream`.
template <class T>
void batched_cholesky_pointers_cuda(T** device_matrices, int n, int count, int* device_info,
                                    void* stream = nullptr);

/// b_k ← a_kᵀ a_k for the n × n matrices that the device arrays device_a and device_b point to
/// (column-major, leading dimension n; all of b_k written), with cuBLAS's gemmBatched. A Gram of
/// a triangular factor needs its other triangle zero. Asynchronous on `stream`.
template <class T>
void batched_gram_pointers_cuda(const T* const* device_a, T* const* device_b, int n, int count,
                                void* stream = nullptr);

/// Creates the library tier's cuSOLVER and cuBLAS handles for this host thread and the current
/// device now instead of at its first call (they are cached per thread and device). They
/// allocate device workspace, so a caller that prepares before checking free memory (the
/// constrained-HMC backend) counts it, and an allocation failure shows at set-up, not mid-run.
/// Nothing for the other tiers. Throws like batched_cholesky_cuda where CUDA is unavailable.
void prepare_batched_cholesky_cuda(CholeskyTier tier);

/// The largest n that batched_cholesky_cuda accepts on `tier` for value type T on the current
/// device: registers by its instantiated sizes (kFixedCholeskyMaxSize<T>), thread and tile by
/// shared memory per block (thread also by 32), library by int. Throws like
/// batched_cholesky_cuda where CUDA is unavailable.
template <class T>
int batched_cholesky_max_size(CholeskyTier tier);

#else

namespace detail {
[[noreturn]] inline void no_cuda_build(const char* name) {
  throw unavailable_error(myriad::detail::concat(
      name, ": myriad was built without CUDA; use batched_cholesky_cpu / the CPU backend"));
}
}  // namespace detail

template <class T>
void batched_cholesky_cuda(T*, int, std::int64_t, int*, CholeskyTier, void* = nullptr) {
  detail::no_cuda_build("batched_cholesky_cuda");
}

template <class T>
void batched_cholesky_solve_cuda(const T*, int, std::int64_t, T*, CholeskyTier, void* = nullptr,
                                 CholeskySolve = CholeskySolve::full) {
  detail::no_cuda_build("batched_cholesky_solve_cuda");
}

template <class T>
void batched_cholesky_pointers_cuda(T**, int, int, int*, void* = nullptr) {
  detail::no_cuda_build("batched_cholesky_pointers_cuda");
}

template <class T>
void batched_gram_pointers_cuda(const T* const*, T* const*, int, int, void* = nullptr) {
  detail::no_cuda_build("batched_gram_pointers_cuda");
}

inline void prepare_batched_cholesky_cuda(CholeskyTier) {
  detail::no_cuda_build("prepare_batched_cholesky_cuda");
}

template <class T>
int batched_cholesky_max_size(CholeskyTier) {
  detail::no_cuda_build("batched_cholesky_max_size");
}

#endif  // MYRIAD_HAS_CUDA

}  // namespace myriad::linalg
