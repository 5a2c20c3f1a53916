#pragma once
// The normalised base distribution q of annealed importance sampling (hais.md §1, §5), and the
// reflection of positions at box bounds.
//
// Per coordinate i, with scale σ_i and centre μ_i (unit Gaussian by default):
//   unbounded          E_q = ½((x − μ)/σ)²,        log Z_q,i = ½ log 2π + log σ
//   lower bound a only E_q = ½((x − a)/σ)², x ≥ a,  log Z_q,i = ½ log 2π + log σ − log 2
//   upper bound b only E_q = ½((b − x)/σ)², x ≤ b,  the same normaliser
//   both a and b       E_q = 0 on [a, b],           log Z_q,i = log(b − a)
// (one-sided Gaussians and uniforms as in the HAIS reference code, hais.md §5). The centre is
// ignored for bounded coordinates.
//
// All views are device-visible arrays or null: mean null is 0, scale null is 1, lower/upper null
// is unbounded. Bounds are ±infinity where a coordinate is unbounded on that side.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"

namespace myriad {

/// The base distribution q on the host, as runs describe it: a diagonal Gaussian
/// N(mean, diag(scale²)); an empty mean is isotropic_mean and an empty scale isotropic_scale for
/// every coordinate. Bounded coordinates of the target override it (AnnealingBase below).
struct AisBaseSpec {
  std::vector<double> mean;
  std::vector<double> scale;
  double isotropic_scale = 1.0;  ///< every coordinate's scale when `scale` is empty
  double isotropic_mean = 0.0;   ///< every coordinate's mean when `mean` is empty
};

template <class T>
struct AnnealingBase {
  int dim = 0;
  const T* mean = nullptr;
  const T* scale = nullptr;
  const T* lower = nullptr;
  const T* upper = nullptr;

  MYRIAD_HD T centre(int i) const { return mean ? mean[i] : T(0); }
  MYRIAD_HD T sd(int i) const { return scale ? scale[i] : T(1); }
  MYRIAD_HD T lower_bound(int i) const {
    return lower ? lower[i] : -std::numeric_limits<T>::infinity();
  }
  MYRIAD_HD T upper_bound(int i) const {
    return upper ? upper[i] : std::numeric_limits<T>::infinity();
  }
  MYRIAD_HD bool bounded() const { return lower != nullptr || upper != nullptr; }

  // x_i may be a scalar or a SIMD batch of particles (core/lanes.hpp): the branches below are
  // on the bounds, which every particle shares.

  /// z_i of the energy term ½ z_i² of coordinate i (0 between two bounds).
  template <class S>
  MYRIAD_HD S standardised(int i, const S& xi) const {
    const T a = lower_bound(i), b = upper_bound(i);
    const bool has_a = myriad::isfinite(a), has_b = myriad::isfinite(b);
    if (has_a && has_b) return S(0);
    if (has_a) return (xi - a) / sd(i);
    if (has_b) return (xi - b) / sd(i);
    return (xi - centre(i)) / sd(i);
  }

  /// −E_q(x), the unnormalised log density of q; with a team (core/team.hpp) each lane sums its
  /// own coordinates and the result is the same in every lane.
  template <class Vec, class Team = SerialTeam>
  MYRIAD_HD element_t<Vec> log_density(const Vec& x, const Team& team = Team{}) const {
    using S = element_t<Vec>;
    S energy = S(0);
    for (int i = team.rank(); i < dim; i += team.size()) {
      const S z = standardised(i, S(x[i]));
      energy += z * z;
    }
    return T(-0.5) * team.sum(energy);
  }

  /// ∂(−E_q)/∂x_i at x_i.
  template <class S>
  MYRIAD_HD S gradient(int i, const S& xi) const {
    return -standardised(i, xi) / sd(i);
  }

