// detail::box_muller_lanes: the widest instruction set this machine runs, found once.

#include "box_muller_kernel.hpp"
#include "myriad/detail/box_muller_lanes.hpp"

namespace myriad::detail {
namespace {

auto& dispatched() {
  static auto kernel = xsimd::dispatch<BoxMullerArchs>(BoxMullerKernel{});
  return kernel;
}

}  // namespace

void box_muller_lanes(const double* u1, const double* u2, int n, double* z0, double* z1) {
  dispatched()(u1, u2, n, z0, z1);
}

void box_muller_lanes(const float* u1, const float* u2, int n, float* z0, float* z1) {
  dispatched()(u1, u2, n, z0, z1);
}

const char* box_muller_lanes_isa() {
  const unsigned best = xsimd::available_architectures().best;
  if (xsimd::avx512f::version() <= best) return xsimd::avx512f::name();
  if (xsimd::avx2::version() <= best) return xsimd::avx2::name();
  return xsimd::sse2::name();
}

}  // namespace myriad::detail
