#pragma once
// `radon`: the hierarchical regression of household radon in Minnesota (Gelman & Hill, "Data
// Analysis Using Regression and Multilevel/Hierarchical Models", 2007, ch. 12–13), as the
// thesis's continuous-tempering experiment writes it (thesis-methods.md §9.8): varying county
// intercepts, two shared slopes, non-centred,
//
//   σ_a, σ_b, σ_y ~ half-Cauchy(0, 2.5),   μ_a, μ_b ~ N(0, 1),
//   n_a[j] ~ N(0, 1) (j = 1 … J),  a = μ_a + σ_a n_a,   n_b[k] ~ N(0, 1) (k = 1, 2),  b = μ_b + σ_b
//   n_b, y_i ~ N(a[c_i] + x_i b_1 + u_i b_2, σ_y²),   i = 1 … N,
//
// with y the log radon level, x the floor of the measurement (0 basement, 1 first floor), u the
// county's log uranium level and c_i the home's county (the thesis's ε is σ_y). The data as
// posteriordb ships it (N = 919 homes, J = 85 counties) are compiled in (radon_minnesota_json;
// data/README.md). Sampled, as the thesis's PyMC3 code does, with the scales in log coordinates,
// θ = (μ_a, μ_b, log σ_a, log σ_b, log σ_y, n_b[1], n_b[2], n_a[1] … n_a[J]): J + 7 parameters, 92
// for the Minnesota data. The density of ℓ = log σ carries the Jacobian dσ/dℓ = σ:
//
//   log p(θ) = Σ_i log N(y_i; m_i, σ_y) + log N(μ_a; 0, 1) + log N(μ_b; 0, 1)
//              + Σ_j log N(n_a[j]; 0, 1) + Σ_k log N(n_b[k]; 0, 1) + Σ_{s ∈ σ_a, σ_b, σ_y} h(log
//              s),
//   h(ℓ) = log(2 / (2.5π)) − log(1 + e^{2ℓ} / 2.5²) + ℓ,
//
// every normalising constant included, so log Z is the marginal likelihood log p(y) (what
// `myriad ais` and `myriad temper` estimate). With r_i = (y_i − m_i)/σ_y², R_j = Σ_{c_i = j} r_i,
// g_1 = Σ r_i x_i, g_2 = Σ r_i u_i and h'(ℓ) = 1 − 2v/(1 + v), v = e^{2ℓ}/2.5²:
//
//   ∂/∂μ_a = −μ_a + Σ_j R_j,       ∂/∂log σ_a = σ_a Σ_j n_a[j] R_j + h'(log σ_a),
//   ∂/∂n_a[j] = −n_a[j] + σ_a R_j,  ∂/∂μ_b = −μ_b + g_1 + g_2,
//   ∂/∂log σ_b = σ_b (n_b[1] g_1 + n_b[2] g_2) + h'(log σ_b),   ∂/∂n_b[k] = −n_b[k] + σ_b g_k,
//   ∂/∂log σ_y = Σ_i (y_i − m_i)²/σ_y² − N + h'(log σ_y).
//
// Radon<T> is the trivially copyable view the chains evaluate; RadonData<T> owns the data on
// the host and, on demand, one copy on the device. Every chain reads the same home at the same
// time (a broadcast on a GPU); the county sums R_j gather in the gradient's n_a entries.

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

/// posteriordb's radon_mn.json (data/radon_mn.json, as shipped; data/README.md), compiled into
/// the library: CmdStan JSON with N, J, floor_measure, log_radon, log_uppm and county_idx
/// (1-based).
std::string_view radon_minnesota_json();

template <class T>
struct Radon {
  using value_type = T;
  static constexpr double kScalePrior = 2.5;  ///< the half-Cauchy scale of σ_a, σ_b, σ_y
  /// log(2 / (2.5 π)): the half-Cauchy(0, 2.5) density's constant on σ > 0.
  static constexpr double kLogHalfCauchyNormaliser = -1.3678734371636099;
  static constexpr double kLogScalePrior = 0.91629073187415506518;  ///< log 2.5
  /// Coordinates before n_a: μ_a, μ_b, log σ_a, log σ_b, log σ_y, n_b[1], n_b[2].
  static constexpr int kShared = 7;

