#pragma once
// `sphere`: the generator g(u) = ‖u‖² with u ~ N(0, I_N), conditioned on g(u) = r²
// (constrained-hmc.md §2, "Obvious analytic checks"). N inputs, M = 1 output.
//
// On the fibre ‖u‖ = r the prior density is constant and the Gram matrix J Jᵀ = 4‖u‖² = 4r² is
// constant, so the target of §2, ρ(u) |J Jᵀ|^{−1/2}, is uniform on the sphere:
//   E[u] = 0,   E[u uᵀ] = (r²/N) I.
// The recorded quantities are the inputs themselves, named u[0], …, u[N−1].

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/standard_normal_prior.hpp"

namespace myriad::models {

/// The sphere generator g(u) = ‖u‖², ρ = N(0, I_N), x̄ = r².
struct Sphere : StandardNormalPrior<Sphere> {
  using value_type = double;

  int dimension = 3;    ///< N ≥ 2
  double radius = 1.0;  ///< r > 0

  /// Validates N ≥ 2 and r > 0 (finite).
  static Sphere make(int dim, double radius) {
    MYRIAD_EXPECTS(dim >= 2, "sphere: dim must be >= 2, got ", dim);
    MYRIAD_EXPECTS(std::isfinite(radius) && radius > 0, "sphere: radius must be positive, got ",
                   radius);
    Sphere s;
    s.dimension = dim;
    s.radius = radius;
    return s;
  }

  MYRIAD_HD int input_dim() const { return dimension; }
  MYRIAD_HD int output_dim() const { return 1; }
  /// x̄ = r².
  MYRIAD_HD value_type observed(int /*m*/) const { return radius * radius; }

  /// x_0 = Σ_n u_n².
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    using S = std::decay_t<decltype(u[0])>;
    S sum = S(0);
    for (int n = 0; n < dimension; ++n) sum += u[n] * u[n];
    x[0] = sum;
  }

  /// J(0, n) = 2 u_n.
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& J) const {
    using S = std::decay_t<decltype(u[0])>;
    for (int n = 0; n < dimension; ++n) J(0, n) = S(2) * u[n];
  }

  /// u ~ N(0, I): normals 0 … N−1 of (iteration, purpose), the numbers the library's default
  /// prior sampler (sample_generator_prior) draws, which the ABC baselines use.
  template <class Out>
  MYRIAD_HD void draw_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                            Out& u) const {
    rng.fill_normal<double>(iteration, purpose, u, dimension);
  }

  /// The prior draw of draw_prior(attempt, Purpose::initial_point) scaled to radius r: u = r v/‖v‖,
  /// which is exactly the uniform distribution on the sphere. False only if v = 0 (probability
  /// zero).
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    draw_prior(rng, attempt, Purpose::initial_point, u);
    double sum = 0;
    for (int n = 0; n < dimension; ++n) sum += u[n] * u[n];
    if (!(sum > 0) || !myriad::isfinite(sum)) return false;
    const double scale = radius / myriad::sqrt(sum);
    for (int n = 0; n < dimension; ++n) u[n] = u[n] * scale;
    return true;
  }

  /// Recorded quantities: u itself, named u[0], …, u[N−1].
  MYRIAD_HD int num_quantities() const { return dimension; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    for (int n = 0; n < dimension; ++n) out[n] = u[n];
  }
  std::string quantity_name(int i) const { return "u[" + std::to_string(i) + "]"; }

  /// Backends the library instantiates (CUDA, and the CPU's lanes): model/library_instances.hpp.
  static constexpr unsigned library_backends =
      library_backend::chmc | library_backend::cpu_chmc_lanes;
};

}  // namespace myriad::models
