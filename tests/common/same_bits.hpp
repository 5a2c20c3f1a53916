#pragma once
// Bitwise comparison of floating-point results, for tests that require two code paths to
// compute the same numbers (layouts, lane counts): equal NaNs are equal, +0 and −0 differ.

#include <cmath>

namespace myriad::testing {

template <class V>
bool same_bits(V a, V b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

}  // namespace myriad::testing
