// The CPU lane kernels for avx512f: the built-in models' (HMC, Hamiltonian AIS) and the MP IS
// contraction's, compiled with its instruction set (src/CMakeLists.txt).

#include "lane_instances.hpp"
#include "myriad/detail/ais_lane_kernel.hpp"
#include "myriad/detail/hmc_lane_kernel.hpp"
#include "myriad/detail/log_sum_product_lane_kernel.hpp"

#define MYRIAD_LANE_ARCH xsimd::avx512f

namespace myriad {

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_KERNEL_INSTANCE)
MYRIAD_FOR_EACH_AIS_LANE_TARGET(MYRIAD_LANE_KERNEL_INSTANCE)
template LogSumProductLaneKernel detail::log_sum_product_lane_kernel<MYRIAD_LANE_ARCH>();

}  // namespace myriad
