#pragma once
// Counter-based random streams (DESIGN.md, rule 2): Philox4x32-10 from Random123.
//
//   key     = (chain, low 32 bits of seed)
//   counter = (draw index, purpose tag, iteration, high 32 bits of seed)
//
// No generator state is stored: the same (seed, chain, iteration, purpose, draw) gives the same
// numbers on the CPU and the GPU, for any launch configuration, and a run can resume from its
// iteration count alone.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

// Philox needs no SSE; without it every file including this header preprocesses ~50k fewer
// lines (about 1 s per nvcc job).
#ifndef R123_USE_SSE
#define R123_USE_SSE 0
#endif
#include <Random123/philox.h>

#if defined(MYRIAD_SIMD_NORMALS) && !MYRIAD_DEVICE_CODE
#include "myriad/detail/box_muller_lanes.hpp"
#endif

namespace myriad {

/// What a draw is for. Distinct tags keep the streams of different uses independent.
enum class Purpose : std::uint32_t {
  initial_point = 1,     ///< initial positions
  momentum = 2,          ///< HMC momentum refresh
  accept = 3,            ///< Metropolis accept/reject uniform
  trajectory = 4,        ///< ensemble-shared jitter of the trajectory length
  proposal = 5,          ///< random-walk proposals of AIS with Metropolis transitions
  exact_sample = 6,      ///< exact posterior draws that start reverse AIS runs
  restart = 7,           ///< the healthy chain a stranded chain restarts from (HMC warm-up)
  tree = 8,              ///< NUTS: each doubling's direction and merge (mcmc/nuts.hpp)
  tree_leaf = 9,         ///< NUTS: the multinomial choice among a subtree's leaves
  sbc_tie = 10,          ///< simulation-based calibration: the uniform that breaks a rank's ties
  sbc_bands = 11,        ///< simulation-based calibration: the uniform ranks that calibrate γ
  auxiliary = 12,        ///< an estimator's auxiliary variates u, keyed by the counter they carry
  slice_height = 13,     ///< slice sampling of x: the slice height (mcmc/slice.hpp)
  slice_direction = 14,  ///< slice sampling of x: the line's direction or the ellipse's ν
  slice_bracket = 15,    ///< slice sampling of x: bracket, step-out split and shrinks
  auxiliary_slice_height = 16,     ///< slice sampling of u (APM): the slice height
  auxiliary_slice_direction = 17,  ///< slice sampling of u: the ellipse's ν or the direction
  auxiliary_slice_bracket = 18,    ///< slice sampling of u: the angle or bracket and shrinks
  temperature = 19,                ///< tempering: the draw of β (or the index) given x
  variational = 20,                ///< a variational base's fit: reparameterisation draws
  user = 1024,                     ///< first tag free for models and extensions
};

/// Tag number `offset` of those free for models and extensions (Purpose::user + offset).
MYRIAD_HD constexpr std::uint32_t user_purpose(std::uint32_t offset) {
  return static_cast<std::uint32_t>(Purpose::user) + offset;
}

/// Chain index used for streams shared by the whole ensemble (e.g. trajectory jitter).
constexpr std::uint64_t kEnsembleStream = 0xFFFFFFFFu;

/// One chain's random stream; trivially copyable, cheap to build inside a kernel.
class RandomStream {
 public:
  using Block = r123::Philox4x32::ctr_type;

  MYRIAD_HD RandomStream(std::uint64_t seed, std::uint64_t chain)
      : chain_(static_cast<std::uint32_t>(chain)),
        seed_lo_(static_cast<std::uint32_t>(seed)),
        seed_hi_(static_cast<std::uint32_t>(seed >> 32)) {}

  /// The raw Philox output for (iteration, purpose, draw): four 32-bit words.
  MYRIAD_HD Block block(std::uint32_t iteration, Purpose purpose, std::uint32_t draw) const {
    r123::Philox4x32 philox;
    Block counter = {{draw, static_cast<std::uint32_t>(purpose), iteration, seed_hi_}};
    r123::Philox4x32::key_type key = {{chain_, seed_lo_}};
    return philox(counter, key);
  }

  /// Uniform on the open interval (0, 1): 23 random bits for float, 52 for double.
  template <class T>
  MYRIAD_HD T uniform(std::uint32_t iteration, Purpose purpose, std::uint32_t draw) const {
    const Block b = block(iteration, purpose, draw);
    return uniform_from_words<T>(b.v[0], b.v[1]);
  }

  /// Exponential with rate 1.
  template <class T>
  MYRIAD_HD T exponential(std::uint32_t iteration, Purpose purpose, std::uint32_t draw) const {
    return -myriad::log(uniform<T>(iteration, purpose, draw));
  }

