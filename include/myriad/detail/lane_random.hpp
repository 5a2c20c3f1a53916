#pragma once
// Single random numbers of a group of chains in SIMD lanes (detail/simd_lanes.hpp: the accept
// uniforms), drawn by RandomStream per lane. Compiled once in the
// library at the baseline instruction set (src/core/lane_random.cpp): the lane kernels of every
// instruction set call these instead of instantiating RandomStream's inline templates themselves,
// which a program might then run from a copy compiled for a wider instruction set than the machine
// has (the linker keeps one copy of an inline function, from any translation unit).

#include <cstdint>

#include "myriad/core/random.hpp"

namespace myriad {

/// out[l] = RandomStream(seed, first + l).uniform(iteration, purpose, index), l < width.
void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, double* out);
void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, float* out);

}  // namespace myriad
