// library_lane_kernel (detail/lane_kernel_choice.hpp): the built-in models' lane kernels of every
// lane family (HMC, Hamiltonian AIS, constrained HMC) for the widest instruction set this machine
// runs, chosen once per model; and the MP IS contraction's (library_log_sum_product_lane_kernel).
// Compiled at the baseline instruction set; it names the kernels of the others
// (lane_kernels_<isa>.cpp) without compiling them.

#include <vector>
#include <xsimd/xsimd.hpp>

#include "lane_instances.hpp"
#include "myriad/detail/ais_lane_types.hpp"
#include "myriad/detail/chmc_lane_types.hpp"
#include "myriad/detail/hmc_lane_types.hpp"
#include "myriad/detail/log_sum_product_lane_types.hpp"

namespace myriad {

// compiled_lane_kernel<Family, Model, T, Arch> is declared, not defined, here:
// lane_kernels_<isa>.cpp defines (explicitly instantiates) it.
namespace detail {
template <class Arch>
LogSumProductLaneKernel log_sum_product_lane_kernel();
}

namespace {

/// factory<Arch>() for every instruction set this machine runs, widest first.
template <class Kernel, class Factory>
std::vector<Kernel> runnable_kernels(const Factory& factory) {
  const unsigned best = xsimd::available_architectures().best;
  std::vector<Kernel> kernels;
  if (xsimd::avx512f::version() <= best) kernels.push_back(factory(xsimd::avx512f{}));
  if (xsimd::avx2::version() <= best) kernels.push_back(factory(xsimd::avx2{}));
  kernels.push_back(factory(xsimd::sse2{}));
  return kernels;
}

}  // namespace

template <class Family, class Model, class T>
std::vector<lane_kernel_t<Family, Model, T>> library_lane_kernels() {
  return runnable_kernels<lane_kernel_t<Family, Model, T>>(
      [](auto arch) { return compiled_lane_kernel<Family, Model, T, decltype(arch)>(); });
}

template <class Family, class Model, class T>
lane_kernel_t<Family, Model, T> library_lane_kernel() {
  static const lane_kernel_t<Family, Model, T> widest =
      library_lane_kernels<Family, Model, T>().front();
  return widest;
}

std::vector<LogSumProductLaneKernel> library_log_sum_product_lane_kernels() {
  return runnable_kernels<LogSumProductLaneKernel>(
      [](auto arch) { return detail::log_sum_product_lane_kernel<decltype(arch)>(); });
}

LogSumProductLaneKernel library_log_sum_product_lane_kernel() {
  static const LogSumProductLaneKernel widest = library_log_sum_product_lane_kernels().front();
  return widest;
}

#define MYRIAD_LANE_DISPATCH_INSTANCE(Family, Model, T)                                           \
  template std::vector<lane_kernel_t<Family, Model, T>> library_lane_kernels<Family, Model, T>(); \
  template lane_kernel_t<Family, Model, T> library_lane_kernel<Family, Model, T>();

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_DISPATCH_INSTANCE)
MYRIAD_FOR_EACH_AIS_LANE_TARGET(MYRIAD_LANE_DISPATCH_INSTANCE)
MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(MYRIAD_LANE_DISPATCH_INSTANCE)

}  // namespace myriad
