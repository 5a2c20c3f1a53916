#pragma once
// Box–Muller on the host in SIMD lanes (issue 23's first piece): the normals of
// RandomStream::fill_normal and RandomStream::normal from their uniforms, at the widest
// instruction set the machine has (SSE2, AVX2 or AVX-512, chosen at run time by xsimd), instead
// of one libm log and sincos per pair. A quarter to half of the CPU HMC backend's time went
// there (perf on BM_hmc/gaussian: log 15%, sincos 14%, the rest of fill_normal 17%).
//
// Every value is computed in a full lane group (a short tail is padded), so a normal depends
// only on its two uniforms, never on how many were drawn with it or on the split of a fill over
// a team's lanes. xsimd's log, sqrt and sincos agree with libm's to within a few units in the
// last place (tests/unit/test_random.cpp measures it); the GPU's sincospi differs from both
// in the last bits as before.
//
// Defined in the compiled library (src/core/simd/); MYRIAD_SIMD_NORMALS is set on the targets
// that link it (myriad::myriad, myriad::cuda). Code built against myriad::headers alone keeps
// libm's Box–Muller.

namespace myriad::detail {

/// z0[i] = √(−2 log u1[i]) cos(2π u2[i]), z1[i] = √(−2 log u1[i]) sin(2π u2[i]) for i < n.
void box_muller_lanes(const double* u1, const double* u2, int n, double* z0, double* z1);
void box_muller_lanes(const float* u1, const float* u2, int n, float* z0, float* z1);

/// The instruction set the calls above run with on this machine ("avx512f", "avx2", "sse2").
const char* box_muller_lanes_isa();

}  // namespace myriad::detail
