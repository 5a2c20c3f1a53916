#pragma once
// Each chain's share of a trajectory-length criterion and of its gradient, for the many-chain
// adaptation of mcmc/trajectory_length_adaptation.hpp. Written once for the CPU backend's loop
// and the CUDA kernels (DESIGN.md, rule 1).
//
// ChEES (Hoffman, Radul & Sountsov, AISTATS 2021, eq. 3 and §3): with q the point a trajectory
// of length t starts from, q′(t) its end point (the proposal), μ the ensemble's mean and
// S(x) = ‖x − μ‖², the "change in the estimator of the expected square" is
//   C = ¼ E[(S(q′) − S(q))²],   and   ∂C/∂t = ½ (S(q′) − S(q)) · ∂S(q′)/∂t
// with ∂S(q′)/∂t = 2 (q′ − μ)·v′, v′ = M⁻¹p′ the velocity at the end. Each chain's term is
// weighted by its acceptance probability α (a rejected proposal moved nothing; divergent
// trajectories have α = 0), as in the paper's estimator: Σ_c α_c ∂C_c/∂t / Σ_c α_c.
//
// SNAPER (Sountsov & Hoffman 2022, "Focusing on difficult directions for learning HMC
// trajectory lengths"): the same with S(x) = ((x − μ)ᵀ M^−½ z)², the square of the projection
// onto z, the estimated principal direction of the target in the metric's scaled coordinates
// y = M^−½ (x − μ) (a unit vector; SNAPER takes a diagonal metric only, where M^−½ is the
// square root of its entries). z is found by power iteration on the ensemble: each chain
// adds (yᵀz) y at its new point, whose sum over chains is N · Cov(y) z.
//
// The centre μ is the ensemble's mean after the previous iteration (lagged by one iteration:
// one pass over the chains instead of two; the lag is a small fraction of the spread the
// criterion measures, and both ends of a trajectory are centred on the same μ).

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/mcmc/metric.hpp"

