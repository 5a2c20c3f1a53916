// chmc_record GENERATOR CHAINS STEP_SIZE ITERATIONS OUT: records a constrained-HMC run of the CPU
// backend (testing::record_chmc, settings testing::test_settings(STEP_SIZE)) into OUT. Built
// twice, with and without FMA contraction (tests/CMakeLists.txt), for the FMA experiment of
// tests/unit/test_chmc_fma_agreement.cpp: the same per-chain code with its arithmetic perturbed
// the way nvcc perturbs it, compared by the rule of tests/common/chmc_agreement.hpp.
// GENERATOR: sphere (test_generators::TestSphere), curved (TestCurved), lotka_volterra (the
// S = 10 problem of testing::small_lotka_volterra).

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "common/chmc_agreement.hpp"
#include "common/test_generators.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"

namespace {

template <class Generator>
int record(const Generator& g, std::int64_t chains, double step_size, int iterations,
           const std::string& out) {
  auto backend = myriad::make_cpu_chmc_backend<Generator, double>(g, chains, /*simd_lanes=*/false);
  const auto recording = myriad::testing::record_chmc(
      *backend, myriad::testing::test_settings(step_size), iterations, 1);
  if (!myriad::testing::write_recording(recording, out)) {
    std::fprintf(stderr, "chmc_record: cannot write %s\n", out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: chmc_record sphere|curved|lotka_volterra CHAINS STEP_SIZE ITERATIONS "
                 "OUT\n");
    return 2;
  }
  const std::string generator = argv[1];
  const std::int64_t chains = std::atoll(argv[2]);
  const double step_size = std::atof(argv[3]);
  const int iterations = std::atoi(argv[4]);
  try {
    if (generator == "sphere")
      return record(myriad::test_generators::TestSphere{}, chains, step_size, iterations, argv[5]);
    if (generator == "curved")
      return record(myriad::test_generators::TestCurved{}, chains, step_size, iterations, argv[5]);
    if (generator == "lotka_volterra")
      return record(myriad::testing::small_lotka_volterra().host_model(), chains, step_size,
                    iterations, argv[5]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chmc_record: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "chmc_record: unknown generator '%s'\n", generator.c_str());
  return 2;
}
