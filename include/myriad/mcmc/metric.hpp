#pragma once
// The inverse mass matrix M⁻¹ of HMC as every chain sees it: diagonal, or dense with its
// Cholesky factor. Written once for the CPU backend's loop and the CUDA kernels (DESIGN.md,
// rule 1); the arrays are shared by all chains (one read-only copy on the device, read by every
// thread of a warp at the same address).
//
// Kinetic energy K(p) = ½ pᵀM⁻¹p, velocity v = M⁻¹p, momentum p ~ N(0, M) (Neal 2011, §5.4.1).
// Dense: with M⁻¹ = LLᵀ (L lower), p = L⁻ᵀz for z ~ N(0, I) has covariance L⁻ᵀL⁻¹ = (LLᵀ)⁻¹ =
// M. A dense metric costs O(D²) per leapfrog step (the velocity's matrix-vector product), so it
// pays where the target's correlations make a diagonal metric need many more steps
// (docs/tuning.md); SampleConfig limits it to kMaxDenseMetricDim.

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

/// The largest dimension for a dense metric: D² values shared by every chain and O(D²) work per
/// leapfrog step.
constexpr int kMaxDenseMetricDim = 1024;

template <class T>
struct MetricView {
  const T* diagonal = nullptr;  ///< diagonal metric: M⁻¹'s diagonal, length dim
  const T* dense = nullptr;     ///< dense metric: M⁻¹, dim × dim row-major; null when diagonal
  const T* factor = nullptr;    ///< dense metric: L (lower, row-major) with M⁻¹ = LLᵀ
  int dim = 0;

  /// A diagonal metric.
  MYRIAD_HD static MetricView diagonal_metric(const T* inverse_diagonal, int dim) {
    return {inverse_diagonal, nullptr, nullptr, dim};
  }

  /// The view of a backend's metric storage (metric_storage, detail/hmc_chain_bodies.hpp): the
  /// diagonal, or M⁻¹ followed by L.
  MYRIAD_HD static MetricView from_storage(const T* storage, int dim, bool dense) {
    if (!dense) return diagonal_metric(storage, dim);
    return {nullptr, storage, storage + static_cast<long long>(dim) * dim, dim};
  }

  MYRIAD_HD bool is_dense() const { return dense != nullptr; }

  // The vectors' elements may be a SIMD batch of chains (core/lanes.hpp); the metric's entries,
  // shared by every chain, then multiply every lane.

  /// (M⁻¹p)_i.
  template <class Vec>
  MYRIAD_HD element_t<Vec> velocity(const Vec& p, int i) const {
    using S = element_t<Vec>;
    if (dense == nullptr) return diagonal[i] * p[i];
    const T* row = dense + static_cast<long long>(i) * dim;
    S v = S(0);
    for (int j = 0; j < dim; ++j) v += row[j] * p[j];
    return v;
  }

  /// ½ pᵀM⁻¹p.
  template <class Vec>
  MYRIAD_HD element_t<Vec> kinetic_energy(const Vec& p) const {
    using S = element_t<Vec>;
    S sum = S(0);
    for (int i = 0; i < dim; ++i) sum += p[i] * velocity(p, i);
    return T(0.5) * sum;
  }

  /// Turns z ~ N(0, I), held in p, into p ~ N(0, M): p_i = z_i / √(M⁻¹_ii) (diagonal), or
  /// p = L⁻ᵀz by back substitution in place (dense: p_i waits for p_j, j > i, which are solved).
  template <class Vec>
  MYRIAD_HD void momentum_from_normal(const Vec& p) const {
    if (dense == nullptr) {
      for (int i = 0; i < dim; ++i) p[i] /= myriad::sqrt(diagonal[i]);
      return;
    }
    for (int i = dim - 1; i >= 0; --i) {
      element_t<Vec> sum = p[i];
      for (int j = i + 1; j < dim; ++j) sum -= factor[static_cast<long long>(j) * dim + i] * p[j];
      p[i] = sum / factor[static_cast<long long>(i) * dim + i];
    }
  }

  /// One leapfrog position update q ← q + ε M⁻¹p (p is not changed, so the dense product may
  /// read it while q moves).
  template <class Vec>
  MYRIAD_HD void drift(const Vec& q, const Vec& p, T eps) const {
    for (int i = 0; i < dim; ++i) q[i] += eps * velocity(p, i);
  }
};

}  // namespace myriad
