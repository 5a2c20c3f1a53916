#pragma once
// Dense Gaussian linear algebra written in the tests, independent of the library's: a Cholesky
// factor (Golub & Van Loan, Algorithm 4.2.1), solves with it, and Gaussian conditioning of
// latents on data from their joint covariance.

#include <cmath>
#include <cstddef>
#include <vector>

namespace myriad::testing {

/// A dense matrix, one vector per row.
using Matrix = std::vector<std::vector<double>>;

/// Lower Cholesky factor of a symmetric positive-definite matrix.
inline Matrix cholesky(const Matrix& a) {
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
inline std::vector<double> cholesky_solve(const Matrix& l, std::vector<double> b) {
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
inline DenseGaussian condition(const Matrix& cov_x, const std::vector<double>& x,
                               const Matrix& cov_theta, const Matrix& cov_theta_x) {
  const Matrix l = cholesky(cov_x);
  const std::vector<double> alpha = cholesky_solve(l, x);
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
    const std::vector<double> w = cholesky_solve(l, cov_theta_x[i]);
    double v = cov_theta[i][i];
    for (std::size_t j = 0; j < x.size(); ++j) v -= cov_theta_x[i][j] * w[j];
    out.mean.push_back(m);
    out.sd.push_back(std::sqrt(v));
  }
  return out;
}

}  // namespace myriad::testing
