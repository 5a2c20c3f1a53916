#pragma once
// Philox4x32-10 (Salmon et al. 2011, as Random123's philox4x32 computes it) for W streams at
// once: the same counter, one key per lane, as the random streams of W consecutive chains draw
// (core/random.hpp: key = (chain, low seed word), counter = (draw, purpose, iteration, high seed
// word)). Written as loops over the lanes, which compilers turn into vector multiplies
// (32 × 32 → 64-bit, vpmuludq) in the lane kernels' translation units. Arch only names the
// instruction set a translation unit is compiled for, so that each set's instantiation is its
// own function (detail/hmc_lane_kernel.hpp: no function is shared between units built for
// different sets). tests/unit/test_random.cpp checks every word against Random123.

#include <cstdint>

namespace myriad {

/// out[w][l], w < 4: Philox4x32-10 of counter (c0, c1, c2, c3) under key (key0[l], key1).
template <class Arch, int W>
void philox_lanes(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                  const std::uint32_t* key0, std::uint32_t key1, std::uint32_t (*out)[W]) {
  constexpr std::uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // PHILOX_M4x32_0, _1
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // PHILOX_W32_0, _1
  std::uint32_t x0[W], x1[W], x2[W], x3[W], k0[W];
  for (int l = 0; l < W; ++l) {
    x0[l] = c0;
    x1[l] = c1;
    x2[l] = c2;
    x3[l] = c3;
    k0[l] = key0[l];
  }
  std::uint32_t k1 = key1;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // the key is bumped between rounds, not before the first
      for (int l = 0; l < W; ++l) k0[l] += kW0;
      k1 += kW1;
    }
    for (int l = 0; l < W; ++l) {
      const std::uint64_t p0 = kM0 * x0[l], p1 = kM1 * x2[l];
      const std::uint32_t y0 = static_cast<std::uint32_t>(p1 >> 32) ^ x1[l] ^ k0[l];
      const std::uint32_t y2 = static_cast<std::uint32_t>(p0 >> 32) ^ x3[l] ^ k1;
      x1[l] = static_cast<std::uint32_t>(p1);
      x3[l] = static_cast<std::uint32_t>(p0);
      x0[l] = y0;
      x2[l] = y2;
    }
  }
  for (int l = 0; l < W; ++l) {
    out[0][l] = x0[l];
    out[1][l] = x1[l];
    out[2][l] = x2[l];
    out[3][l] = x3[l];
  }
}

/// u[l] = RandomStream::uniform_from_words<T>(first[l], second[l]) (core/random.hpp, which
/// states the construction), lane by lane.
template <class Arch, class T, int W>
void uniforms_from_words(const std::uint32_t* first, const std::uint32_t* second, T* u) {
  for (int l = 0; l < W; ++l) {
    if constexpr (sizeof(T) == sizeof(float)) {
      u[l] = (static_cast<float>(first[l] >> 9) + 0.5f) * 1.1920928955078125e-7f;  // 2^-23
    } else {
      const std::uint64_t bits = (static_cast<std::uint64_t>(first[l]) << 20) ^ (second[l] >> 12);
      u[l] = (static_cast<double>(bits) + 0.5) * 2.220446049250313080847e-16;  // 2^-52
    }
  }
}

}  // namespace myriad
