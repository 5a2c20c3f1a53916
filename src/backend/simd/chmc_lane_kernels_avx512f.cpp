// The CPU constrained-HMC lane kernels for avx512f: the built-in generators' that declare
// library_backend::cpu_chmc_lanes, compiled with its instruction set (src/CMakeLists.txt).

#include "lane_instances.hpp"
#include "myriad/detail/chmc_lane_kernel.hpp"

#define MYRIAD_LANE_ARCH xsimd::avx512f

namespace myriad {

MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(MYRIAD_LANE_KERNEL_INSTANCE)

}  // namespace myriad
