#pragma once
// A Stan data block's real vector as a built-in model's host values, checked as the posteriordb
// ports check their data (the file's values, read by app/stan_data.hpp, or a caller's arrays).

#include <cmath>
#include <cstddef>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/mirrored_array.hpp"

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

/// The owning data of a posteriordb port whose data block is one observed series, Stan's
/// `int count; vector[count] y;` (arK's, arma11's and garch11's T and y, low_dim_gauss_mix's N
/// and y), with its device
/// copy (MirroredViews: host_model, device_model). The derived class (CRTP) names its model and
/// count, and adds whatever else its data block holds.
template <class Derived, class T>
class StanSeriesData : public MirroredViews<Derived> {
 public:
  const std::vector<T>& y() const { return y_.host(); }

 protected:
  /// Checks the count (at least min_count) and y as stan_vector does, and keeps them. Throws
  /// myriad::invalid_argument naming the model and the bad field.
  void read_series(const char* model, const char* count_name, int min_count, int count,
                   const std::vector<double>& y) {
    MYRIAD_EXPECTS(count >= min_count, model, ": ", count_name, " must be >= ", min_count, ", got ",
                   count);
    y_ = stan_vector<T>(model, "y", y, count_name, count);
    n_ = count;
  }

  int n_ = 0;
  MirroredArray<T> y_;
};

}  // namespace myriad::models
