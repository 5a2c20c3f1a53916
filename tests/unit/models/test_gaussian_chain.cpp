// Tests of `gaussian_chain` (include/myriad/models/gaussian_chain.hpp), a conjugate plated model:
// its exact answers (Kalman filter and RTS smoother) against an independent dense computation:
// the joint Gaussian of latents and data, log N(x; 0, Σ_x) and Gaussian conditioning
// (common/dense_gaussian.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/dense_gaussian.hpp"
#include "myriad/models/gaussian_chain.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;

TEST(MpisConjugateModels, GaussianChainKalmanAndSmootherMatchDenseConditioning) {
  const int steps = 9;
  const double rho = 0.8, q = 0.6, r = 0.4, s0 = 1.2;
  const auto data = models::GaussianChainData::synthetic(steps, rho, q, r, s0, true, 3);
  // Cov(z_s, z_t) = ρ^(t−s) Var(z_s) for s ≤ t, Var(z_t) = ρ² Var(z_{t−1}) + q².
  std::vector<double> var(steps);
  for (int t = 0; t < steps; ++t) var[t] = t == 0 ? s0 * s0 : rho * rho * var[t - 1] + q * q;
  Matrix cov_z(steps, std::vector<double>(steps)), cov_x(steps, std::vector<double>(steps));
  for (int s = 0; s < steps; ++s)
    for (int t = 0; t < steps; ++t) {
      const int lo = std::min(s, t), hi = std::max(s, t);
      cov_z[s][t] = std::pow(rho, hi - lo) * var[lo];
      cov_x[s][t] = cov_z[s][t] + (s == t ? r * r : 0.0);
    }
  const DenseGaussian dense = condition(cov_x, data.x(), cov_z, cov_z);
  EXPECT_NEAR(data.exact_log_marginal(), dense.log_marginal, 1e-10);
  const std::vector<ExactMoment> exact = data.exact_posterior();
  ASSERT_EQ(exact.size(), static_cast<std::size_t>(steps));
  for (int t = 0; t < steps; ++t) {
    EXPECT_EQ(exact[t].name, "z[" + std::to_string(t) + "]");
    EXPECT_NEAR(exact[t].mean, dense.mean[t], 1e-12);
    EXPECT_NEAR(exact[t].sd, dense.sd[t], 1e-12);
  }
}

}  // namespace
}  // namespace myriad
