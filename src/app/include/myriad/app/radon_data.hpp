#pragma once
// The radon regression's data (models/radon.hpp) from CmdStan JSON as posteriordb ships it (N, J,
// log_radon, floor_measure, log_uppm, county_idx), and the Minnesota data compiled into the
// library: what `--model radon` reads, and what the tests and the comparison tool run on.

#include <climits>
#include <cstddef>
#include <string>

#include "myriad/app/stan_data.hpp"
#include "myriad/models/radon.hpp"

namespace myriad {

/// The Minnesota data (data/radon_mn.json, compiled in), parsed once.
inline const StanData& minnesota_radon() {
  static const StanData data = StanData::parse(std::string(models::radon_minnesota_json()),
                                               "radon's built-in data (data/radon_mn.json)");
  return data;
}

/// The regression's data from `data`; throws myriad::invalid_argument naming the file and the
/// variable for a missing, mis-shaped or out-of-range one.
template <class T>
models::RadonData<T> radon_data(const StanData& data) {
  const int homes = data.integer("N", 1, INT_MAX), counties = data.integer("J", 1, INT_MAX);
  const auto n = static_cast<std::size_t>(homes);
  return models::RadonData<T>::from_arrays(
      data.reals("log_radon", n), data.reals("floor_measure", n), data.reals("log_uppm", n),
      data.integers("county_idx", n, 1, counties), counties);
}

}  // namespace myriad