  /// Draws x ~ q with `rng` at (iteration, purpose): normals, folded at one bound or replaced by
  /// uniforms between two.
  template <class Vec, class Team = SerialTeam>
  MYRIAD_HD void sample(const RandomStream& rng, std::uint32_t iteration, Purpose purpose, Vec& x,
                        const Team& team = Team{}) const {
    fill_normal<T>(team, rng, iteration, purpose, x, dim);
    for (int i = team.rank(); i < dim; i += team.size()) {
      const T a = lower_bound(i), b = upper_bound(i);
      const bool has_a = myriad::isfinite(a), has_b = myriad::isfinite(b);
      if (has_a && has_b) {
        // A uniform from the same stream: its Philox block is keyed past the normals' blocks.
        const T u = rng.uniform<T>(iteration, purpose, static_cast<std::uint32_t>(dim + i));
        x[i] = a + (b - a) * u;
      } else if (has_a) {
        x[i] = a + sd(i) * myriad::fabs(x[i]);
      } else if (has_b) {
        x[i] = b - sd(i) * myriad::fabs(x[i]);
      } else {
        x[i] = centre(i) + sd(i) * x[i];
      }
    }
  }
};

/// log Z_q of a base (host): Σ_i of the per-coordinate normalisers in the file comment.
template <class T>
double base_log_normaliser(int dim, const T* scale, const T* lower, const T* upper) {
  double total = 0.0;
  for (int i = 0; i < dim; ++i) {
    const double s = scale ? static_cast<double>(scale[i]) : 1.0;
    const double a = lower ? static_cast<double>(lower[i]) : -INFINITY;
    const double b = upper ? static_cast<double>(upper[i]) : INFINITY;
    const bool has_a = std::isfinite(a), has_b = std::isfinite(b);
    if (has_a && has_b) {
      total += std::log(b - a);
    } else if (has_a || has_b) {
      total += kLogSqrtTwoPi + std::log(s) - std::log(2.0);
    } else {
      total += kLogSqrtTwoPi + std::log(s);
    }
  }
  return total;
}

/// Reflects coordinate i of a position step back into [a, b], negating the matching momentum
/// each time (hais.md §5: x ← a + (a − x), v ← −v; repeated while a step crosses both bounds).
/// Reflection is volume-preserving and reversible, so the Metropolis test is unchanged. Returns
/// false when the position is not finite or still outside after `max_reflections` (a step size
/// far beyond the box width): the caller then rejects the move. With a team each lane reflects
/// its own coordinates and every lane returns the same answer. With a SIMD batch of particles
/// as the element type (core/lanes.hpp) it returns a mask: every particle is reflected alone,
/// those still outside in each round together, so each ends where the one-particle loop leaves
/// it (a failed particle's proposal is rejected, so where its coordinates stop does not matter).
template <class T, class Vec, class Mom, class Team = SerialTeam>
MYRIAD_HD lane_mask_t<element_t<Vec>> reflect_into_box(const AnnealingBase<T>& base, Vec& x, Mom& v,
                                                       const Team& team = Team{},
                                                       int max_reflections = 64) {
  using S = element_t<Vec>;
  using Lanes = LaneOps<S>;
  lane_mask_t<S> inside(true);
  if (!base.bounded()) return inside;
  for (int i = team.rank(); i < base.dim && Lanes::any(inside); i += team.size()) {
    const S a = S(base.lower_bound(i)), b = S(base.upper_bound(i));
    int reflections = 0;
    lane_mask_t<S> outside = inside && (x[i] < a || x[i] > b);
    while (Lanes::any(outside)) {
      const lane_mask_t<S> fails = outside && (!myriad::isfinite(S(x[i])) ||
                                               lane_mask_t<S>(++reflections > max_reflections));
      inside = inside && !fails;
      outside = outside && !fails;
      const S xi = x[i];
      x[i] = Lanes::select(outside, Lanes::select(xi < a, a + (a - xi), b - (xi - b)), xi);
      v[i] = Lanes::select(outside, -S(v[i]), S(v[i]));
      outside = outside && (S(x[i]) < a || S(x[i]) > b);
    }
  }
  return team.all(inside);
}

}  // namespace myriad
