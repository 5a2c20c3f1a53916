#pragma once
// `gaussian_latent_variable`: the Gaussian latent variable model of the thesis's §3.6.1
// (thesis-methods.md §9.1), the pseudo-marginal samplers' test bed with an exact answer:
//
//   x ~ N(0, I_D),   z_m | x ~ N(x, σ² I),   y_m | z_m ~ N(z_m, ε² I),   m = 1 … M,
//
// defaults σ = 1, ε = 2, M = 10, D = 10, the data y simulated from a fixed seed (the thesis's
// seed and true x are not given). Marginally y_m | x ~ N(x, (σ² + ε²) I), so the posterior is
// N(Σ_m y_m / (M + σ² + ε²), (σ² + ε²)/(M + σ² + ε²) I) (thesis (3.15) with erratum 4).
//
// The model offers both forms the samplers read (model/estimator.hpp):
// - a density model with a Gaussian prior factor: log N(x; 0, I) + Σ_m log N(y_m; x, (σ²+ε²) I),
//   for HMC and the slice samplers;
// - an estimator model: the importance-sampling estimate with the prior of z as proposal
//   (thesis (3.17), u ∈ R^{NMD}, erratum 5)
//     ε(x, u) = N(x; 0, I) · (1/N) Σ_n Π_m N(y_m; x + σ u^{(n,m)}, ε² I),
//   whose auxiliary variates are standard normal (Law normal) or uniform (Law uniform: pairs of
//   uniforms become pairs of normals by Box–Muller, so reflective slice sampling can move them;
//   an odd count is padded by one unused variate).
// Constants common to every (x, u) are dropped: the samplers read only ratios.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/estimator.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class T, AuxiliaryLaw Law = AuxiliaryLaw::normal>
struct GaussianLatentVariable {
  using value_type = T;
  static constexpr AuxiliaryLaw auxiliary_law = Law;
  static constexpr int kMaxDim = 16;
  static constexpr int kMaxObservations = 16;
  /// The library's CUDA backend of the auxiliary-variable samplers, in double precision
  /// (model/library_instances.hpp).
  static constexpr unsigned library_backends =
      std::is_same_v<T, double> ? library_backend::auxiliary : 0u;

  int dimension = 10;                    ///< D
  int observations = 10;                 ///< M
  int samples = 1;                       ///< N, importance samples per estimate
  T sigma = T(1);                        ///< σ: sd of z_m given x
  T epsilon = T(2);                      ///< ε: sd of y_m given z_m
  T y[kMaxObservations * kMaxDim] = {};  ///< y[m · D + d]
  T truth[kMaxDim] = {};                 ///< the x the data were simulated from

  /// Simulates the data from `data_seed` (x, then z and y, from one Philox stream).
  static GaussianLatentVariable make(int dim = 10, int observations = 10, int samples = 1,
                                     double sigma = 1.0, double epsilon = 2.0,
                                     std::uint64_t data_seed = 20170401) {
    MYRIAD_EXPECTS(dim >= 1 && dim <= kMaxDim, "gaussian_latent_variable: dim must lie in 1 … ",
                   kMaxDim, ", got ", dim);
    MYRIAD_EXPECTS(observations >= 1 && observations <= kMaxObservations,
                   "gaussian_latent_variable: observations must lie in 1 … ", kMaxObservations,
                   ", got ", observations);
    MYRIAD_EXPECTS(samples >= 1 && samples <= 4096,
                   "gaussian_latent_variable: samples (N) must lie in 1 … 4096, got ", samples);
    MYRIAD_EXPECTS(std::isfinite(sigma) && sigma > 0,
                   "gaussian_latent_variable: sigma must be positive, got ", sigma);
    MYRIAD_EXPECTS(std::isfinite(epsilon) && epsilon > 0,
                   "gaussian_latent_variable: epsilon must be positive, got ", epsilon);
    GaussianLatentVariable model;
    model.dimension = dim;
    model.observations = observations;
    model.samples = samples;
    model.sigma = T(sigma);
    model.epsilon = T(epsilon);
    const RandomStream rng(data_seed, 0);
    constexpr Purpose kData = static_cast<Purpose>(user_purpose(0x1A7E));
    for (int d = 0; d < dim; ++d) model.truth[d] = rng.normal<T>(0, kData, d);
    for (int m = 0; m < observations; ++m) {
      for (int d = 0; d < dim; ++d) {
        const auto k = static_cast<std::uint32_t>(m * dim + d);
        const T z = model.truth[d] + T(sigma) * rng.normal<T>(1, kData, k);
        model.y[m * dim + d] = z + T(epsilon) * rng.normal<T>(2, kData, k);
      }
    }
    return model;
  }

