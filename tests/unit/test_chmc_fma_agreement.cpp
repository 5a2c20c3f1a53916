// The FMA experiment as a test: the CPU constrained-HMC backend built without FMA contraction
// against the same per-chain code built with it (-mfma -ffp-contract=fast), which rounds the way
// nvcc's contractions make the GPU round. Both runs are programs of their own
// (tests/tools/chmc_record.cpp, built twice), so that no inline function or template instance is
// shared between the two arithmetics. They must agree by the rule that the CUDA agreement tests
// apply (tests/common/chmc_agreement.hpp), on the same generators, chain counts and step sizes
// as tests/cuda/test_cuda_chmc.cpp: so the rule is checked without a GPU, and a rule too strict
// for rounding alone fails here before it fails on a GPU. (Lotka–Volterra is the case that
// showed it: its first run on an H100 failed the earlier rule, and so does this comparison.)

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/chmc_agreement.hpp"

namespace myriad {
namespace {

#if defined(MYRIAD_CHMC_RECORD) && defined(MYRIAD_CHMC_RECORD_FMA)

/// Records GENERATOR with both programs and compares them by the agreement rule.
void expect_fma_agreement(const std::string& generator, std::int64_t chains, double step_size,
                          int iterations) {
  const std::string dir = ::testing::TempDir();
  const std::string plain = dir + "chmc_record_" + generator + "_plain.bin";
  const std::string fma = dir + "chmc_record_" + generator + "_fma.bin";
  const std::string args = " " + generator + " " + std::to_string(chains) + " " +
                           std::to_string(step_size) + " " + std::to_string(iterations) + " ";
  ASSERT_EQ(std::system((std::string(MYRIAD_CHMC_RECORD) + args + plain).c_str()), 0);
  ASSERT_EQ(std::system((std::string(MYRIAD_CHMC_RECORD_FMA) + args + fma).c_str()), 0);
  testing::ChmcRecording reference, candidate;
  ASSERT_TRUE(testing::read_recording(plain, reference)) << plain;
  ASSERT_TRUE(testing::read_recording(fma, candidate)) << fma;
  std::remove(plain.c_str());
  std::remove(fma.c_str());
  testing::expect_recordings_agree(reference, candidate, testing::test_settings(step_size),
                                   generator + " without and with FMA contraction, " +
                                       std::to_string(chains) + " chains");
}

bool cpu_has_fma() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#define MYRIAD_SKIP_WITHOUT_FMA() \
  if (!cpu_has_fma()) GTEST_SKIP() << "this processor has no FMA instructions"

TEST(ChmcFmaAgreement, SphereAgreesWithItsFmaBuild) {
  MYRIAD_SKIP_WITHOUT_FMA();
  expect_fma_agreement("sphere", 1000, 1.6, 5);
}

TEST(ChmcFmaAgreement, CurvedGeneratorAgreesWithItsFmaBuild) {
  MYRIAD_SKIP_WITHOUT_FMA();
  expect_fma_agreement("curved", 500, 1.2, 5);
}

TEST(ChmcFmaAgreement, LotkaVolterraAgreesWithItsFmaBuild) {
  MYRIAD_SKIP_WITHOUT_FMA();
  expect_fma_agreement("lotka_volterra", 300, 0.2, 5);
}

#else

TEST(ChmcFmaAgreement, NeedsAnFmaBuild) {
  GTEST_SKIP() << "the compiler builds no FMA variant of tests/tools/chmc_record.cpp here";
}

#endif

}  // namespace
}  // namespace myriad
