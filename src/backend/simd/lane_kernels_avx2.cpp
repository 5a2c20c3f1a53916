// The built-in models' CPU lane kernels (HMC, Hamiltonian AIS) for avx2 (compiled with its
// instruction set: src/CMakeLists.txt).

#include "lane_instances.hpp"
#include "myriad/detail/ais_lane_kernel.hpp"
#include "myriad/detail/hmc_lane_kernel.hpp"

#define MYRIAD_LANE_ARCH xsimd::avx2

namespace myriad {

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_KERNEL_INSTANCE)
MYRIAD_FOR_EACH_AIS_LANE_TARGET(MYRIAD_AIS_LANE_KERNEL_INSTANCE)

}  // namespace myriad
