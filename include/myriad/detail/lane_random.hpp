#pragma once
// The random numbers of a group of chains in SIMD lanes (detail/simd_lanes.hpp), drawn by
// RandomStream per lane and stored lane-interleaved. Compiled once in the library at the
// baseline instruction set (src/core/lane_random.cpp): the lane kernels of every instruction
// set call these instead of instantiating RandomStream's inline templates themselves, which a
// program might then run from a copy compiled for a wider instruction set than the machine has
// (the linker keeps one copy of an inline function, from any translation unit).

#include <cstdint>

#include "myriad/core/random.hpp"

namespace myriad {

/// out[d · width + l] = normal d (d < n) of chain first + l's stream at (iteration, purpose):
/// what RandomStream(seed, first + l).fill_normal writes for that chain alone.
void fill_normal_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                       Purpose purpose, double* out, int n);
void fill_normal_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                       Purpose purpose, float* out, int n);

/// out[l] = RandomStream(seed, first + l).normal(iteration, purpose, index), l < width.
void normal_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                  Purpose purpose, std::uint32_t index, double* out);
void normal_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                  Purpose purpose, std::uint32_t index, float* out);

/// out[l] = RandomStream(seed, first + l).uniform(iteration, purpose, index), l < width.
void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, double* out);
void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, float* out);

}  // namespace myriad
