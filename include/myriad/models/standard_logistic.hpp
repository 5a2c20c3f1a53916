#pragma once
// `standard_logistic`: D independent standard logistic variables, p(x) = Π e^{−x}/(1 + e^{−x})²,
// the slice samplers' check of heavy-ish tails (issue: capped-shrink slice sampling on it gives
// variance π²/3 = 3.2899, P(|x| > 2) = 2/(1 + e²) = 0.2384 and P(|x| > 4) = 2/(1 + e⁴) = 0.0360).
// Normalised; written as −|x| − 2 log(1 + e^{−|x|}) so that it never overflows.

#include <string>
#include <type_traits>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class T>
struct StandardLogistic {
  using value_type = T;
  /// The library's CUDA backend of the auxiliary-variable samplers, in double precision
  /// (model/library_instances.hpp).
  static constexpr unsigned library_backends =
      std::is_same_v<T, double> ? library_backend::auxiliary : 0u;

  int dimension = 1;

  static StandardLogistic make(int dim = 1) {
    MYRIAD_EXPECTS(dim >= 1, "standard_logistic: dim must be >= 1, got ", dim);
    StandardLogistic model;
    model.dimension = dim;
    return model;
  }

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < dimension; ++i) {
      const S a = myriad::fabs(x[i]);
      sum += -a - S(2) * myriad::log1p(myriad::exp(-a));
    }
    return sum;
  }

  /// sd π/√3 of each coordinate.
  static constexpr double kSd = 1.8137993642342178;
};

}  // namespace myriad::models