  const T* log_radon = nullptr;    ///< y, N entries
  const T* floor = nullptr;        ///< x, N entries
  const T* log_uranium = nullptr;  ///< u, N entries (the home's county's)
  const int* county = nullptr;     ///< c, N entries, 0-based, in [0, J)
  int homes = 0;                   ///< N
  int counties = 0;                ///< J

  MYRIAD_HD int dim() const { return counties + kShared; }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& theta) const {
    using S = std::decay_t<decltype(theta[0])>;
    const S mu_a = theta[0], mu_b = theta[1];
    const S sigma_a = myriad::exp(theta[2]), sigma_b = myriad::exp(theta[3]);
    const S log_sigma_y = theta[4];
    const S inv_var = myriad::exp(S(-2) * log_sigma_y);
    const S b1 = mu_b + sigma_b * theta[5], b2 = mu_b + sigma_b * theta[6];
    S sum_sq = S(0);
    for (int i = 0; i < homes; ++i) {
      const S r = S(log_radon[i]) - (mu_a + sigma_a * theta[kShared + county[i]]) -
                  S(floor[i]) * b1 - S(log_uranium[i]) * b2;
      sum_sq += r * r;
    }
    S lp = S(-0.5) * sum_sq * inv_var - S(homes) * log_sigma_y;
    S squares = mu_a * mu_a + mu_b * mu_b;
    for (int k = 5; k < dim(); ++k) squares += theta[k] * theta[k];
    lp += S(-0.5) * squares - S(T(homes + dim() - 3) * T(kLogSqrtTwoPi));
    return lp + log_scale_prior(S(theta[2])) + log_scale_prior(S(theta[3])) +
           log_scale_prior(log_sigma_y);
  }

  /// log p(θ) and its gradient in one pass over the homes (header comment); written over the
  /// element type, so chains may run in SIMD lanes.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& theta, Grad& grad) const {
    using S = element_t<Vec>;
    const S mu_a = theta[0], mu_b = theta[1];
    const S log_sigma_a = theta[2], log_sigma_b = theta[3], log_sigma_y = theta[4];
    const S sigma_a = myriad::exp(log_sigma_a), sigma_b = myriad::exp(log_sigma_b);
    const S inv_var = myriad::exp(T(-2) * log_sigma_y);
    const S n_b1 = theta[5], n_b2 = theta[6];
    const S b1 = mu_b + sigma_b * n_b1, b2 = mu_b + sigma_b * n_b2;
    for (int j = 0; j < counties; ++j) grad[kShared + j] = S(0);  // R_j, gathered below
    S sum_sq = S(0), g1 = S(0), g2 = S(0);
    for (int i = 0; i < homes; ++i) {
      const int j = kShared + county[i];
      const S r = log_radon[i] - (mu_a + sigma_a * theta[j]) - floor[i] * b1 - log_uranium[i] * b2;
      sum_sq += r * r;
      const S weighted = r * inv_var;
      grad[j] = S(grad[j]) + weighted;
      g1 += weighted * floor[i];
      g2 += weighted * log_uranium[i];
    }
    S sum_r = S(0), slope_a = S(0), squares = n_b1 * n_b1 + n_b2 * n_b2;
    for (int j = kShared; j < dim(); ++j) {
      const S n_a = theta[j], county_sum = grad[j];
      sum_r += county_sum;
      slope_a += n_a * county_sum;
      squares += n_a * n_a;
      grad[j] = -n_a + sigma_a * county_sum;
    }
    grad[0] = -mu_a + sum_r;
    grad[1] = -mu_b + g1 + g2;
    grad[2] = sigma_a * slope_a + scale_prior_slope(log_sigma_a);
    grad[3] = sigma_b * (n_b1 * g1 + n_b2 * g2) + scale_prior_slope(log_sigma_b);
    grad[4] = sum_sq * inv_var - T(homes) + scale_prior_slope(log_sigma_y);
    grad[5] = -n_b1 + sigma_b * g1;
    grad[6] = -n_b2 + sigma_b * g2;
    squares += mu_a * mu_a + mu_b * mu_b;
    return T(-0.5) * (sum_sq * inv_var + squares) - T(homes) * log_sigma_y -
           T(T(homes + dim() - 3) * T(kLogSqrtTwoPi)) + log_scale_prior(log_sigma_a) +
           log_scale_prior(log_sigma_b) + log_scale_prior(log_sigma_y);
  }

  /// Recorded quantities: the coordinates themselves, named (the scales as log σ, the county and
  /// slope offsets as the non-centred n's; Stan's 1-based indices).
  MYRIAD_HD int num_quantities() const { return dim(); }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& theta, Out& out) const {
    for (int k = 0; k < dim(); ++k) out[k] = theta[k];
  }
  std::string quantity_name(int k) const {
    static const char* const kNames[kShared] = {
        "mu_a", "mu_b", "log_sigma_a", "log_sigma_b", "log_sigma_y", "n_b[1]", "n_b[2]"};
    if (k < kShared) return kNames[k];
    return "n_a[" + std::to_string(k - kShared + 1) + "]";
  }

  /// h(ℓ) = log half-Cauchy(e^ℓ; 0, 2.5) + ℓ (header comment), log1p_exp keeping e^{2ℓ} from
  /// overflowing.
  template <class S>
  MYRIAD_HD S log_scale_prior(const S& log_sigma) const {
    return T(kLogHalfCauchyNormaliser) - log1p_exp(T(2) * (log_sigma - T(kLogScalePrior))) +
           log_sigma;
  }

  /// h'(ℓ) = 1 − 2 σ(2(ℓ − log 2.5)), with σ the logistic function.
  template <class S>
  MYRIAD_HD S scale_prior_slope(const S& log_sigma) const {
    return T(1) - T(2) / (T(1) + myriad::exp(T(-2) * (log_sigma - T(kLogScalePrior))));
  }

  /// Backends the library instantiates (model/library_instances.hpp): HMC's and Hamiltonian
  /// AIS's CPU lane kernels, and CUDA's HMC, AIS and tempering backends.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::cpu_ais_lanes | library_backend::hmc |
      library_backend::ais | library_backend::tempering;
};

