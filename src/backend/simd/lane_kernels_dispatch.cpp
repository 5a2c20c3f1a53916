// library_hmc_lane_kernel and library_ais_lane_kernel: the built-in models' lane kernels for the
// widest instruction set this machine runs, chosen once per model; and the MP IS contraction's
// (library_log_sum_product_lane_kernel). Compiled at the baseline
// instruction set; it names the kernels of the others (lane_kernels_<isa>.cpp) without compiling
// them.

#include <vector>
#include <xsimd/xsimd.hpp>

#include "lane_instances.hpp"
#include "myriad/detail/ais_lane_types.hpp"
#include "myriad/detail/chmc_lane_types.hpp"
#include "myriad/detail/hmc_lane_types.hpp"
#include "myriad/detail/log_sum_product_lane_types.hpp"

namespace myriad {

// Declared, not defined, here: defined (explicitly instantiated) by lane_kernels_<isa>.cpp.
template <class Model, class T, class Arch>
HmcLaneKernel<Model, T> hmc_lane_kernel();
template <class Target, class T, class Arch>
AisLaneKernel<Target, T> ais_lane_kernel();
template <class Generator, class T, class Arch>
ChmcLaneKernel<Generator, T> chmc_lane_kernel();
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

template <class Model, class T>
std::vector<HmcLaneKernel<Model, T>> library_hmc_lane_kernels() {
  return runnable_kernels<HmcLaneKernel<Model, T>>(
      [](auto arch) { return hmc_lane_kernel<Model, T, decltype(arch)>(); });
}

template <class Model, class T>
HmcLaneKernel<Model, T> library_hmc_lane_kernel() {
  static const HmcLaneKernel<Model, T> widest = library_hmc_lane_kernels<Model, T>().front();
  return widest;
}

template <class Target, class T>
std::vector<AisLaneKernel<Target, T>> library_ais_lane_kernels() {
  return runnable_kernels<AisLaneKernel<Target, T>>(
      [](auto arch) { return ais_lane_kernel<Target, T, decltype(arch)>(); });
}

template <class Target, class T>
AisLaneKernel<Target, T> library_ais_lane_kernel() {
  static const AisLaneKernel<Target, T> widest = library_ais_lane_kernels<Target, T>().front();
  return widest;
}

template <class Generator, class T>
std::vector<ChmcLaneKernel<Generator, T>> library_chmc_lane_kernels() {
  return runnable_kernels<ChmcLaneKernel<Generator, T>>(
      [](auto arch) { return chmc_lane_kernel<Generator, T, decltype(arch)>(); });
}

template <class Generator, class T>
ChmcLaneKernel<Generator, T> library_chmc_lane_kernel() {
  static const ChmcLaneKernel<Generator, T> widest =
      library_chmc_lane_kernels<Generator, T>().front();
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

#define MYRIAD_LANE_DISPATCH_INSTANCE(Model, T)                                       \
  template std::vector<HmcLaneKernel<Model, T>> library_hmc_lane_kernels<Model, T>(); \
  template HmcLaneKernel<Model, T> library_hmc_lane_kernel<Model, T>();
#define MYRIAD_AIS_LANE_DISPATCH_INSTANCE(Target, T)                                    \
  template std::vector<AisLaneKernel<Target, T>> library_ais_lane_kernels<Target, T>(); \
  template AisLaneKernel<Target, T> library_ais_lane_kernel<Target, T>();

#define MYRIAD_CHMC_LANE_DISPATCH_INSTANCE(Generator, T)                                        \
  template std::vector<ChmcLaneKernel<Generator, T>> library_chmc_lane_kernels<Generator, T>(); \
  template ChmcLaneKernel<Generator, T> library_chmc_lane_kernel<Generator, T>();

MYRIAD_FOR_EACH_LANE_MODEL(MYRIAD_LANE_DISPATCH_INSTANCE)
MYRIAD_FOR_EACH_AIS_LANE_TARGET(MYRIAD_AIS_LANE_DISPATCH_INSTANCE)
MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(MYRIAD_CHMC_LANE_DISPATCH_INSTANCE)

}  // namespace myriad