namespace myriad {

enum class TrajectoryCriterion : int {
  chees = 0,   ///< ChEES: the squared distance from the ensemble's mean
  snaper = 1,  ///< SNAPER: the squared projection onto the principal direction
};

/// Rows of a chain's criterion terms (CriterionTerms): weight α, α·∂C/∂t, α·C, then for SNAPER
/// the dim entries of (yᵀz)·y. (The harmonic mean of the acceptance, which steers the step size
/// of ChEES and SNAPER, comes with every run's IterationStats.)
enum CriterionRow : int {
  kCriterionWeight = 0,
  kCriterionGradient = 1,
  kCriterionValue = 2,
  kCriterionDirection = 3,
};

/// Number of per-chain terms: 3, plus dim for SNAPER's power iteration.
MYRIAD_HD constexpr int criterion_term_count(TrajectoryCriterion criterion, int dim) {
  return criterion == TrajectoryCriterion::snaper ? kCriterionDirection + dim : kCriterionDirection;
}

/// What every chain reads to form its terms (device-visible arrays of length dim).
template <class T>
struct CriterionProbe {
  TrajectoryCriterion criterion = TrajectoryCriterion::chees;
  const T* centre = nullptr;     ///< μ: the ensemble's mean after the previous iteration
  const T* direction = nullptr;  ///< SNAPER: unit z in the scaled coordinates; else unused
};

/// Where chain c writes its terms: values[row · stride + c] (rows as in CriterionRow).
struct CriterionTerms {
  double* values = nullptr;
  std::int64_t stride = 0;
  MYRIAD_HD double& at(int row, std::int64_t c) const { return values[row * stride + c]; }
};

/// S(x) of the file comment: ‖x − μ‖² (ChEES) or ((x − μ)ᵀM^−½z)² (SNAPER, M⁻¹ diagonal).
template <class T, class Vec>
MYRIAD_HD double criterion_square(const CriterionProbe<T>& probe, const Vec& x,
                                  const MetricView<T>& metric) {
  const int dim = metric.dim;
  double sum = 0;
  if (probe.criterion == TrajectoryCriterion::chees) {
    for (int i = 0; i < dim; ++i) {
      const double a = static_cast<double>(x[i]) - static_cast<double>(probe.centre[i]);
      sum += a * a;
    }
    return sum;
  }
  for (int i = 0; i < dim; ++i) {
    const double a = static_cast<double>(x[i]) - static_cast<double>(probe.centre[i]);
    sum += a * static_cast<double>(probe.direction[i]) /
           myriad::sqrt(static_cast<double>(metric.diagonal[i]));
  }
  return sum * sum;
}

/// ∂S(q′)/∂t at the end of a trajectory: the derivative of S along the velocity v = M⁻¹p.
template <class T, class Vec>
MYRIAD_HD double criterion_square_rate(const CriterionProbe<T>& probe, const Vec& end,
                                       const Vec& momentum, const MetricView<T>& metric) {
  const int dim = metric.dim;
  if (probe.criterion == TrajectoryCriterion::chees) {
    double dot = 0;
    for (int i = 0; i < dim; ++i) {
      const double a = static_cast<double>(end[i]) - static_cast<double>(probe.centre[i]);
      dot += a * static_cast<double>(metric.velocity(momentum, i));
    }
    return 2 * dot;
  }
  // S = (aᵀw)² with w = M^−½z: ∂S/∂t = 2 (aᵀw)(vᵀw).
  double projection = 0, rate = 0;
  for (int i = 0; i < dim; ++i) {
    const double m = static_cast<double>(metric.diagonal[i]);
    const double w = static_cast<double>(probe.direction[i]) / myriad::sqrt(m);
    projection += (static_cast<double>(end[i]) - static_cast<double>(probe.centre[i])) * w;
    rate += m * static_cast<double>(momentum[i]) * w;
  }
  return 2 * projection * rate;
}

/// Writes chain c's terms after a transition from a point with S = start_square to the proposal
/// `end` with final momentum `momentum`, accepted with probability accept_prob (0 when
/// divergent); `position` is the chain's point after the transition (for SNAPER's power
/// iteration). A non-finite term (a trajectory that left the finite region) counts as weight 0.
template <class T, class Vec>
MYRIAD_HD void write_criterion_terms(const CriterionProbe<T>& probe, const CriterionTerms& terms,
                                     std::int64_t c, double start_square, double accept_prob,
                                     const Vec& end, const Vec& momentum, const Vec& position,
                                     const MetricView<T>& metric) {
  const int dim = metric.dim;
  double weight = accept_prob, gradient = 0, value = 0;
  if (weight > 0) {
    const double change = criterion_square(probe, end, metric) - start_square;
    gradient = 0.5 * change * criterion_square_rate(probe, end, momentum, metric);
    value = 0.25 * change * change;
    if (!myriad::isfinite(gradient) || !myriad::isfinite(value)) weight = gradient = value = 0;
  }
  terms.at(kCriterionWeight, c) = weight;
  terms.at(kCriterionGradient, c) = weight * gradient;
  terms.at(kCriterionValue, c) = weight * value;
  if (probe.criterion != TrajectoryCriterion::snaper) return;
  double projection = 0;
  for (int i = 0; i < dim; ++i) {
    const double y = (static_cast<double>(position[i]) - static_cast<double>(probe.centre[i])) /
                     myriad::sqrt(static_cast<double>(metric.diagonal[i]));
    projection += y * static_cast<double>(probe.direction[i]);
  }
  for (int i = 0; i < dim; ++i) {
    const double y = (static_cast<double>(position[i]) - static_cast<double>(probe.centre[i])) /
                     myriad::sqrt(static_cast<double>(metric.diagonal[i]));
    terms.at(kCriterionDirection + i, c) = projection * y;
  }
}

}  // namespace myriad
