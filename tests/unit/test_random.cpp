// Tests of core/random.hpp: Philox4x32-10 known answers, the documented (seed, chain, iteration,
// purpose, draw) → (key, counter) layout, the open unit interval, and the moments of the
// uniform, normal and exponential draws.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <tuple>
#include <vector>

#include "myriad/core/random.hpp"
#include "myriad/detail/philox_lanes.hpp"

namespace {

using myriad::Purpose;
using myriad::RandomStream;

// Known-answer vectors of Philox4x32-10 from Random123's tests/kat_vectors (lines
// "philox4x32 10 CTR[4] KEY[2] EXPECTED[4]"); the same three lines are reproduced by independent
// Philox implementations (e.g. the Rust `philox` crate and Go ports of Random123).
struct PhiloxKnownAnswer {
  std::array<std::uint32_t, 4> counter;
  std::array<std::uint32_t, 2> key;
  std::array<std::uint32_t, 4> expected;
};

constexpr PhiloxKnownAnswer kPhiloxKnownAnswers[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

r123::Philox4x32::ctr_type philox(const std::array<std::uint32_t, 4>& counter,
                                  const std::array<std::uint32_t, 2>& key) {
  r123::Philox4x32 generator;
  const r123::Philox4x32::ctr_type c = {{counter[0], counter[1], counter[2], counter[3]}};
  const r123::Philox4x32::key_type k = {{key[0], key[1]}};
  return generator(c, k);
}

TEST(RandomPhilox, KnownAnswerVectors) {
  for (const auto& kat : kPhiloxKnownAnswers) {
    const auto out = philox(kat.counter, kat.key);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out.v[i], kat.expected[i])
          << "word " << i << " of counter " << std::hex << kat.counter[0] << " key " << kat.key[0];
    }
  }
}

TEST(RandomStreamLayout, BlockIsPhiloxOfDocumentedKeyAndCounter) {
  // key = (chain, low 32 bits of seed); counter = (draw, purpose, iteration, high 32 bits of seed).
  const std::uint64_t seed = 0x0123456789abcdefULL;
  const RandomStream stream(seed, 7);
  const auto block = stream.block(11, Purpose::momentum, 5);
  const auto expected = philox({5u, 2u, 11u, 0x01234567u}, {7u, 0x89abcdefu});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(block.v[i], expected.v[i]) << "word " << i;

  // The ensemble-wide stream uses chain 0xffffffff; user tags start at 1024.
  const auto shared = RandomStream(seed, myriad::kEnsembleStream).block(3, Purpose::user, 0);
  const auto shared_expected = philox({0u, 1024u, 3u, 0x01234567u}, {0xffffffffu, 0x89abcdefu});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(shared.v[i], shared_expected.v[i]) << "word " << i;

  // uniform() and exponential() read the first two words of the block of their draw index.
  EXPECT_EQ(stream.uniform<double>(11, Purpose::momentum, 5),
            RandomStream::uniform_from_words<double>(block.v[0], block.v[1]));
  EXPECT_EQ(stream.uniform<float>(11, Purpose::momentum, 5),
            RandomStream::uniform_from_words<float>(block.v[0], block.v[1]));
  EXPECT_EQ(stream.exponential<double>(11, Purpose::momentum, 5),
            -std::log(RandomStream::uniform_from_words<double>(block.v[0], block.v[1])));
}

TEST(PhiloxLanes, EveryWordAndUniformIsRandom123sForEveryLane) {
  // detail/philox_lanes.hpp computes W streams' blocks at once (the lane kernels' momenta): one
  // counter, keys (first + l, low seed word), as RandomStream(seed, first + l).block does.
  constexpr int kWidth = 16;
  struct Tag {};  // stands for the instruction set a lane kernel is compiled for
  const std::uint64_t seed = 0xfedcba9876543210ULL;
  for (const std::uint32_t first : {0u, 1000u, 0xfffffff8u}) {
    std::uint32_t keys[kWidth];
    for (int l = 0; l < kWidth; ++l) keys[l] = first + static_cast<std::uint32_t>(l);
    for (const std::uint32_t draw : {0u, 7u, 0xffffffffu}) {
      std::uint32_t words[4][kWidth];
      myriad::philox_lanes<Tag, kWidth>(draw, 2u, 123u, static_cast<std::uint32_t>(seed >> 32),
                                        keys, static_cast<std::uint32_t>(seed), words);
      double u[kWidth];
      float f[kWidth];
      myriad::uniforms_from_words<Tag, double, kWidth>(words[0], words[1], u);
      myriad::uniforms_from_words<Tag, float, kWidth>(words[2], words[3], f);
      for (int l = 0; l < kWidth; ++l) {
        const RandomStream stream(seed, first + static_cast<std::uint64_t>(l));
        const auto block = stream.block(123, Purpose::momentum, draw);
        for (int w = 0; w < 4; ++w) EXPECT_EQ(words[w][l], block.v[w]) << "lane " << l;
        EXPECT_EQ(u[l], RandomStream::uniform_from_words<double>(block.v[0], block.v[1]));
        EXPECT_EQ(f[l], RandomStream::uniform_from_words<float>(block.v[2], block.v[3]));
      }
    }
  }
}

