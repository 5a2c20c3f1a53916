#pragma once
// A Stan data block's real vector as a built-in model's host values, checked as the posteriordb
// ports check their data (the file's values, read by app/stan_data.hpp, or a caller's arrays).

#include <cmath>
#include <cstddef>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::models {

/// Stan's `vector[count] name` of `model`: `values` must hold `count` entries, each finite.
/// Throws myriad::invalid_argument naming the model and field ("arma11: y has 3 entries,
/// expected T = 4", "arma11: y[2] is not finite": indexed from 1, as Stan does).
template <class T>
std::vector<T> stan_vector(const char* model, const char* name, const std::vector<double>& values,
                           const char* count_name, int count) {
  MYRIAD_EXPECTS(values.size() == static_cast<std::size_t>(count), model, ": ", name, " has ",
                 values.size(), " entries, expected ", count_name, " = ", count);
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    MYRIAD_EXPECTS(std::isfinite(values[i]), model, ": ", name, "[", i + 1, "] is not finite");
    out[i] = T(values[i]);
  }
  return out;
}

}  // namespace myriad::models
