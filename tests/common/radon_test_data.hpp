#pragma once
// A radon regression small enough for the SIMD-lane agreement tests (models/radon.hpp): twelve
// homes in three counties, so the county sums gather into the gradient in every lane.

#include "myriad/models/radon.hpp"

namespace myriad::testing {

template <class T>
models::RadonData<T> twelve_homes_radon() {
  return models::RadonData<T>::from_arrays(
      {1.1, 0.4, 1.9, 0.8, 1.3, 1.6, 0.2, 1.0, 2.1, 0.7, 1.4, 0.9},
      {0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1},
      {-0.5, 0.2, 0.6, -0.5, 0.2, 0.6, -0.5, 0.2, 0.6, -0.5, 0.2, 0.6},
      {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, 3);
}

}  // namespace myriad::testing
