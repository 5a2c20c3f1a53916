// posteriordb conformance on CUDA: the fifteen posteriordb posteriors sampled by the CUDA
// backend (the library's double-precision instances, kernels/builtin_instances.cmake: hmc64),
// against Stan's reference draws with the CPU suite's checks and sizes
// (tests/common/posteriordb_conformance.hpp). Run by `scripts/gpu-check verify`, step
// posteriordb, with MYRIAD_TEST_DATA_DIR naming the tree's tests/data.

#include <gtest/gtest.h>

#include <string>

#include "common/cuda_skip.hpp"
#include "common/posteriordb_conformance.hpp"

namespace myriad {
namespace {

using testing::Posterior;

class CudaPosteriordbConformance : public ::testing::TestWithParam<Posterior> {};

TEST_P(CudaPosteriordbConformance, AgreesWithStansReference) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  testing::expect_conformance(GetParam(), Device::cuda);
}

INSTANTIATE_TEST_SUITE_P(Posteriors, CudaPosteriordbConformance,
                         ::testing::ValuesIn(testing::conformance_posteriors()),
                         testing::PosteriorName{});

}  // namespace
}  // namespace myriad
