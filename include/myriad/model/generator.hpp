#pragma once
// The generator-model concept for constrained HMC (Graham & Storkey 2017; DESIGN.md, "Models").
//
// A simulator maps random inputs u ∈ ℝ^N with prior density ρ to outputs x = g_x(u) ∈ ℝ^M and
// is conditioned exactly on observed data x̄ (the constraint g_x(u) = x̄). A generator is a small
// trivially copyable struct, usable in device code, with
//
//   using value_type = double;                                // constraint path: FP64
//   MYRIAD_HD int input_dim() const;                          // N
//   MYRIAD_HD int output_dim() const;                         // M (≤ N)
//   MYRIAD_HD value_type observed(int m) const;               // x̄_m
//   template <class Vec, class Out>
//   MYRIAD_HD void generate(const Vec& u, Out& x) const;      // x = g_x(u), generic scalar
//   template <class Vec>
//   MYRIAD_HD auto log_prior(const Vec& u) const;             // log ρ(u), generic scalar
//   template <class Out> MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt,
//                                                  Out& u) const;  // a point on the manifold
//                                                  // (constrained HMC only; the ABC baselines
//                                                  // do without it: a static_assert names it)
//
// Optional members, detected at compile time:
//
//   template <class Vec, class Grad>
//   MYRIAD_HD value_type log_prior_gradient(const Vec& u, Grad& g) const;  // returns log ρ
//                                     // (or element_t<Vec>: see "Chains in SIMD lanes" below)
//   template <class Vec, class Jac>
//   MYRIAD_HD void jacobian(const Vec& u, Jac& J) const;      // J(m, n) = ∂g_m/∂u_n, generic
//                                                            // scalar (duals give ∂J for the
//                                                            // log-det gradient)
//   static constexpr GramStructure gram_structure = ...;     // see below
//   MYRIAD_HD int num_parameters() const;                     // K for the structured forms
//   template <class Vec, class Params, class Noise>
//   MYRIAD_HD void structured_jacobian(const Vec& u, Params& B, Noise& T) const;
//   template <class Vec, class Jac, class Cot, class Grad, class Work>
//   MYRIAD_HD void add_jacobian_vjp(const Vec& u, const Jac& J, const Cot& C, Grad& grad,
//                                   Work& work) const;   // see below
//   MYRIAD_HD int jacobian_vjp_workspace() const;         // elements of `work` (default 0)
//   template <class Out> MYRIAD_HD void sample_prior(const RandomStream& rng,
//                                                   std::uint32_t iteration, Out& u) const;
//                                                   // u ~ ρ (needed by the ABC baselines;
//                                                   // default: standard normal inputs)
//   MYRIAD_HD int num_quantities() const;  quantities(u, out);  std::string quantity_name(int);
//                                          // default: the inputs, named u[0], u[1], ...
//
// Structured Jacobians (constrained-hmc.md §10). With u = (u₁ ∈ ℝ^K, u₂ ∈ ℝ^M), J = [B T]:
//   diagonal_plus_low_rank:   T = diag(d) (independent observations, e.g. GLD); Noise is a
//                             vector, written as T[m] = d_m (T(m) = d_m also works);
//   triangular_plus_low_rank: T lower triangular with positive diagonal (Markov observations,
//                             e.g. Lotka–Volterra); Noise is an M × M matrix view, T(m, j) for
//                             j ≤ m (entries above the diagonal are never read or written).
//   dense:                    the default; J is formed from jacobian() or by dual numbers.
//
// The log-determinant gradient (constrained-hmc.md §8). The potential's ∇ ½ log|J Jᵀ| is the
// vector–Jacobian product of the matrix-valued map u ↦ J(u) with the cotangent C = (J Jᵀ)⁻¹ J:
//   grad_i += Σ_mn C(m, n) ∂J_mn/∂u_i.
// Without add_jacobian_vjp the library forms ∂J/∂u_i on dual numbers seeded along each input,
// N passes of jacobian() / structured_jacobian() (nested duals of generate() without either);
// that is O(N × cost of J), e.g. O(N M²) for a Markov (triangular) generator. A generator that
// can do better — a hand-written reverse sweep of its Jacobian recursion is O(cost of J) —
// supplies add_jacobian_vjp. It receives u; J at u as the library holds it (the output of the
// generator's own jacobian() or structured_jacobian() in the dense M × N layout, J(m, n));
// the cotangent C (M × N, C(m, n)); and `work`, jacobian_vjp_workspace() elements of value_type
// scratch carved from the chain's workspace (host or device: no allocation inside). It adds the
// product into grad (N entries) and must not touch anything else. For the structured forms only
// the entries of J and C where J is structurally non-zero are valid (B, and T's diagonal or
// lower triangle): the member reads no others. Built-in: models/lotka_volterra.hpp.
//
// Chains in SIMD lanes (core/lanes.hpp). The CPU backend advances W chains at once when a
// generator's per-transition members — generate, log_prior or log_prior_gradient, jacobian or
// structured_jacobian, add_jacobian_vjp — are written over the element type of their vectors
// (`generic scalar` above: element_t<Vec>, core/lanes.hpp, never value_type) and do not branch
// on it: element type S may then be a SIMD batch of W chains' values. The declaration says so:
// log_prior_gradient declared to return element_t<Vec> (generator_in_lanes below, read without
// instantiating a body). initialize, sample_prior and quantities run one chain at a time and may
// use value_type freely.

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/returns_element_type.hpp"