  MYRIAD_HD int dim() const { return dimension; }

  // --- Density form: prior N(0, I) times the marginal likelihood Π_m N(y_m; x, (σ² + ε²) I).

  MYRIAD_HD T gaussian_prior_mean(int) const { return T(0); }
  MYRIAD_HD T gaussian_prior_sd(int) const { return T(1); }

  template <class Vec>
  MYRIAD_HD auto log_likelihood(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    const T inverse_variance = T(1) / (sigma * sigma + epsilon * epsilon);
    S sum = S(0);
    for (int m = 0; m < observations; ++m) {
      for (int d = 0; d < dimension; ++d) {
        const S r = S(y[m * dimension + d]) - x[d];
        sum += r * r;
      }
    }
    return S(-0.5 * inverse_variance) * sum;
  }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S prior = S(0);
    for (int d = 0; d < dimension; ++d) prior += x[d] * x[d];
    return S(-0.5) * prior + log_likelihood(x);
  }

  // --- Estimator form (thesis (3.17)).

  /// N · M · D variates, rounded up to even for uniform ones (Box–Muller pairs).
  MYRIAD_HD int auxiliary_dim() const {
    const int n = samples * observations * dimension;
    return Law == AuxiliaryLaw::uniform ? n + (n % 2) : n;
  }

  /// log ε(x, u) = −½‖x‖² + log (1/N) Σ_n exp(−Σ_{m,d} (y_md − x_d − σ u_nmd)² / (2ε²)),
  /// the sum over n by a running log-sum-exp.
  template <class X, class U>
  MYRIAD_HD T log_estimate(const X& x, const U& u) const {
    const T scale = T(-0.5) / (epsilon * epsilon);
    const int block = observations * dimension;
    T max_term = T(-INFINITY), sum = T(0);
    for (int n = 0; n < samples; ++n) {
      T term = T(0);
      for (int k = 0; k < block; k += 2) {
        T v0, v1;
        normals(u, n * block + k, v0, v1);
        const int d0 = k % dimension, d1 = (k + 1) % dimension;
        const T r0 = y[k] - x[d0] - sigma * v0;
        term += r0 * r0;
        if (k + 1 < block) {
          const T r1 = y[k + 1] - x[d1] - sigma * v1;
          term += r1 * r1;
        }
      }
      term *= scale;
      // Running log-sum-exp: rescale the sum when the maximum grows.
      if (term > max_term) {
        sum = sum * myriad::exp(max_term - term) + T(1);
        max_term = term;
      } else {
        sum += myriad::exp(term - max_term);
      }
    }
    T prior = T(0);
    for (int d = 0; d < dimension; ++d) prior += x[d] * x[d];
    return T(-0.5) * prior + max_term + myriad::log(sum / T(samples));
  }

  /// Posterior mean and sd of x_d (the exact answer).
  T exact_mean(int d) const {
    T sum = T(0);
    for (int m = 0; m < observations; ++m) sum += y[m * dimension + d];
    return sum / (T(observations) + sigma * sigma + epsilon * epsilon);
  }
  T exact_sd() const {
    const T s = sigma * sigma + epsilon * epsilon;
    return std::sqrt(s / (T(observations) + s));
  }

 private:
  /// Standard normals j and j + 1 of the estimate's sequence from u (u[j] and u[j + 1] when
  /// normal; Box–Muller of the uniform pair at the even index when uniform).
  template <class U>
  MYRIAD_HD void normals(const U& u, int j, T& v0, T& v1) const {
    const int total = samples * observations * dimension;
    if constexpr (Law == AuxiliaryLaw::normal) {
      v0 = u[j];
      v1 = j + 1 < total ? u[j + 1] : T(0);
    } else {
      // j is even (blocks start at n · M · D, stepping by 2) only when M · D is even; otherwise
      // pair by the global index.
      if (j % 2 == 0) {
        RandomStream::box_muller(u[j], u[j + 1], v0, v1);
      } else {
        T a, b;
        RandomStream::box_muller(u[j - 1], u[j], a, v0);
        RandomStream::box_muller(u[j + 1], u[j + 2 < auxiliary_dim() ? j + 2 : j + 1], v1, b);
        (void)b;
      }
    }
  }
};

}  // namespace myriad::models