TEST(RandomStreamLayout, NormalPairIsBoxMullerOfOneBlock) {
  // normal(2k) and normal(2k + 1) are the Box–Muller pair of block k:
  // r = sqrt(−2 log u₁), z₀ = r cos 2πu₂, z₁ = r sin 2πu₂ (Box & Muller 1958).
  const RandomStream stream(42, 3);
  const auto block = stream.block(9, Purpose::initial_point, 2);
  const double u1 = RandomStream::uniform_from_words<double>(block.v[0], block.v[1]);
  const double u2 = RandomStream::uniform_from_words<double>(block.v[2], block.v[3]);
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 6.283185307179586 * u2;
  EXPECT_NEAR(stream.normal<double>(9, Purpose::initial_point, 4), r * std::cos(angle),
              1e-14 * (1 + r));
  EXPECT_NEAR(stream.normal<double>(9, Purpose::initial_point, 5), r * std::sin(angle),
              1e-14 * (1 + r));
}

// The extreme words map to the extreme outputs (k + ½)/2^b, strictly inside (0, 1): b = 23 for
// float and 52 for double, so that every output and 1 − output are exactly representable
// (Random123's u01fixedpt "open_open" convention).
template <class T>
void expect_extreme_words_at_half_steps(int bits) {
  SCOPED_TRACE(bits);
  const T low = RandomStream::uniform_from_words<T>(0u, 0u);
  const T high = RandomStream::uniform_from_words<T>(0xffffffffu, 0xffffffffu);
  EXPECT_GT(low, T(0));
  EXPECT_LT(high, T(1));
  EXPECT_EQ(low, std::ldexp(T(1), -(bits + 1)));
  EXPECT_EQ(high, T(1) - std::ldexp(T(1), -(bits + 1)));
}

TEST(RandomUniform, ExtremeWordsStayInsideOpenInterval) {
  expect_extreme_words_at_half_steps<float>(23);
  expect_extreme_words_at_half_steps<double>(52);
}

TEST(RandomUniform, ComplementedWordsGiveOneMinusU) {
  // Symmetry of the grid: u(~w) = 1 − u(w) exactly, so u and 1 − u are equally likely.
  const RandomStream stream(5, 1);
  for (std::uint32_t draw = 0; draw < 1000; ++draw) {
    const auto b = stream.block(0, Purpose::accept, draw);
    EXPECT_EQ(RandomStream::uniform_from_words<float>(~b.v[0], ~b.v[1]),
              1.0f - RandomStream::uniform_from_words<float>(b.v[0], b.v[1]));
    EXPECT_EQ(RandomStream::uniform_from_words<double>(~b.v[0], ~b.v[1]),
              1.0 - RandomStream::uniform_from_words<double>(b.v[0], b.v[1]));
  }
}

// 10^6 draws: 1000 chains × 1000 draw indices (DESIGN/STYLE: many chains rather than long runs).
constexpr int kChains = 1000;
constexpr int kDrawsPerChain = 1000;
constexpr double kDraws = double(kChains) * kDrawsPerChain;
constexpr std::uint64_t kSeed = 20240611;

/// Running sums of x, x², x⁴ in double.
struct Moments {
  double sum1 = 0, sum2 = 0, sum4 = 0;
  void add(double x) {
    sum1 += x;
    sum2 += x * x;
    sum4 += x * x * x * x;
  }
  double mean() const { return sum1 / kDraws; }
  double second() const { return sum2 / kDraws; }
  double fourth() const { return sum4 / kDraws; }
};

/// |estimate − exact| within 5 standard errors, se = sqrt(Var(single draw) / N).
void expect_within_5_se(double estimate, double exact, double single_draw_variance,
                        const char* what) {
  const double se = std::sqrt(single_draw_variance / kDraws);
  std::printf("    %-28s estimate %+.6f, exact %+.6f, (estimate - exact)/se = %+.2f\n", what,
              estimate, exact, (estimate - exact) / se);
  EXPECT_LE(std::fabs(estimate - exact), 5 * se)
      << what << ": estimate " << estimate << ", exact " << exact << ", se " << se;
}

template <class T>
class RandomDraws : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RandomDraws, Precisions);