namespace myriad {

/// How a generator's Gram matrix J Jᵀ is factorised.
enum class GramStructure { dense, diagonal_plus_low_rank, triangular_plus_low_rank };

namespace detail {
struct GeneratorProbeVector {
  double* p;
  MYRIAD_HD double& operator[](int i) const { return p[i]; }
};
struct GeneratorProbeMatrix {
  double* p;
  MYRIAD_HD double& operator()(int i, int j) const { return p[i + j]; }
};

template <class G>
using jacobian_expression = decltype(std::declval<const G&>().jacobian(
    std::declval<const GeneratorProbeVector&>(), std::declval<GeneratorProbeMatrix&>()));

template <class G>
using jacobian_vjp_expression = decltype(std::declval<const G&>().add_jacobian_vjp(
    std::declval<const GeneratorProbeVector&>(), std::declval<const GeneratorProbeMatrix&>(),
    std::declval<const GeneratorProbeMatrix&>(), std::declval<GeneratorProbeVector&>(),
    std::declval<GeneratorProbeVector&>()));

template <class G>
using jacobian_vjp_workspace_t = decltype(std::declval<const G&>().jacobian_vjp_workspace());
template <class G>
using jacobian_vjp_workspace_expression = jacobian_vjp_workspace_t<G>;

template <class G>
using log_prior_gradient_expression = decltype(std::declval<const G&>().log_prior_gradient(
    std::declval<const GeneratorProbeVector&>(), std::declval<GeneratorProbeVector&>()));

template <class G, class = void>
struct gram_structure_of {
  static constexpr GramStructure value = GramStructure::dense;
};
template <class G>
struct gram_structure_of<G, std::void_t<decltype(G::gram_structure)>> {
  static constexpr GramStructure value = G::gram_structure;
};

template <class G>
using initialize_expression = decltype(std::declval<const G&>().initialize(
    std::declval<const RandomStream&>(), std::uint32_t{}, std::declval<GeneratorProbeVector&>()));
}  // namespace detail

namespace detail {
template <class G>
using sample_prior_expression = decltype(std::declval<const G&>().sample_prior(
    std::declval<const RandomStream&>(), std::uint32_t{}, std::declval<GeneratorProbeVector&>()));
}  // namespace detail

/// u ~ ρ: the generator's own sampler, or standard normal inputs (draws keyed by
/// (iteration, purpose, input index)).
template <class G, class Out>
MYRIAD_HD void sample_generator_prior(const G& g, const RandomStream& rng, std::uint32_t iteration,
                                      Purpose purpose, Out& u) {
  if constexpr (is_detected_v<detail::sample_prior_expression, G>) {
    (void)purpose;
    g.sample_prior(rng, iteration, u);
  } else {
    rng.fill_normal<typename G::value_type>(iteration, purpose, u, g.input_dim());
  }
}

/// True when the generator supplies an analytic (generic-scalar) Jacobian.
template <class G>
constexpr bool generator_has_jacobian = is_detected_v<detail::jacobian_expression, G>;

/// True when the generator supplies add_jacobian_vjp (the log-determinant gradient's
/// vector–Jacobian product of u ↦ J(u); see the file comment).
template <class G>
constexpr bool generator_has_jacobian_vjp = is_detected_v<detail::jacobian_vjp_expression, G>;

/// Elements of scratch the generator's add_jacobian_vjp needs (0 without one, or when it
/// declares no jacobian_vjp_workspace()).
template <class G>
MYRIAD_HD int generator_jacobian_vjp_workspace(const G& g) {
  if constexpr (generator_has_jacobian_vjp<G> &&
                is_detected_v<detail::jacobian_vjp_workspace_expression, G>) {
    return g.jacobian_vjp_workspace();
  } else {
    (void)g;
    return 0;
  }
}

/// True when the generator supplies ∇ log ρ.
template <class G>
constexpr bool generator_has_log_prior_gradient =
    is_detected_v<detail::log_prior_gradient_expression, G>;

namespace detail {
template <class G, class S>
using lane_log_prior_gradient_expression = decltype(std::declval<const G&>().log_prior_gradient(
    std::declval<const ChainVector<S>&>(), std::declval<ChainVector<S>&>()));
}  // namespace detail

/// True when the generator is written over the element type of its vectors (see "Chains in SIMD
/// lanes" above): its log_prior_gradient is declared to return element_t<Vec>, so that S may be
/// a SIMD batch of chains and the CPU backend runs constrained HMC in lanes.
template <class G, class S>
constexpr bool generator_in_lanes =
    detail::returns_element_type<detail::lane_log_prior_gradient_expression, G, S>::value;

/// True when the generator can place a chain on its manifold itself.
template <class G>
constexpr bool generator_has_initialize = is_detected_v<detail::initialize_expression, G>;

namespace detail {
template <class G>
using num_parameters_expression = decltype(std::declval<const G&>().num_parameters());
}  // namespace detail

/// True when the generator says which of its inputs are parameters (the first num_parameters())
/// and which are noise: directed generators, whose prior factorises as ρ₁(parameters) ρ₂(noise).
template <class G>
constexpr bool generator_has_parameters = is_detected_v<detail::num_parameters_expression, G>;

/// The generator's declared Gram structure (dense by default).
template <class G>
constexpr GramStructure generator_gram_structure = detail::gram_structure_of<G>::value;

/// log ρ(u) of a standard normal prior, for generators whose inputs are N(0, I).
template <class Vec>
MYRIAD_HD auto standard_normal_log_prior(const Vec& u, int n) {
  using S = std::decay_t<decltype(u[0])>;
  S sum = S(0);
  for (int i = 0; i < n; ++i) sum += u[i] * u[i];
  return S(-kLogSqrtTwoPi * n) - S(0.5) * sum;
}

/// Its gradient, ∇ log ρ = −u, into g; returns log ρ(u).
template <class Vec, class Grad>
MYRIAD_HD auto standard_normal_log_prior_gradient(const Vec& u, int n, Grad& g) {
  for (int i = 0; i < n; ++i) g[i] = -u[i];
  return standard_normal_log_prior(u, n);
}

}  // namespace myriad
