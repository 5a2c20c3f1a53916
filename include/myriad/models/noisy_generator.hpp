#pragma once
// `Noisy<Generator>`: the noisy-generator variant of constrained-hmc.md §9. Any generator g_x
// with inputs u ∈ ℝ^N, prior ρ and M outputs becomes
//   g_y(u, n) = g_x(u) + ε n,   inputs (u, n) ∈ ℝ^{N+M},   prior ρ(u) N(n; 0, I_M),
// conditioned on g_y = x̄. Its Jacobian [J_x  εI_M] always has full row rank, its Gram matrix
// is J_x J_xᵀ + ε² I, and the u-marginal of its target is ρ(u) N(x̄ | g_x(u), ε² I): exactly the
// Gaussian-kernel ABC posterior with tolerance ε (§9). Use it for rank-deficient J_x or
// disconnected fibres. The Gram structure is dense for now (the default).
//
// The wrapper is trivially copyable when the inner generator is; members that need an optional
// member of the inner generator (jacobian, add_jacobian_vjp, log_prior_gradient, initialize,
// quantities) exist only when it does, so the compile-time detection of model/generator.hpp sees
// through it.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class Generator>
struct Noisy;

namespace detail {

template <class G>
using draw_prior_expression = decltype(std::declval<const G&>().draw_prior(
    std::declval<const RandomStream&>(), std::uint32_t{}, Purpose{},
    std::declval<myriad::detail::GeneratorProbeVector&>()));

// Output of the inner generator seen through g_y: y[m] = g_x,m + ε n_m on assignment.
template <class Vec, class Out>
struct NoisyOutput {
  const Vec& v;
  Out& y;
  int offset;  // N: n_m is v[N + m]
  double epsilon;

  struct Entry {
    const Vec& v;
    Out& y;
    int m;
    int offset;
    double epsilon;
    template <class S>
    MYRIAD_HD void operator=(const S& gx) const {
      y[m] = gx + S(epsilon) * v[offset + m];
    }
  };
  MYRIAD_HD Entry operator[](int m) const { return Entry{v, y, m, offset, epsilon}; }
};

// On assignment of g_x,m: n_m = (x̄_m − g_x,m)/ε, written into v[N + m].
template <class Inner, class Out>
struct NoiseSolution {
  const Inner& inner;
  Out& v;
  double epsilon;

  struct Entry {
    const Inner& inner;
    Out& v;
    int m;
    double epsilon;
    MYRIAD_HD void operator=(double gx) const {
      v[inner.input_dim() + m] = (inner.observed(m) - gx) / epsilon;
    }
  };
  MYRIAD_HD Entry operator[](int m) const { return Entry{inner, v, m, epsilon}; }
};

// On assignment of g_x,m: the largest |g_x,m + ε n_m − x̄_m| so far (∞ if not finite).
template <class Inner, class Vec>
struct NoisyResidual {
  const Inner& inner;
  const Vec& v;
  double epsilon;
  double& max_residual;

  struct Entry {
    const Inner& inner;
    const Vec& v;
    int m;
    double epsilon;
    double& max_residual;
    MYRIAD_HD void operator=(double gx) const {
      const double r = myriad::fabs(gx + epsilon * v[inner.input_dim() + m] - inner.observed(m));
      if (!myriad::isfinite(r)) {
        max_residual = HUGE_VAL;
      } else if (r > max_residual) {
        max_residual = r;
      }
    }
  };
  MYRIAD_HD Entry operator[](int m) const { return Entry{inner, v, m, epsilon, max_residual}; }
};

template <class Generator>
struct is_noisy_generator : std::false_type {};
template <class Inner>
struct is_noisy_generator<Noisy<Inner>> : std::true_type {};

}  // namespace detail

