// The Boltzmann machine's enumeration on a GPU (kernels/boltzmann_enumeration.cu) against the
// CPU's (models/boltzmann_enumeration.hpp): the same block body (models/boltzmann_block.hpp) in
// blocks of 10 low units instead of 14, merged on the host in another grouping, so log Z_B, E[s]
// and E[ssᵀ] agree to rounding — sums of up to 2^20 weights in another order, 1e-12 relative.
// Skips without a CUDA device.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

#include "common/cuda_skip.hpp"
#include "common/expect_error.hpp"
#include "myriad/models/boltzmann_enumeration.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"

namespace myriad {
namespace {

TEST(CudaBoltzmannEnumeration, AgreesWithTheCpu) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  for (const int n : {11, 20, 24}) {
    const auto [w, b] = models::BoltzmannRelaxationData<double>::random_parameters(n, 201702);
    const auto gpu = models::boltzmann_exact_moments_cuda(w, b);
    const auto cpu = models::boltzmann_exact_moments(w, b);
    EXPECT_NEAR(gpu.log_z, cpu.log_z, 1e-12 * std::fabs(cpu.log_z)) << n;
    for (std::size_t i = 0; i < cpu.mean.size(); ++i)
      EXPECT_NEAR(gpu.mean[i], cpu.mean[i], 1e-12) << "n " << n << " unit " << i;
    for (std::size_t q = 0; q < cpu.second.size(); ++q)
      EXPECT_NEAR(gpu.second[q], cpu.second[q], 1e-12) << "n " << n << " entry " << q;
  }
  testing::expect_invalid_argument(
      [] {
        const auto [w, b] = models::BoltzmannRelaxationData<double>::random_parameters(8, 1);
        models::boltzmann_exact_moments_cuda(w, b);
      },
      "units must lie in (10, 32]");
}

}  // namespace
}  // namespace myriad
