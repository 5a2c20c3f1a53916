#pragma once
// Third derivatives by triple-nested forward duals, for the truncation term h²|f'''|/6 of the
// central-difference checks of supplied gradients (Nocedal & Wright, "Numerical Optimization",
// §8.1): x + (ε₁ + ε₂ + ε₃) e_seed has ε₁ε₂ε₃ coefficient ∂³f/∂x_seed³.

#include <vector>

#include "myriad/core/dual.hpp"

namespace myriad::test {

/// x lifted to third-order duals seeded along e_seed.
template <class Vec>
struct TripleSeededView {
  using D1 = Dual<double>;
  using D2 = Dual<D1>;
  using D3 = Dual<D2>;
  const Vec& x;
  int seed;
  D3 operator[](int i) const {
    const double s = i == seed ? 1.0 : 0.0;
    return D3(D2(D1(x[i], s), D1(s, 0)), D2(D1(s, 0), D1(0, 0)));
  }
};

/// ∂³ log p / ∂x_i³ of a density model at x.
template <class Model>
double third_derivative(const Model& model, const std::vector<double>& x, int i) {
  return model.log_density(TripleSeededView<std::vector<double>>{x, i}).eps.eps.eps;
}

}  // namespace myriad::test