/// g_y(u, n) = g_x(u) + ε n around an inner generator (constrained-hmc.md §9).
template <class Generator>
struct Noisy {
  /// The library instantiates the constrained-HMC backends of Noisy<G> (CUDA, and the CPU's
  /// lanes) for every built-in generator G whose own it instantiates (the CLI's noise=ε), not for
  /// noisy generators made noisy again: model/library_instances.hpp.
  static constexpr unsigned library_backends =
      detail::is_noisy_generator<Generator>::value
          ? 0u
          : library_backends_of<Generator>::value &
                (library_backend::chmc | library_backend::cpu_chmc_lanes);

  using value_type = double;
  /// An initial point is accepted when ‖g_y − x̄‖∞ is below this.
  static constexpr double kInitializeTolerance = 1e-10;
  /// n_m is normal number kNoiseDrawOffset + m of a draw's (iteration, purpose), far beyond
  /// the draws of any inner generator.
  static constexpr std::uint32_t kNoiseDrawOffset = 1u << 30;

  Generator inner;       ///< g_x
  double epsilon = 1.0;  ///< ε > 0

  /// Validates ε > 0 (finite).
  static Noisy make(const Generator& inner, double epsilon) {
    MYRIAD_EXPECTS(std::isfinite(epsilon) && epsilon > 0, "noisy: epsilon must be positive, got ",
                   epsilon);
    return Noisy{inner, epsilon};
  }

  MYRIAD_HD int inner_dim() const { return inner.input_dim(); }
  MYRIAD_HD int input_dim() const { return inner.input_dim() + inner.output_dim(); }
  MYRIAD_HD int output_dim() const { return inner.output_dim(); }
  MYRIAD_HD value_type observed(int m) const { return inner.observed(m); }

