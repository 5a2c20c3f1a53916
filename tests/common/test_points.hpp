#pragma once
// Reproducible test points: standard normals from myriad's own counter-based streams, so that
// every machine checks a model at the same points.

#include <cstdint>
#include <vector>

#include "myriad/core/random.hpp"

namespace myriad::testing {

/// n standard normals times `scale`: RandomStream(seed, stream) at iteration 0 with
/// Purpose::user.
inline std::vector<double> standard_normals(std::uint64_t seed, std::uint64_t stream, int n,
                                            double scale = 1) {
  std::vector<double> z(static_cast<std::size_t>(n));
  RandomStream(seed, stream).fill_normal<double>(0, Purpose::user, z, n);
  for (double& v : z) v *= scale;
  return z;
}

/// The same point rounded to float, so that float and double models see identical inputs.
inline std::vector<double> float_representable(std::vector<double> x) {
  for (double& v : x) v = static_cast<float>(v);
  return x;
}

}  // namespace myriad::testing
