// library_hmc_lane_kernel: the built-in models' lane kernels for the widest instruction set this
// machine runs, chosen once per model. Compiled at the baseline instruction set; it names the
// kernels of the others (hmc_lanes_<isa>.cpp) without compiling them.

#include <vector>
#include <xsimd/xsimd.hpp>

#include "hmc_lane_instances.hpp"
#include "myriad/detail/hmc_lane_types.hpp"

namespace myriad {

// Declared, not defined, here: defined (explicitly instantiated) by hmc_lanes_<isa>.cpp.
template <class Model, class T, class Arch>
HmcLaneKernel<Model, T> hmc_lane_kernel();

template <class Model, class T>
std::vector<HmcLaneKernel<Model, T>> library_hmc_lane_kernels() {
  const unsigned best = xsimd::available_architectures().best;
  std::vector<HmcLaneKernel<Model, T>> kernels;
  if (xsimd::avx512f::version() <= best)
    kernels.push_back(hmc_lane_kernel<Model, T, xsimd::avx512f>());
  if (xsimd::avx2::version() <= best) kernels.push_back(hmc_lane_kernel<Model, T, xsimd::avx2>());
  kernels.push_back(hmc_lane_kernel<Model, T, xsimd::sse2>());
  return kernels;
}

template <class Model, class T>
HmcLaneKernel<Model, T> library_hmc_lane_kernel() {
  static const HmcLaneKernel<Model, T> widest = library_hmc_lane_kernels<Model, T>().front();
  return widest;
}

#define MYRIAD_LANE_DISPATCH_INSTANCE(Model, T)                                       \
  template std::vector<HmcLaneKernel<Model, T>> library_hmc_lane_kernels<Model, T>(); \
  template HmcLaneKernel<Model, T> library_hmc_lane_kernel<Model, T>();

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_DISPATCH_INSTANCE)

}  // namespace myriad
