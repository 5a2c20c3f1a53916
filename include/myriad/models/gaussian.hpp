#pragma once
// `gaussian`: an equicorrelated multivariate normal, N(m·1, s²[(1 − ρ)I + ρ11ᵀ]), with an
// exact answer: every coordinate has mean m and standard deviation s, pairwise correlation ρ.
//
// The covariance has a closed-form inverse and determinant (Sherman–Morrison, matrix
// determinant lemma), so density and gradient cost O(D):
//   Σ⁻¹ = [I − c 11ᵀ] / (s²(1 − ρ)),   c = ρ / (1 − ρ + Dρ),
//   log|Σ| = D log s² + (D − 1) log(1 − ρ) + log(1 + (D − 1)ρ).
// Valid for −1/(D − 1) < ρ < 1.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class T>
struct Gaussian {
  using value_type = T;
  int dimension = 2;
  T mean = T(0);
  T sd = T(1);
  T rho = T(0);
  T precision_scale = T(1);  ///< 1 / (s²(1 − ρ))
  T rank_one_weight = T(0);  ///< c = ρ / (1 − ρ + Dρ)
  T log_normaliser = T(0);   ///< −D/2 log 2π − ½ log|Σ|

  /// Validates the arguments and precomputes the closed-form inverse.
  static Gaussian make(int dim, double rho, double mean = 0.0, double sd = 1.0) {
    MYRIAD_EXPECTS(dim >= 1, "gaussian: dim must be >= 1, got ", dim);
    MYRIAD_EXPECTS(std::isfinite(mean), "gaussian: mean must be finite, got ", mean);
    MYRIAD_EXPECTS(std::isfinite(sd) && sd > 0, "gaussian: sd must be positive, got ", sd);
    const double lower = dim > 1 ? -1.0 / (dim - 1) : -1.0;
    MYRIAD_EXPECTS(rho > lower && rho < 1.0, "gaussian: rho must lie in (", lower, ", 1) for dim ",
                   dim, ", got ", rho);
    Gaussian g;
    g.dimension = dim;
    g.mean = T(mean);
    g.sd = T(sd);
    g.rho = T(rho);
    g.precision_scale = T(1.0 / (sd * sd * (1.0 - rho)));
    g.rank_one_weight = T(rho / (1.0 - rho + dim * rho));
    const double log_det =
        dim * std::log(sd * sd) + (dim - 1) * std::log1p(-rho) + std::log1p((dim - 1) * rho);
    g.log_normaliser = T(-0.5 * dim * std::log(2.0 * M_PI) - 0.5 * log_det);
    return g;
  }

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0), sum_sq = S(0);
    for (int i = 0; i < dimension; ++i) {
      const S y = x[i] - mean;
      sum += y;
      sum_sq += y * y;
    }
    return S(log_normaliser) - S(0.5) * precision_scale * (sum_sq - rank_one_weight * sum * sum);
  }

  /// ∇ log p = −Σ⁻¹(x − m) = −[(x − m) − c Σᵢ(xᵢ − m) 1] / (s²(1 − ρ)).
  /// Written over the element type S, so chains also run it in SIMD lanes (core/lanes.hpp).
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;
    S sum = S(0), sum_sq = S(0);
    for (int i = 0; i < dimension; ++i) {
      const S y = x[i] - mean;
      sum += y;
      sum_sq += y * y;
    }
    const S shift = rank_one_weight * sum;
    for (int i = 0; i < dimension; ++i) grad[i] = -precision_scale * ((x[i] - mean) - shift);
    return log_normaliser - T(0.5) * precision_scale * (sum_sq - shift * sum);
  }

  /// The density is normalised: log Z = 0 (an annealing target's known answer,
  /// estimate/annealing_target.hpp). Host only.
  double exact_log_z(int) const { return 0.0; }

  /// Every coordinate's exact mean m and sd s (host only).
  std::vector<ExactMoment> exact_posterior(int) const {
    std::vector<ExactMoment> exact;
    for (int i = 0; i < dimension; ++i)
      exact.push_back({"x[" + std::to_string(i) + "]", double(mean), double(sd)});
    return exact;
  }

  /// An exact draw x = m1 + A z, z ~ N(0, I) the normals 0 … D−1 of (iteration = draw,
  /// Purpose::exact_sample), with A the symmetric square root of Σ:
  ///   A = s[√(1 − ρ) I + ((√(1 + (D − 1)ρ) − √(1 − ρ))/D) 11ᵀ],
  /// since A² = s²[(1 − ρ)I + ρ11ᵀ] (the 11ᵀ coefficient is ((1 + (D − 1)ρ) − (1 − ρ))/D = ρ);
  /// valid on the whole range of ρ, negative included.
  template <class Out>
  MYRIAD_HD void exact_sample(int, const RandomStream& rng, std::uint32_t draw, Out& x) const {
    rng.fill_normal<T>(draw, Purpose::exact_sample, x, dimension);
    const T root_diagonal = myriad::sqrt(T(1) - rho);
    const T root_rank_one =
        (myriad::sqrt(T(1) + T(dimension - 1) * rho) - root_diagonal) / T(dimension);
    T sum = T(0);
    for (int i = 0; i < dimension; ++i) sum += T(x[i]);
    for (int i = 0; i < dimension; ++i)
      x[i] = mean + sd * (root_diagonal * T(x[i]) + root_rank_one * sum);
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels and
  /// CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::cpu_ais_lanes | library_backend::hmc |
      library_backend::ais | library_backend::tempering;
};

}  // namespace myriad::models
