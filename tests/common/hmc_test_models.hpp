#pragma once
// HMC models defined in the tests, for paths no built-in model reaches. Every built-in HMC model
// supplies an analytic gradient, so only a user model without one makes a kernel differentiate
// with vector-mode duals (model/autodiff.hpp); CoupledSkewNormals is such a model. The CUDA
// backend for it is instantiated in tests/cuda/hmc_test_models.cu, as user code would.

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad::testing {

/// log p(x) = Σ_i [−x_i²/2 + log σ(a x_i + b x_{i−1})] with x_{−1} = 0: normals skewed and
/// coupled by logistic factors (each σ ≤ 1, so the density is proper). No gradient: HMC takes it
/// by vector-mode duals, ⌈9 / 8⌉ = 2 passes of the default chunk, the second one partial.
struct CoupledSkewNormals {
  int dimension = 9;

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S lp = S(0), previous = S(0);
    for (int i = 0; i < dimension; ++i) {
      // log σ(z) = −log(1 + e^{−z})
      lp += S(-0.5) * x[i] * x[i] - myriad::log1p_exp(-(S(1.5) * x[i] + S(0.5) * previous));
      previous = x[i];
    }
    return lp;
  }
};

}  // namespace myriad::testing
