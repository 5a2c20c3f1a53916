// The built-in models' HMC lane kernels for avx2 (compiled with its instruction set:
// src/CMakeLists.txt).

#include "hmc_lane_instances.hpp"
#include "myriad/detail/hmc_lane_kernel.hpp"

#define MYRIAD_LANE_ARCH xsimd::avx2

namespace myriad {

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_KERNEL_INSTANCE)

}  // namespace myriad
