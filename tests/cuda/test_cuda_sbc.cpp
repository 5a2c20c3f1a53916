// Batched simulation-based calibration on the GPU (issue 24): every replication's chains in one
// run of the stacked model (model/stacked.hpp) on the CUDA backend, as `myriad sbc --batch on
// --device cuda` runs it, must be calibrated by the same tests and at the same sizes as the
// statistical suite's CPU run (tests/stat/test_sbc.cpp, StatSbc.HmcOnEightSchoolsAsOneBatch).
// Device::cuda is asked for explicitly, so the run fails rather than falls back to the CPU.

#include <gtest/gtest.h>

#include "common/cuda_skip.hpp"
#include "common/sbc_calibration.hpp"

namespace myriad {
namespace {

TEST(CudaSbc, EightSchoolsAsOneBatchIsCalibrated) {
  MYRIAD_SKIP_WITHOUT_CUDA();
  const SbcResult result = testing::calibrate("eight_schools", {}, /*batched=*/true, Device::cuda);
  EXPECT_EQ(result.names.size(), 10u);
}

}  // namespace
}  // namespace myriad