TYPED_TEST(RandomDraws, UniformIsInsideOpenIntervalWithUniformMoments) {
  using T = TypeParam;
  Moments m;  // of u − ½
  for (int c = 0; c < kChains; ++c) {
    const RandomStream stream(kSeed, c);
    for (int i = 0; i < kDrawsPerChain; ++i) {
      const T u = stream.uniform<T>(0, Purpose::accept, i);
      ASSERT_GT(u, T(0));
      ASSERT_LT(u, T(1));
      m.add(double(u) - 0.5);
    }
  }
  // U − ½ on (−½, ½): mean 0, variance 1/12, Var(U − ½) = 1/12, Var((U − ½)²) = 1/80 − 1/144.
  expect_within_5_se(m.mean(), 0.0, 1.0 / 12, "uniform mean - 1/2");
  expect_within_5_se(m.second(), 1.0 / 12, 1.0 / 80 - 1.0 / 144, "uniform variance");
}

TYPED_TEST(RandomDraws, NormalHasStandardMoments) {
  using T = TypeParam;
  Moments m;
  std::vector<T> z(kDrawsPerChain);
  for (int c = 0; c < kChains; ++c) {
    RandomStream(kSeed, c).fill_normal<T>(0, Purpose::momentum, z, kDrawsPerChain);
    for (T v : z) {
      ASSERT_TRUE(std::isfinite(v));
      m.add(double(v));
    }
  }
  // E z = 0 (Var 1), E z² = 1 (Var 2), E z⁴ = 3 (Var E z⁸ − 9 = 105 − 9 = 96).
  expect_within_5_se(m.mean(), 0.0, 1.0, "normal mean");
  expect_within_5_se(m.second(), 1.0, 2.0, "normal second moment");
  expect_within_5_se(m.fourth(), 3.0, 96.0, "normal fourth moment");
}

TYPED_TEST(RandomDraws, ExponentialHasUnitRateMoments) {
  using T = TypeParam;
  Moments m;
  for (int c = 0; c < kChains; ++c) {
    const RandomStream stream(kSeed, c);
    for (int i = 0; i < kDrawsPerChain; ++i) {
      const T e = stream.exponential<T>(0, Purpose::trajectory, i);
      ASSERT_GT(e, T(0));
      ASSERT_TRUE(std::isfinite(e));
      m.add(double(e));
    }
  }
  // Exp(1): E x = 1 (Var 1), E x² = 2 (Var E x⁴ − 4 = 24 − 4 = 20).
  expect_within_5_se(m.mean(), 1.0, 1.0, "exponential mean");
  expect_within_5_se(m.second(), 2.0, 20.0, "exponential second moment");
}

TYPED_TEST(RandomDraws, FillNormalEqualsNormalElementwise) {
  using T = TypeParam;
  const RandomStream stream(kSeed, 17);
  for (int n : {1, 7, 8}) {
    std::vector<T> z(n);
    stream.fill_normal<T>(4, Purpose::momentum, z, n);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(z[i], stream.normal<T>(4, Purpose::momentum, i)) << "n = " << n << ", i = " << i;
    }
  }
}

TEST(RandomStreams, DifferentKeysAndCountersGiveDifferentStreams) {
  // 64 blocks each from streams that differ in exactly one of seed (low and high halves), chain,
  // iteration and purpose: no 128-bit block may repeat across them.
  const std::uint64_t seed = 0x00000001000000ffULL;
  using Config = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t, Purpose>;
  const Config configs[] = {
      {seed, 0, 0, Purpose::momentum},
      {seed, 1, 0, Purpose::momentum},
      {seed, 0, 1, Purpose::momentum},
      {seed, 0, 0, Purpose::accept},
      {seed + 1, 0, 0, Purpose::momentum},
      {seed + (1ULL << 32), 0, 0, Purpose::momentum},
      {seed, myriad::kEnsembleStream, 0, Purpose::momentum},
  };
  std::set<std::array<std::uint32_t, 4>> seen;
  int blocks = 0;
  for (const auto& [s, chain, iteration, purpose] : configs) {
    const RandomStream stream(s, chain);
    for (std::uint32_t draw = 0; draw < 64; ++draw) {
      const auto b = stream.block(iteration, purpose, draw);
      seen.insert({b.v[0], b.v[1], b.v[2], b.v[3]});
      ++blocks;
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), blocks);

  // The same inputs give the same numbers: streams hold no state.
  const RandomStream a(seed, 3), b(seed, 3);
  EXPECT_EQ(a.normal<double>(8, Purpose::momentum, 5), b.normal<double>(8, Purpose::momentum, 5));
  EXPECT_NE(a.normal<double>(8, Purpose::momentum, 5), a.normal<double>(9, Purpose::momentum, 5));
  EXPECT_NE(a.normal<double>(8, Purpose::momentum, 5),
            RandomStream(seed, 4).normal<double>(8, Purpose::momentum, 5));
}

}  // namespace
