// The conjugate plated models' exact answers (hierarchical_gaussian: closed form from
// sufficient statistics; gaussian_chain: Kalman filter and RTS smoother) against an independent
// dense computation: the joint Gaussian of latents and data, log N(x; 0, Σ_x) and Gaussian
// conditioning, with a Cholesky written here. Also the densities and proposals the engine sees.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"

namespace myriad {
namespace {

using Matrix = std::vector<std::vector<double>>;

/// Lower Cholesky factor of a symmetric positive-definite matrix.
Matrix cholesky(const Matrix& a) {
  const std::size_t n = a.size();
  Matrix l(n, std::vector<double>(n, 0.0));
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (std::size_t k = 0; k < j; ++k) d -= l[j][k] * l[j][k];
    l[j][j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
      l[i][j] = s / l[j][j];
    }
  }
  return l;
}

/// Σ⁻¹ b by two triangular solves with Σ = L Lᵀ.
std::vector<double> solve(const Matrix& l, std::vector<double> b) {
  const std::size_t n = l.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
    b[i] /= l[i][i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
    b[i] /= l[i][i];
  }
  return b;
}

/// log N(x; 0, Σ_x) and, for latents θ with Cov(θ) and Cov(θ, x), the posterior mean and sd of
/// each θ_i: E = Cov(θ,x)Σ_x⁻¹x, Var = Cov(θ_i) − Cov(θ_i,x)Σ_x⁻¹Cov(x,θ_i).
struct DenseGaussian {
  double log_marginal;
  std::vector<double> mean, sd;
};
DenseGaussian condition(const Matrix& cov_x, const std::vector<double>& x, const Matrix& cov_theta,
                        const Matrix& cov_theta_x) {
  const Matrix l = cholesky(cov_x);
  const std::vector<double> alpha = solve(l, x);
  double quad = 0, log_det = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    quad += x[i] * alpha[i];
    log_det += 2.0 * std::log(l[i][i]);
  }
  DenseGaussian out;
  out.log_marginal = -0.5 * (x.size() * std::log(2.0 * M_PI) + log_det + quad);
  for (std::size_t i = 0; i < cov_theta.size(); ++i) {
    double m = 0;
    for (std::size_t j = 0; j < x.size(); ++j) m += cov_theta_x[i][j] * alpha[j];
    const std::vector<double> w = solve(l, cov_theta_x[i]);
    double v = cov_theta[i][i];
    for (std::size_t j = 0; j < x.size(); ++j) v -= cov_theta_x[i][j] * w[j];
    out.mean.push_back(m);
    out.sd.push_back(std::sqrt(v));
  }
  return out;
}

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

TEST(MpisConjugateModels, DensitiesAreTheStatedGaussians) {
  const auto hg = models::HierarchicalGaussianData::synthetic(3, 2, 1.5, 0.5, 0.8, true, 1);
  const models::HierarchicalGaussian m = hg.host_model();
  const double mu = 0.3, z = -0.4;
  ParentValues parents;
  parents.count = 1;
  parents.value[0] = &mu;
  PlateIndex at;
  at.depth = 2;
  at.index[0] = 2;
  at.index[1] = 1;
  EXPECT_NEAR(m.log_prior(m.kZ, &z, parents, at), normal_log_density(z, mu, 0.5), 1e-15);
  EXPECT_NEAR(m.log_proposal(m.kZ, &z, parents, at), normal_log_density(z, mu, 0.5), 1e-15);
  parents.value[0] = &z;
  EXPECT_NEAR(m.log_likelihood(0, parents, at), normal_log_density(hg.x()[5], z, 0.8), 1e-15);
  const auto independent =
      models::HierarchicalGaussianData::synthetic(3, 2, 1.5, 0.5, 0.8, false, 1);
  EXPECT_NEAR(independent.host_model().log_proposal(m.kZ, &z, parents, at),
              normal_log_density(z, 0.0, std::sqrt(1.5 * 1.5 + 0.5 * 0.5)), 1e-15);

  const auto chain = models::GaussianChainData::synthetic(5, 0.9, 0.5, 0.3, 2.0, true, 1);
  const models::GaussianChain c = chain.host_model();
  ParentValues previous;
  previous.count = 1;
  at.depth = 1;
  at.index[0] = 0;
  EXPECT_NEAR(c.log_prior(0, &z, previous, at), normal_log_density(z, 0.0, 2.0), 1e-15);
  previous.value[0] = &mu;
  at.index[0] = 3;
  EXPECT_NEAR(c.log_prior(0, &z, previous, at), normal_log_density(z, 0.9 * mu, 0.5), 1e-15);
  EXPECT_NEAR(c.log_proposal(0, &z, previous, at), normal_log_density(z, 0.9 * mu, 0.5), 1e-15);
  previous.value[0] = &z;
  EXPECT_NEAR(c.log_likelihood(0, previous, at), normal_log_density(chain.x()[3], z, 0.3), 1e-15);
}

TEST(MpisConjugateModels, RejectBadArguments) {
  EXPECT_THROW(models::HierarchicalGaussianData::synthetic(0, 2, 1, 1, 1, false, 1),
               invalid_argument);
  EXPECT_THROW(models::HierarchicalGaussianData::synthetic(2, 2, 1, -1, 1, false, 1),
               invalid_argument);
  EXPECT_THROW(models::GaussianChainData::synthetic(0, 0.9, 1, 1, 1, true, 1), invalid_argument);
  EXPECT_THROW(models::GaussianChainData::synthetic(3, 0.9, 1, 0, 1, true, 1), invalid_argument);
}

}  // namespace
}  // namespace myriad
