#pragma once
// Chains in SIMD lanes on the CPU (issue 23): an xsimd batch as the element type S of per-chain
// code (core/lanes.hpp). Lane l of every batch belongs to chain first + l of a group of W
// consecutive chains, so one call of a transition written over S advances W chains in lockstep,
// as a warp advances 32 on a GPU. Host only; needs xsimd (MYRIAD_SIMD_LANES).
//
// Here: LaneOps and LaneMath for batches, per-lane views of a vector of batches, and the group's
// random streams (LaneStreams: each lane draws from its own chain's stream, so a chain's numbers
// do not depend on its lane or group).
//
// Per-lane views read and write a batch's elements through T*: GCC and Clang give a vector type
// the alias set of its element type, which is what makes this well defined on the compilers the
// project builds with (the same idiom as xsimd's own generic kernels).

#include <array>
#include <cstdint>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/box_muller_batch.hpp"
#include "myriad/detail/lane_kernel.hpp"
#include "myriad/detail/lane_random.hpp"
#include "myriad/detail/philox_lanes.hpp"

namespace myriad {

template <class T, class A>
struct LaneOps<xsimd::batch<T, A>> {
  using S = xsimd::batch<T, A>;
  using mask = xsimd::batch_bool<T, A>;
  using scalar = T;
  static constexpr int width = static_cast<int>(S::size);
  template <class U>
  using per_lane = std::array<U, width>;

  static bool all(const mask& m) { return xsimd::all(m); }
  static bool any(const mask& m) { return xsimd::any(m); }
  static S select(const mask& m, const S& a, const S& b) { return xsimd::select(m, a, b); }
  template <class U>
  static void add_where(per_lane<U>& x, const mask& m, std::common_type_t<U> v) {
    for (int l = 0; l < width; ++l)
      if (m.get(static_cast<std::size_t>(l))) x[l] += v;
  }
  template <class U>
  static void assign_where(per_lane<U>& x, const mask& m, std::common_type_t<U> v) {
    for (int l = 0; l < width; ++l)
      if (m.get(static_cast<std::size_t>(l))) x[l] = v;
  }
  static T value(const S& x, int l) { return x.get(static_cast<std::size_t>(l)); }
  static bool flag(const mask& m, int l) { return m.get(static_cast<std::size_t>(l)); }
  template <class U>
  static U& entry(per_lane<U>& x, int l) {
    return x[static_cast<std::size_t>(l)];
  }
  template <class U>
  static const U& entry(const per_lane<U>& x, int l) {
    return x[static_cast<std::size_t>(l)];
  }
};

template <class T, class A>
struct LaneMath<xsimd::batch<T, A>> {
  using S = xsimd::batch<T, A>;
  static S exp(const S& x) { return xsimd::exp(x); }
  static S log(const S& x) { return xsimd::log(x); }
  static S log1p(const S& x) { return xsimd::log1p(x); }
  static S expm1(const S& x) { return xsimd::expm1(x); }
  static S sqrt(const S& x) { return xsimd::sqrt(x); }
  static S fabs(const S& x) { return xsimd::fabs(x); }
  static S tanh(const S& x) { return xsimd::tanh(x); }
  static xsimd::batch_bool<T, A> isfinite(const S& x) { return xsimd::isfinite(x); }
};

/// The random streams of a group of chains first … first + W − 1, with RandomStream's draws as
/// batches: lane l's numbers are those chain first + l draws alone (to the ulp of the host's
/// Box–Muller: the same xsimd formula, at this unit's instruction set). The normals, most of the
/// draws, are computed here for all lanes at once (Philox in lanes, detail/philox_lanes.hpp);
/// the single accept uniforms come from the library's baseline code
/// (detail/lane_random.hpp), so that no scalar inline function is compiled into a translation
/// unit built for a wider instruction set.
template <class S>
class LaneStreams {
 public:
  static constexpr int width = LaneOps<S>::width;

  LaneStreams(std::uint64_t seed, std::int64_t first) : seed_(seed), first_(first) {}

  /// out[i] = normal i of every lane's stream, i < n: RandomStream::fill_normal's numbers (its
  /// Philox blocks, uniforms and Box–Muller), computed for the W lanes at once.
  template <class T>
  void fill_normal(std::uint32_t iteration, Purpose purpose, const ChainVector<S>& out,
                   int n) const {
    using Arch = typename S::arch_type;
    std::uint32_t keys[width];
    for (int l = 0; l < width; ++l) keys[l] = static_cast<std::uint32_t>(first_ + l);
    std::uint32_t words[4][width];
    alignas(alignof(S)) T u1[width], u2[width];
    for (int i = 0; i < n; i += 2) {
      philox_lanes<Arch, width>(
          static_cast<std::uint32_t>(i / 2), static_cast<std::uint32_t>(purpose), iteration,
          static_cast<std::uint32_t>(seed_ >> 32), keys, static_cast<std::uint32_t>(seed_), words);
      uniforms_from_words<Arch, T, width>(words[0], words[1], u1);
      uniforms_from_words<Arch, T, width>(words[2], words[3], u2);
      S z0, z1;
      detail::box_muller_batch(S::load_aligned(u1), S::load_aligned(u2), z0, z1);
      out[i] = z0;
      if (i + 1 < n) out[i + 1] = z1;
    }
  }

  /// The team form (core/team.hpp, fill_normal): lanes of chains are a one-lane team.
  template <class T>
  void fill_normal(std::uint32_t iteration, Purpose purpose, const ChainVector<S>& out, int n,
                   int /*rank*/, int /*size*/) const {
    fill_normal<T>(iteration, purpose, out, n);
  }

  template <class T>
  S uniform(std::uint32_t iteration, Purpose purpose, std::uint32_t index) const {
    alignas(alignof(S)) T u[width];
    uniform_lanes(seed_, first_, width, iteration, purpose, index, u);
    return S::load_aligned(u);
  }

 private:
  std::uint64_t seed_;
  std::int64_t first_;
};

/// The lane kernel of instruction set Arch whose entry is `entry`, as wide as a batch of T
/// (at most kMaxLaneWidth, the size of the families' per-lane outcome arrays).
template <class T, class Arch, class Entry>
LaneKernel<Entry> lane_kernel_of(Entry* entry) {
  static_assert(xsimd::batch<T, Arch>::size <= kMaxLaneWidth, "more lanes than kMaxLaneWidth");
  return {entry, static_cast<int>(xsimd::batch<T, Arch>::size), Arch::name()};
}

/// Family's kernel of Model in lanes of Arch (detail/lane_kernel_choice.hpp): its LaneEntry,
/// which the family's detail/*_lane_kernel.hpp defines.
template <class Family, class Model, class T, class Arch>
lane_kernel_t<Family, Model, T> compiled_lane_kernel() {
  static_assert(Family::template in_lanes<Model, xsimd::batch<T, Arch>>,
                "the model is not written over its element type (model/concept.hpp, "
                "model/generator.hpp)");
  return lane_kernel_of<T, Arch>(LaneEntry<Family, Model, T, Arch>::function);
}

}  // namespace myriad