/// Owning host data of the radon regression, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class RadonData : public MirroredViews<RadonData<T>> {
 public:
  /// N homes' log radon, floor and log uranium, and their counties 1 … J (1-based, as in the
  /// data file). Throws myriad::invalid_argument naming the first bad entry.
  static RadonData from_arrays(const std::vector<double>& log_radon,
                               const std::vector<double>& floor,
                               const std::vector<double>& log_uranium,
                               const std::vector<int>& county, int counties) {
    const auto homes = log_radon.size();
    MYRIAD_EXPECTS(homes >= 1, "radon: N must be >= 1");
    MYRIAD_EXPECTS(counties >= 1, "radon: J must be >= 1, got ", counties);
    MYRIAD_EXPECTS(floor.size() == homes && log_uranium.size() == homes && county.size() == homes,
                   "radon: floor_measure, log_uppm and county_idx need N = ", homes, " entries");
    RadonData d;
    std::vector<T> y(homes), x(homes), u(homes);
    std::vector<int> c(homes);
    for (std::size_t i = 0; i < homes; ++i) {
      MYRIAD_EXPECTS(
          std::isfinite(log_radon[i]) && std::isfinite(floor[i]) && std::isfinite(log_uranium[i]),
          "radon: home ", i + 1, " has a value that is not finite");
      MYRIAD_EXPECTS(county[i] >= 1 && county[i] <= counties, "radon: county_idx[", i + 1,
                     "] = ", county[i], " is outside 1 … J = ", counties);
      y[i] = T(log_radon[i]);
      x[i] = T(floor[i]);
      u[i] = T(log_uranium[i]);
      c[i] = county[i] - 1;
    }
    d.model_.homes = static_cast<int>(homes);
    d.model_.counties = counties;
    d.log_radon_ = std::move(y);
    d.floor_ = std::move(x);
    d.log_uranium_ = std::move(u);
    d.county_ = std::move(c);
    return d;
  }

  int homes() const { return model_.homes; }
  int counties() const { return model_.counties; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Radon<T> viewing(Copy copy) const {
    return view(copy(log_radon_), copy(floor_), copy(log_uranium_), copy(county_));
  }

 private:
  RadonData() = default;

  Radon<T> view(const T* y, const T* x, const T* u, const int* c) const {
    Radon<T> m = model_;
    m.log_radon = y;
    m.floor = x;
    m.log_uranium = u;
    m.county = c;
    return m;
  }

  Radon<T> model_;
  MirroredArray<T> log_radon_, floor_, log_uranium_;
  MirroredArray<int> county_;
};

}  // namespace myriad::models
