#pragma once
// MYRIAD_HD marks functions that run on the host and, under nvcc, on the device. Per-chain
// code (models, transitions, random draws) is written once with it and called from the CPU
// backend's OpenMP loop and from CUDA kernels alike (DESIGN.md, rule 1).

#if defined(__CUDACC__)
#define MYRIAD_HD __host__ __device__
#define MYRIAD_INLINE __forceinline__
#else
#define MYRIAD_HD
#define MYRIAD_INLINE inline
#endif

#if defined(__CUDA_ARCH__)
#define MYRIAD_DEVICE_CODE 1
#else
#define MYRIAD_DEVICE_CODE 0
#endif

// MYRIAD_UNROLL before a loop whose trip count is a compile-time constant asks the compiler to
// unroll it fully, so that every index into a local array becomes a constant and the array can
// live in registers (linalg/fixed_cholesky.hpp). A request, never a change of results.
#if defined(__CUDACC__)
#define MYRIAD_UNROLL _Pragma("unroll")
#elif defined(__clang__)
#define MYRIAD_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define MYRIAD_UNROLL _Pragma("GCC unroll 256")
#else
#define MYRIAD_UNROLL
#endif