  /// y = g_x(u) + ε n, v = (u, n).
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& v, Out& y) const {
    detail::NoisyOutput<Vec, Out> sink{v, y, inner_dim(), epsilon};
    inner.generate(v, sink);
  }

  /// log ρ(u) + log N(n; 0, I).
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& v) const {
    using S = std::decay_t<decltype(v[0])>;
    const int N = inner_dim(), M = output_dim();
    S sum = S(0);
    for (int m = 0; m < M; ++m) sum += v[N + m] * v[N + m];
    return inner.log_prior(v) + (S(-kLogSqrtTwoPi * M) - S(0.5) * sum);
  }

  /// ∇ log ρ(u) from the inner generator, ∂/∂n_m = −n_m; returns the log prior, in the type the
  /// inner generator's returns in: element_t<Vec> where the inner one runs in SIMD lanes
  /// (generator_in_lanes), so that the noisy one does too, value_type elsewhere.
  template <class Vec, class Grad, class G = Generator,
            std::enable_if_t<generator_has_log_prior_gradient<G>, int> = 0>
  MYRIAD_HD auto log_prior_gradient(const Vec& v, Grad& g) const
      -> decltype(std::declval<const G&>().log_prior_gradient(v, g)) {
    using V = element_t<Vec>;
    const int N = inner_dim(), M = output_dim();
    V sum = V(0);
    for (int m = 0; m < M; ++m) {
      const V n = v[N + m];
      g[N + m] = -n;
      sum += n * n;
    }
    return inner.log_prior_gradient(v, g) + (V(-kLogSqrtTwoPi * M) - V(0.5) * sum);
  }

  /// Dense J = [J_x  εI] (all M × (N + M) entries).
  template <class Vec, class Jac, class G = Generator,
            std::enable_if_t<generator_has_jacobian<G>, int> = 0>
  MYRIAD_HD void jacobian(const Vec& v, Jac& J) const {
    using S = std::decay_t<decltype(v[0])>;
    inner.jacobian(v, J);
    const int N = inner_dim(), M = output_dim();
    for (int m = 0; m < M; ++m)
      for (int j = 0; j < M; ++j) J(m, N + j) = j == m ? S(epsilon) : S(0);
  }

  /// The log-determinant gradient's vector–Jacobian product (model/generator.hpp), when the
  /// inner generator has one: the εI block of J is constant, so only J_x's entries contribute,
  /// and J_x and its cotangent occupy the first N columns of J and C, as in the inner layout.
  template <class Vec, class Jac, class Cot, class Grad, class Work, class G = Generator,
            std::enable_if_t<generator_has_jacobian_vjp<G>, int> = 0>
  MYRIAD_HD void add_jacobian_vjp(const Vec& v, const Jac& J, const Cot& C, Grad& grad,
                                  Work& work) const {
    inner.add_jacobian_vjp(v, J, C, grad, work);
  }
  template <class G = Generator, std::enable_if_t<generator_has_jacobian_vjp<G>, int> = 0>
  MYRIAD_HD int jacobian_vjp_workspace() const {
    return generator_jacobian_vjp_workspace(inner);
  }

  /// The exact closed form of §9 and §12.4: u from the inner prior (draw_prior with
  /// (attempt, Purpose::initial_point)), n = (x̄ − g_x(u))/ε. When g_x(u) is not finite or g_y
  /// misses x̄ by more than 1e-10 through rounding (|g_x| ≳ 1e5, as for Lotka–Volterra prior
  /// draws, whose trajectories explode), u comes from the inner initialize() instead — the same
  /// attempt, so for the built-in generators the same prior draw of u₁ — and lies on the inner
  /// fibre, with n ≈ 0. False if neither lands on the fibre.
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& v) const {
    draw_inner_prior(rng, attempt, Purpose::initial_point, v);
    if (solve_noise(v)) return true;
    if constexpr (generator_has_initialize<Generator>) {
      if (inner.initialize(rng, attempt, v) && solve_noise(v)) return true;
    }
    return false;
  }

  /// (u, n) ~ ρ(u) N(n; 0, I) keyed by (iteration, purpose): u from the inner generator's
  /// draw_prior (or sample_generator_prior), n_m = normal kNoiseDrawOffset + m.
  template <class Out>
  MYRIAD_HD void draw_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                            Out& v) const {
    draw_inner_prior(rng, iteration, purpose, v);
    const int N = inner_dim();
    for (int m = 0; m < output_dim(); ++m)
      v[N + m] =
          rng.normal<double>(iteration, purpose, kNoiseDrawOffset + static_cast<std::uint32_t>(m));
  }

  /// (u, n) ~ ρ(u) N(n; 0, I) for sample_generator_prior: draw_prior with Purpose::user.
  template <class Out>
  MYRIAD_HD void sample_prior(const RandomStream& rng, std::uint32_t iteration, Out& v) const {
    draw_prior(rng, iteration, Purpose::user, v);
  }

  /// The inner generator's quantities (functions of u only).
  template <class G = Generator>
  MYRIAD_HD auto num_quantities() const -> decltype(std::declval<const G&>().num_quantities()) {
    return inner.num_quantities();
  }
  template <class Vec, class Out, class G = Generator,
            class = decltype(std::declval<const G&>().num_quantities())>
  MYRIAD_HD void quantities(const Vec& v, Out& out) const {
    inner.quantities(v, out);
  }
  template <class G = Generator>
  auto quantity_name(int i) const -> decltype(std::declval<const G&>().quantity_name(i)) {
    return inner.quantity_name(i);
  }

 private:
  // u ~ ρ into v[0 … N): the inner draw_prior, else the library's prior sampler.
  template <class Out>
  MYRIAD_HD void draw_inner_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                                  Out& v) const {
    if constexpr (is_detected_v<detail::draw_prior_expression, Generator>) {
      inner.draw_prior(rng, iteration, purpose, v);
    } else {
      sample_generator_prior(inner, rng, iteration, purpose, v);
    }
  }

  // n = (x̄ − g_x(u))/ε into v[N …], then checks ‖g_x(u) + ε n − x̄‖∞ < 1e-10.
  template <class Out>
  MYRIAD_HD bool solve_noise(Out& v) const {
    detail::NoiseSolution<Generator, Out> solution{inner, v, epsilon};
    inner.generate(v, solution);
    double max_residual = 0;
    detail::NoisyResidual<Generator, Out> residual{inner, v, epsilon, max_residual};
    inner.generate(v, residual);
    return max_residual < kInitializeTolerance;
  }
};

}  // namespace myriad::models
