#pragma once
// The prior half of the generator concept (model/generator.hpp) for generators whose inputs are
// u ~ N(0, I): log ρ(u) and its gradient over the generator's own input_dim(), written once for
// every such generator (sphere, linear_gaussian, lotka_volterra, lotka_volterra_summaries).

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// CRTP base of a generator G with a standard normal prior on its N = G::input_dim() inputs:
/// `struct G : StandardNormalPrior<G> { … }`. Empty, so G stays a small trivially copyable view.
template <class Generator>
struct StandardNormalPrior {
  /// log N(u; 0, I).
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, generator().input_dim());
  }

  /// ∇ log ρ = −u; returns log ρ(u). Declared over element_t<Vec>, so that the generator runs
  /// in SIMD lanes of chains (generator_in_lanes).
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_prior_gradient(const Vec& u, Grad& g) const {
    return standard_normal_log_prior_gradient(u, generator().input_dim(), g);
  }

 private:
  MYRIAD_HD const Generator& generator() const { return static_cast<const Generator&>(*this); }
};

}  // namespace myriad