  /// Standard normal number `index` of a sequence; consecutive indices share Philox blocks,
  /// so fill vectors with fill_normal rather than calling this in a loop.
  template <class T>
  MYRIAD_HD T normal(std::uint32_t iteration, Purpose purpose, std::uint32_t index) const {
    const Block b = block(iteration, purpose, index / 2);
    T z0, z1;
    box_muller(uniform_from_words<T>(b.v[0], b.v[1]), uniform_from_words<T>(b.v[2], b.v[3]), z0,
               z1);
    return (index % 2 == 0) ? z0 : z1;
  }

  /// out[i] = normal(iteration, purpose, i) for i < n, two normals per Philox block. A team of
  /// lanes (core/team.hpp) shares the fill by pairs: with first_pair = rank and pair_step = size,
  /// each lane writes the pairs (2j, 2j + 1) with j ≡ rank (mod size); the values do not depend
  /// on the split.
  template <class T, class Vec>
  MYRIAD_HD void fill_normal(std::uint32_t iteration, Purpose purpose, Vec& out, int n,
                             int first_pair = 0, int pair_step = 1) const {
#if defined(MYRIAD_SIMD_NORMALS) && !MYRIAD_DEVICE_CODE
    // On the host, the uniforms of up to kLanePairs pairs at a time, then their normals in SIMD
    // lanes (detail/box_muller_lanes.hpp); the values are those box_muller gives one by one.
    constexpr int kLanePairs = 64;
    T u1[kLanePairs], u2[kLanePairs], z0[kLanePairs], z1[kLanePairs];
    int index[kLanePairs];
    int count = 0;
    const auto flush = [&] {
      detail::box_muller_lanes(u1, u2, count, z0, z1);
      for (int k = 0; k < count; ++k) {
        out[index[k]] = z0[k];
        if (index[k] + 1 < n) out[index[k] + 1] = z1[k];
      }
      count = 0;
    };
    for (int i = 2 * first_pair; i < n; i += 2 * pair_step) {
      const Block b = block(iteration, purpose, static_cast<std::uint32_t>(i / 2));
      u1[count] = uniform_from_words<T>(b.v[0], b.v[1]);
      u2[count] = uniform_from_words<T>(b.v[2], b.v[3]);
      index[count++] = i;
      if (count == kLanePairs) flush();
    }
    if (count > 0) flush();
#else
    for (int i = 2 * first_pair; i < n; i += 2 * pair_step) {
      const Block b = block(iteration, purpose, static_cast<std::uint32_t>(i / 2));
      T z0, z1;
      box_muller(uniform_from_words<T>(b.v[0], b.v[1]), uniform_from_words<T>(b.v[2], b.v[3]),
                 z0, z1);
      out[i] = z0;
      if (i + 1 < n) out[i + 1] = z1;
    }
#endif
  }

  /// Uniform in (0, 1) from two 32-bit words: (k + ½)/2^b with k the top b bits, b = 23 for
  /// float (from the first word) and 52 for double. k + ½ needs b + 1 significant bits, so every
  /// value is exact and the largest is 1 − 2^−(b+1) < 1 (Random123's u01fixedpt "open_open"
  /// convention); with b = 24 or 53, k + ½ would round up to 2^b and give exactly 1.
  template <class T>
  MYRIAD_HD static T uniform_from_words(std::uint32_t w0, std::uint32_t w1) {
    if constexpr (sizeof(T) == sizeof(float)) {
      (void)w1;
      return (static_cast<float>(w0 >> 9) + 0.5f) * 1.1920928955078125e-7f;  // 2^-23
    } else {
      const std::uint64_t bits = (static_cast<std::uint64_t>(w0) << 20) ^ (w1 >> 12);
      return (static_cast<double>(bits) + 0.5) * 2.220446049250313080847e-16;  // 2^-52
    }
  }

  // Box-Muller: u1, u2 in (0, 1) give two independent standard normals (public: the auxiliary
  // samplers map uniform pairs on the unit cube to normals by it). On the device,
  // sincospi(2 u2) gives both factors at once, without the out-of-line Payne-Hanek reduction
  // that sin/cos carry for arguments the compiler cannot bound (every kernel that drew normals
  // had it). glibc has no sincospi; host and device results differ in the last bits either way
  // (CUDA's sin/cos are not glibc's).
  template <class T>
  MYRIAD_HD static void box_muller(T u1, T u2, T& z0, T& z1) {
#if MYRIAD_DEVICE_CODE
    const T radius = myriad::sqrt(T(-2) * myriad::log(u1));
    T sine, cosine;
    ::sincospi(T(2) * u2, &sine, &cosine);
    z0 = radius * cosine;
    z1 = radius * sine;
#elif defined(MYRIAD_SIMD_NORMALS)
    detail::box_muller_lanes(&u1, &u2, 1, &z0, &z1);  // the values fill_normal gives
#else
    const T radius = myriad::sqrt(T(-2) * myriad::log(u1));
    const T angle = T(6.283185307179586476925) * u2;
    z0 = radius * myriad::cos(angle);
    z1 = radius * myriad::sin(angle);
#endif
  }

 private:
  std::uint32_t chain_;
  std::uint32_t seed_lo_;
  std::uint32_t seed_hi_;
};

}  // namespace myriad
