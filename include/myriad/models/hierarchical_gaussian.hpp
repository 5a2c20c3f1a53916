#pragma once
// hierarchical_gaussian: the conjugate two-level model of MP IS (mpis.md §7), with an exact
// marginal likelihood and posterior to check the estimator against.
//
//   μ ~ N(0, a²);   z_n | μ ~ N(μ, b²), n = 1..N (plate "groups");
//   x_nm | z_n ~ N(z_n, σ²), m = 1..M (plate "observations" inside "groups").
//
// Proposal (mpis.md §9.1): μ from its prior; z_n either independent of μ, N(0, a² + b²) (its
// prior marginal; the paper's factorised protocol) or, with the "mixture" proposal, from its
// prior conditional N(μ, b²) given μ's particles (the parent-mixture proposal, §2.1).

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/distributions.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::models {

/// The plated model: a view of the data x[n][m] (host or device memory).
struct HierarchicalGaussian {
  enum Latent : int { kMu = 0, kZ = 1 };
  const double* x = nullptr;  ///< [group][observation]
  int groups = 1;
  int per_group = 1;
  double mu_sd = 1.0;     ///< a
  double group_sd = 1.0;  ///< b
  double obs_sd = 1.0;    ///< σ
  bool mixture = false;   ///< z's proposal conditioned on μ

  PlatedStructure structure() const {
    PlatedStructure s;
    const int g = s.plate("groups", groups);
    const int o = s.plate("observations", per_group, g);
    const int mu = s.latent("mu", kRootPlate);
    const int z = s.latent("z", g, {mu}, 1, mixture ? std::vector<int>{mu} : std::vector<int>{});
    s.observed("x", o, {z});
    return s;
  }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    return latent == kMu ? dist::Normal{0.0, mu_sd}.log_density(z[0])
                         : dist::Normal{parents[0][0], group_sd}.log_density(z[0]);
  }
  MYRIAD_HD dist::Normal proposal(int latent, const ParentValues& qa) const {
    if (latent == kMu) return {0.0, mu_sd};
    return mixture ? dist::Normal{qa[0][0], group_sd}
                   : dist::Normal{0.0, myriad::sqrt(mu_sd * mu_sd + group_sd * group_sd)};
  }
  MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues& qa,
                                const PlateIndex&) const {
    return proposal(latent, qa).log_density(z[0]);
  }
  MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues& qa, const PlateIndex&,
                                 ParticleRandom& rng) const {
    z[0] = proposal(latent, qa).sample(rng);
  }
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    return dist::Normal{parents[0][0], obs_sd}.log_density(
        x[static_cast<std::int64_t>(at[0]) * per_group + at[1]]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning data of hierarchical_gaussian with the exact marginal likelihood and posterior.
class HierarchicalGaussianData : public MirroredViews<HierarchicalGaussianData> {
 public:
  static constexpr std::uint32_t kDataPurpose = user_purpose(70);

  /// Data from the model itself: μ, z_n and x_nm drawn with RandomStream(seed, 0), tag user+70
  /// (normal 0: μ; normal 1 + n: z_n; normal 1 + N + n·M + m: noise of x_nm).
  static HierarchicalGaussianData synthetic(int groups, int per_group, double mu_sd,
                                            double group_sd, double obs_sd, bool mixture,
                                            std::uint64_t seed) {
    MYRIAD_EXPECTS(groups >= 1, "hierarchical_gaussian: groups must be >= 1, got ", groups);
    MYRIAD_EXPECTS(per_group >= 1, "hierarchical_gaussian: per_group must be >= 1, got ",
                   per_group);
    MYRIAD_EXPECTS(mu_sd > 0 && group_sd > 0 && obs_sd > 0,
                   "hierarchical_gaussian: mu_sd, group_sd and obs_sd must be positive");
    HierarchicalGaussianData d;
    d.model_ = HierarchicalGaussian{nullptr, groups, per_group, mu_sd, group_sd, obs_sd, mixture};
    const RandomStream stream(seed, 0);
    const auto normal = [&](std::uint32_t i) {
      return stream.normal<double>(0, static_cast<Purpose>(kDataPurpose), i);
    };
    d.true_mu_ = mu_sd * normal(0);
    std::vector<double> x;
    for (int n = 0; n < groups; ++n) {
      const double z = d.true_mu_ + group_sd * normal(1u + static_cast<std::uint32_t>(n));
      d.true_z_.push_back(z);
      for (int m = 0; m < per_group; ++m)
        x.push_back(z + obs_sd * normal(1u + static_cast<std::uint32_t>(groups) +
                                        static_cast<std::uint32_t>(n * per_group + m)));
    }
    d.x_ = std::move(x);
    d.solve();
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  HierarchicalGaussian viewing(Copy copy) const {
    return view(copy(x_));
  }

  const std::vector<double>& x() const { return x_.host(); }
  double true_mu() const { return true_mu_; }
  const std::vector<double>& true_z() const { return true_z_; }

  /// log p(x), integrating z_n and μ in closed form (sufficient statistics S_n = Σ_m x_nm).
  double exact_log_marginal() const { return log_marginal_; }
  /// Posterior mean and sd of μ and of each z_n, named as the MP IS summary names them.
  std::vector<ExactMoment> exact_posterior() const {
    std::vector<ExactMoment> out{{"mu", post_mu_mean_, post_mu_sd_}};
    for (int n = 0; n < model_.groups; ++n)
      out.push_back({"z[" + std::to_string(n) + "]", post_z_mean_[n], post_z_sd_[n]});
    return out;
  }

 private:
  // Given μ, x_n· ~ N(μ1, Σ), Σ = σ²I + b²11ᵀ: |Σ| = σ^(2(M−1))(σ² + Mb²) and, with
  // c = 1/(σ² + Mb²), 1ᵀΣ⁻¹1 = Mc, 1ᵀΣ⁻¹x_n = cS_n, x_nᵀΣ⁻¹x_n = (Q_n − b²cS_n²)/σ². So
  // Σ_n (x_n − μ1)ᵀΣ⁻¹(x_n − μ1) = Aμ² − 2Bμ + C, and integrating μ ~ N(0, a²):
  // log p(x) = Σ_n[−(M/2)log 2π − ½log|Σ|] − C/2 − ½log(1 + a²A) + B²/(2(A + 1/a²)),
  // μ | x ~ N(B/(A + 1/a²), 1/(A + 1/a²)), z_n | μ, x ~ N(c(b²S_n + σ²μ), cσ²b²).
  void solve() {
    const double a2 = model_.mu_sd * model_.mu_sd, b2 = model_.group_sd * model_.group_sd,
                 s2 = model_.obs_sd * model_.obs_sd;
    const int num_groups = model_.groups, m = model_.per_group;
    const double c = 1.0 / (s2 + m * b2);
    const double log_det = (m - 1) * std::log(s2) + std::log(s2 + m * b2);
    double a_coef = 0, b_coef = 0, c_coef = 0;
    std::vector<double> sums;
    for (int n = 0; n < num_groups; ++n) {
      double s = 0, q = 0;
      for (int j = 0; j < m; ++j) {
        const double v = x_[static_cast<std::size_t>(n * m + j)];
        s += v;
        q += v * v;
      }
      sums.push_back(s);
      a_coef += m * c;
      b_coef += c * s;
      c_coef += (q - b2 * c * s * s) / s2;
    }
    const double precision = a_coef + 1.0 / a2;
    log_marginal_ = num_groups * (-0.5 * m * std::log(2.0 * M_PI) - 0.5 * log_det) - 0.5 * c_coef -
                    0.5 * std::log(1.0 + a2 * a_coef) + b_coef * b_coef / (2.0 * precision);
    post_mu_mean_ = b_coef / precision;
    post_mu_sd_ = std::sqrt(1.0 / precision);
    for (int n = 0; n < num_groups; ++n) {
      post_z_mean_.push_back(c * (b2 * sums[n] + s2 * post_mu_mean_));
      const double shrink = c * s2;  // ∂E[z_n | μ, x]/∂μ
      post_z_sd_.push_back(std::sqrt(c * s2 * b2 + shrink * shrink / precision));
    }
  }

  HierarchicalGaussian view(const double* x) const {
    HierarchicalGaussian m = model_;
    m.x = x;
    return m;
  }

  HierarchicalGaussian model_;
  MirroredArray<double> x_;
  double true_mu_ = 0;
  std::vector<double> true_z_;
  double log_marginal_ = 0;
  double post_mu_mean_ = 0, post_mu_sd_ = 0;
  std::vector<double> post_z_mean_, post_z_sd_;
};

}  // namespace myriad::models
