#pragma once
// The lane kernel behind detail::box_muller_lanes, one explicit instantiation per instruction
// set in a translation unit compiled for it (box_muller_<isa>.cpp, which include
// box_muller_kernel_impl.hpp); box_muller_dispatch.cpp picks one at run time with
// xsimd::dispatch.

#include <xsimd/xsimd.hpp>

namespace myriad::detail {

/// The instruction sets dispatched over, widest first.
using BoxMullerArchs = xsimd::arch_list<xsimd::avx512f, xsimd::avx2, xsimd::sse2>;

/// The lanes of box_muller_lanes for one instruction set; defined out of line in
/// box_muller_kernel_impl.hpp, which only the per-set translation units include (an inline body
/// would be compiled here too, for an instruction set this unit is not built for).
struct BoxMullerKernel {
  template <class Arch, class T>
  void operator()(Arch, const T* u1, const T* u2, int n, T* z0, T* z1) const;
};

#define MYRIAD_BOX_MULLER_INSTANCES(prefix, Arch)                                                 \
  prefix template void BoxMullerKernel::operator()<Arch, double>(                                 \
      Arch, const double*, const double*, int, double*, double*) const;                           \
  prefix template void BoxMullerKernel::operator()<Arch, float>(Arch, const float*, const float*, \
                                                                int, float*, float*) const;

MYRIAD_BOX_MULLER_INSTANCES(extern, xsimd::avx512f)
MYRIAD_BOX_MULLER_INSTANCES(extern, xsimd::avx2)
MYRIAD_BOX_MULLER_INSTANCES(extern, xsimd::sse2)

}  // namespace myriad::detail
