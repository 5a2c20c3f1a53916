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
