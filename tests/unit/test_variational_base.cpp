// The fitted base of tempering and AIS (estimate/variational_base.hpp) on targets whose answer is
// known: on a Gaussian the mean-field fit is exact in the means and, for a diagonal covariance,
// in the scales, and its ELBO is log Z (KL = 0); on a mixture of two well-separated equal
// Gaussians restarts find both modes, and the moment-matched Gaussian has the mixture's mean and
// variance while log ζ = log(e^{ℓ₁} + e^{ℓ₂}) = log Z (each fit's ELBO is log Z − log 2).
//
// Tolerances: the fit's iterates are averaged over the last quarter of 2000 Adam steps with
// 8 draws a step; the estimate of the optimum then carries noise of order rate · (gradient
// noise) ≈ 0.02 · O(1), so means and scales within 0.05 of the truth; the ELBO estimate's own
// standard error (2000 draws) is reported and the check is 5 of them plus the fit's bias, which
// is second order in the parameter error (≈ D · 0.05² ≈ 0.01).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/expect_error.hpp"
#include "myriad/estimate/variational_base.hpp"

namespace myriad {
namespace {

/// N(m, diag(s²)) with log Z given: log p̃ = log Z + log N(x; m, diag s²).
struct DiagonalGaussian {
  using value_type = double;
  std::vector<double> m, s;
  double log_z = 0;
  int dim() const { return static_cast<int>(m.size()); }
  template <class Vec, class Grad>
  double log_density_gradient(const Vec& x, Grad& g) const {
    double lp = log_z;
    for (int i = 0; i < dim(); ++i) {
      const double z = (x[i] - m[i]) / s[i];
      lp += -0.5 * z * z - std::log(s[i]) - 0.5 * std::log(2 * M_PI);
      g[i] = -z / s[i];
    }
    return lp;
  }
  template <class Vec>
  double log_density(const Vec& x) const {
    std::vector<double> g(m.size());
    return log_density_gradient(x, g);
  }
};

/// ½ N(x; −a 1, I) + ½ N(x; a 1, I) in D dimensions, unnormalised by e^{log_z}.
struct TwoModes {
  using value_type = double;
  int d = 2;
  double a = 5;
  double log_z = 1.5;
  int dim() const { return d; }
  template <class Vec, class Grad>
  double log_density_gradient(const Vec& x, Grad& g) const {
    double l1 = 0, l2 = 0;
    for (int i = 0; i < d; ++i) {
      l1 += -0.5 * (x[i] + a) * (x[i] + a);
      l2 += -0.5 * (x[i] - a) * (x[i] - a);
    }
    const double top = std::max(l1, l2);
    const double w1 = std::exp(l1 - top), w2 = std::exp(l2 - top);
    for (int i = 0; i < d; ++i) g[i] = (w1 * -(x[i] + a) + w2 * -(x[i] - a)) / (w1 + w2);
    return log_z + std::log(0.5) + top + std::log(w1 + w2) - 0.5 * d * std::log(2 * M_PI);
  }
  template <class Vec>
  double log_density(const Vec& x) const {
    std::vector<double> g(static_cast<std::size_t>(d));
    return log_density_gradient(x, g);
  }
};

TEST(VariationalBase, RecoversAGaussianAndItsLogZ) {
  const DiagonalGaussian target{{1.0, -2.0, 0.5}, {0.5, 2.0, 1.0}, 3.25};
  VariationalBaseConfig config;
  config.restarts = 3;
  const VariationalBase base = fit_variational_base(target, config);
  ASSERT_EQ(base.components.size(), 1u) << "every restart finds the one mode";
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(base.mean[i], target.m[i], 0.05 * target.s[i]) << i;
    EXPECT_NEAR(base.scale[i], target.s[i], 0.05 * target.s[i]) << i;
  }
  const VariationalComponent& fit = base.components.front();
  EXPECT_EQ(fit.skipped_steps, 0);
  EXPECT_NEAR(fit.elbo, target.log_z, 5 * fit.elbo_se + 0.01);
  EXPECT_LE(fit.elbo, target.log_z + 5 * fit.elbo_se) << "an ELBO bounds log Z from below";
  EXPECT_DOUBLE_EQ(base.log_zeta, fit.elbo);
}

TEST(VariationalBase, MomentMatchesTheModesRestartsFind) {
  const TwoModes target;
  VariationalBaseConfig config;
  config.restarts = 8;
  config.start_scale = 5;  // starts spread over both modes
  const VariationalBase base = fit_variational_base(target, config);
  ASSERT_EQ(base.components.size(), 2u) << "both modes, duplicates dropped";
  for (const VariationalComponent& c : base.components) {
    // Each fit is one mode's N(±a 1, I): ELBO log Z − log 2.
    EXPECT_NEAR(c.elbo, target.log_z - std::log(2.0), 5 * c.elbo_se + 0.01);
    EXPECT_NEAR(std::fabs(c.mean[0]), target.a, 0.05);
    EXPECT_NEAR(c.scale[0], 1.0, 0.05);
  }
  EXPECT_NEAR(base.log_zeta, target.log_z, 0.05);
  for (int i = 0; i < target.d; ++i) {
    // The mixture: mean ≈ 0 (weights e^{ℓ_i} within a few percent), variance 1 + a².
    EXPECT_NEAR(base.mean[i], 0.0, 0.3) << i;
    EXPECT_NEAR(base.scale[i], std::sqrt(1 + target.a * target.a), 0.1) << i;
  }
  const AisBaseSpec spec = base.spec();
  EXPECT_EQ(spec.mean, base.mean);
  EXPECT_EQ(spec.scale, base.scale);
}

TEST(VariationalBase, RefusesBadSettingsInOneLine) {
  using testing::expect_invalid_argument;
  const DiagonalGaussian target{{0.0}, {1.0}, 0.0};
  VariationalBaseConfig config;
  config.restarts = 0;
  expect_invalid_argument([&] { fit_variational_base(target, config); },
                          "variational restarts must be >= 1");
  config = VariationalBaseConfig{};
  config.learning_rate = -1;
  expect_invalid_argument([&] { fit_variational_base(target, config); },
                          "learning rate must be positive");
}

}  // namespace
}  // namespace myriad
