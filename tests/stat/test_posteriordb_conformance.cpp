// posteriordb conformance on the CPU: the fifteen posteriordb posteriors against Stan's
// reference draws (tests/common/posteriordb_conformance.hpp says how; docs/validation.md has the
// table). The same suite on CUDA: tests/cuda/test_cuda_posteriordb.cpp.

#include <gtest/gtest.h>

#include <string>

#include "common/posteriordb_conformance.hpp"

namespace myriad {
namespace {

using testing::Posterior;

class StatPosteriordbConformance : public ::testing::TestWithParam<Posterior> {};

TEST_P(StatPosteriordbConformance, AgreesWithStansReference) {
  testing::expect_conformance(GetParam(), Device::cpu);
}

INSTANTIATE_TEST_SUITE_P(Posteriors, StatPosteriordbConformance,
                         ::testing::ValuesIn(testing::conformance_posteriors()),
                         testing::PosteriorName{});

}  // namespace
}  // namespace myriad
