// Constrained HMC on the built-in generators with exact answers (constrained-hmc.md §2):
// uniform on the sphere, E[u] = 0 and E[u_i²] = r²/N; the linear-Gaussian generator's Gaussian
// conditional mean and variances. Each moment within 5 MCSE (MCSE from the ESS of the draws).

#include <gtest/gtest.h>

#include <cmath>

#include "common/run_configs.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/sphere.hpp"
#include "myriad/run/sample_chmc.hpp"
#include "posterior_check.hpp"

namespace myriad {
namespace {

ChmcConfig exact_config(std::uint64_t seed) {
  ChmcConfig config = myriad::testing::run_config<ChmcConfig>(128, 150, 300, seed);
  return config;
}

TEST(StatChmcSphere, UniformOnTheSphere) {
  const auto sphere = models::Sphere::make(6, 2.0);
  const SampleResult result = sample_chmc(sphere, exact_config(31));
  for (int i = 0; i < 6; ++i) {
    const std::string name = result.names[i];
    testing::expect_within_mcse(testing::mean_of(result, i, [](double u) { return u; }), 0.0,
                                name + " mean");
    testing::expect_within_mcse(testing::mean_of(result, i, [](double u) { return u * u; }),
                                4.0 / 6.0, name + " second moment");
    EXPECT_LT(result.summary[i].rhat, 1.01) << name;
  }
}

TEST(StatChmcLinearGaussian, GaussianConditional) {
  const auto problem = models::LinearGaussianProblem::make(3, 7, 5);
  const SampleResult result = sample_chmc(problem.host_model(), exact_config(32));
  const auto mean = problem.exact_mean();
  const auto covariance = problem.exact_covariance();
  const int n = 7;
  for (int i = 0; i < n; ++i) {
    const std::string name = result.names[i];
    testing::expect_within_mcse(testing::mean_of(result, i, [](double u) { return u; }), mean[i],
                                name + " mean");
    testing::expect_within_mcse(
        testing::mean_of(result, i, [&](double u) { return (u - mean[i]) * (u - mean[i]); }),
        covariance[i * n + i], name + " variance");
    EXPECT_LT(result.summary[i].rhat, 1.01) << name;
  }
  // A linear constraint is met in one quasi-Newton step: no projection ever fails.
  EXPECT_EQ(result.sampling_stats.not_converged + result.sampling_stats.not_reversible, 0);
}

}  // namespace
}  // namespace myriad
