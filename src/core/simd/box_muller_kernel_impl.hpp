#pragma once
// BoxMullerKernel's body, for the translation units compiled for one instruction set each.

#include "box_muller_kernel.hpp"
#include "myriad/detail/box_muller_batch.hpp"

namespace myriad::detail {

template <class Arch, class T>
void BoxMullerKernel::operator()(Arch, const T* u1, const T* u2, int n, T* z0, T* z1) const {
  using Batch = xsimd::batch<T, Arch>;
  constexpr int width = static_cast<int>(Batch::size);
  Batch c, s;
  int i = 0;
  for (; i + width <= n; i += width) {
    box_muller_batch(Batch::load_unaligned(u1 + i), Batch::load_unaligned(u2 + i), c, s);
    c.store_unaligned(z0 + i);
    s.store_unaligned(z1 + i);
  }
  if (i == n) return;
  // The tail, padded with u = ½, runs in lanes too: each normal depends on its own uniforms
  // alone, not on where in a call it falls.
  alignas(64) T a[width], b[width], tail0[width], tail1[width];
  const int count = n - i;
  for (int k = 0; k < width; ++k) {
    a[k] = k < count ? u1[i + k] : T(0.5);
    b[k] = k < count ? u2[i + k] : T(0.5);
  }
  box_muller_batch(Batch::load_aligned(a), Batch::load_aligned(b), c, s);
  c.store_aligned(tail0);
  s.store_aligned(tail1);
  for (int k = 0; k < count; ++k) {
    z0[i + k] = tail0[k];
    z1[i + k] = tail1[k];
  }
}

}  // namespace myriad::detail
