// Box–Muller in SIMD lanes (detail/box_muller_lanes.hpp), which RandomStream's host normals use
// when the library is built with xsimd: agreement with libm's Box–Muller to a few units in the
// last place (of the radius, the scale of both normals' rounding), on uniforms from the extremes
// of the open interval and from a stream, and the same values however a fill is split.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "myriad/core/random.hpp"

#if defined(MYRIAD_SIMD_NORMALS)
#include "myriad/detail/box_muller_lanes.hpp"
#endif

namespace myriad {
namespace {

template <class T>
class BoxMullerLanes : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BoxMullerLanes, Precisions);

TYPED_TEST(BoxMullerLanes, AgreesWithLibmToAFewUlpsOfTheRadius) {
#if !defined(MYRIAD_SIMD_NORMALS)
  GTEST_SKIP() << "built without xsimd: the normals are libm's";
#else
  using T = TypeParam;
  // 4099 pairs (not a multiple of any lane count, so a padded tail runs too): the smallest and
  // largest uniforms, then a stream's.
  std::vector<T> u1, u2;
  const std::uint32_t zero = 0, ones = 0xFFFFFFFFu;
  for (std::uint32_t w : {zero, ones}) {
    for (std::uint32_t v : {zero, ones}) {
      u1.push_back(RandomStream::uniform_from_words<T>(w, w));
      u2.push_back(RandomStream::uniform_from_words<T>(v, v));
    }
  }
  const RandomStream stream(11, 3);
  while (u1.size() < 4099) {
    const auto b = stream.block(0, Purpose::user, static_cast<std::uint32_t>(u1.size()));
    u1.push_back(RandomStream::uniform_from_words<T>(b.v[0], b.v[1]));
    u2.push_back(RandomStream::uniform_from_words<T>(b.v[2], b.v[3]));
  }
  const int n = static_cast<int>(u1.size());
  std::vector<T> z0(n), z1(n);
  detail::box_muller_lanes(u1.data(), u2.data(), n, z0.data(), z1.data());
  // xsimd's log, sqrt and sincos are within about 2 ulps of libm's; 8 ulps of the radius bound
  // the product's error with room, and still catch a wrong formula or a lane mix-up.
  const double ulp = sizeof(T) == sizeof(float) ? 0x1p-23 : 0x1p-52;
  for (int i = 0; i < n; ++i) {
    const double radius = std::sqrt(-2.0 * std::log(static_cast<double>(u1[i])));
    const double angle = 6.283185307179586476925 * static_cast<double>(u2[i]);
    const double tolerance = 8 * ulp * (radius + 1e-300);
    EXPECT_NEAR(z0[i], radius * std::cos(angle), tolerance) << i;
    EXPECT_NEAR(z1[i], radius * std::sin(angle), tolerance) << i;
  }
  const std::string isa = detail::box_muller_lanes_isa();
  EXPECT_TRUE(isa == "avx512f" || isa == "avx2" || isa == "sse2") << isa;
#endif
}

TYPED_TEST(BoxMullerLanes, AFillSplitOverATeamGivesTheSameValues) {
  // Each normal depends on its own uniforms only (a short tail runs padded in full lanes), so a
  // team's split of a fill by pairs writes the values of one fill, bit for bit.
  using T = TypeParam;
  const RandomStream stream(5, 8);
  for (int n : {1, 9, 130, 257}) {
    std::vector<T> whole(n), split(n, T(-99));
    stream.fill_normal<T>(2, Purpose::momentum, whole, n);
    const int lanes = 3;
    for (int rank = 0; rank < lanes; ++rank)
      stream.fill_normal<T>(2, Purpose::momentum, split, n, rank, lanes);
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(std::memcmp(&whole[i], &split[i], sizeof(T)), 0) << n << ", " << i;
  }
}

}  // namespace
}  // namespace myriad
