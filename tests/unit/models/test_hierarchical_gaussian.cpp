// Tests of `hierarchical_gaussian` (include/myriad/models/hierarchical_gaussian.hpp), a conjugate
// plated model: its exact answers (closed form from sufficient statistics) against an independent
// dense computation: the joint Gaussian of latents and data, log N(x; 0, Σ_x) and Gaussian
// conditioning (common/dense_gaussian.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/dense_gaussian.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;

TEST(MpisConjugateModels, HierarchicalGaussianExactAnswersMatchDenseConditioning) {
  for (bool mixture : {false, true}) {
    const int groups = 4, per = 3;
    const double a = 1.3, b = 0.7, s = 0.9;
    const auto data =
        models::HierarchicalGaussianData::synthetic(groups, per, a, b, s, mixture, 42);
    const std::vector<double>& x = data.x();
    // θ = (μ, z_0 … z_{N−1}); x_nm = z_n + σ η.
    const int n_x = groups * per, n_theta = groups + 1;
    Matrix cov_x(n_x, std::vector<double>(n_x)), cov_theta(n_theta, std::vector<double>(n_theta)),
        cov_theta_x(n_theta, std::vector<double>(n_x));
    for (int i = 0; i < n_x; ++i)
      for (int j = 0; j < n_x; ++j)
        cov_x[i][j] = a * a + (i / per == j / per ? b * b : 0.0) + (i == j ? s * s : 0.0);
    for (int i = 0; i < n_theta; ++i)
      for (int j = 0; j < n_theta; ++j) cov_theta[i][j] = a * a + (i > 0 && i == j ? b * b : 0.0);
    for (int j = 0; j < n_x; ++j) {
      cov_theta_x[0][j] = a * a;
      for (int n = 0; n < groups; ++n) cov_theta_x[n + 1][j] = a * a + (j / per == n ? b * b : 0.0);
    }
    const DenseGaussian dense = condition(cov_x, x, cov_theta, cov_theta_x);
    EXPECT_NEAR(data.exact_log_marginal(), dense.log_marginal, 1e-10);
    const std::vector<ExactMoment> exact = data.exact_posterior();
    ASSERT_EQ(exact.size(), static_cast<std::size_t>(n_theta));
    EXPECT_EQ(exact[0].name, "mu");
    EXPECT_EQ(exact[2].name, "z[1]");
    for (int i = 0; i < n_theta; ++i) {
      EXPECT_NEAR(exact[i].mean, dense.mean[i], 1e-12) << exact[i].name;
      EXPECT_NEAR(exact[i].sd, dense.sd[i], 1e-12) << exact[i].name;
    }
  }
}

}  // namespace
}  // namespace myriad
