#pragma once
// The generator problems under test (the sizes of the brief and of constrained-hmc.md §15), one
// instance each for every test of the built-in generators, and the Lotka–Volterra test points.

#include <vector>

#include "common/generator_checks.hpp"
#include "common/test_points.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/sphere.hpp"

namespace myriad::testing {

inline models::Sphere sphere() { return models::Sphere::make(5, 2.0); }

inline const models::LinearGaussianProblem& linear_gaussian() {
  static const models::LinearGaussianProblem problem =
      models::LinearGaussianProblem::make(3, 6, 11);
  return problem;
}

inline const models::GldProblem& gld() {
  static const models::GldProblem problem = models::GldProblem::make();
  return problem;
}

inline const models::LotkaVolterraProblem& lotka_volterra() {
  static const models::LotkaVolterraProblem problem = models::LotkaVolterraProblem::make();
  return problem;
}

/// Lotka–Volterra test points: prior draws from LogNormal(−2, 1) make the Euler–Maruyama
/// trajectories explode within a few steps (z₂ r f ≈ 10³ per step at r = f = 100), so u₁ is
/// drawn around the data's parameters, u₁ = u₁* + 0.1 ξ, and u₂ ~ N(0, I) as under the prior.
inline std::vector<double> lotka_volterra_point(int point) {
  const auto& truth = lotka_volterra().true_inputs();
  std::vector<double> u =
      standard_normals(kGeneratorPointSeed, point, static_cast<int>(truth.size()));
  for (int k = 0; k < 4; ++k) u[k] = truth[k] + 0.1 * u[k];
  return u;
}

}  // namespace myriad::testing
