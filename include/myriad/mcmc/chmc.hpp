#pragma once
// One constrained-HMC transition for one chain (Graham & Storkey 2017; constrained-hmc.md §3–§7,
// pseudo-code §13): the chain moves on the manifold {u : g_x(u) = x̄} with potential
//   φ(u) = −log ρ(u) + ½ log|J Jᵀ|                                   (§2)
// using the geodesic integrator P∘B(δt/2)∘(P∘A(δt/N_g))^{N_g}∘P∘B(δt/2) (§3), symmetric
// quasi-Newton position projections with J and the Gram factor frozen at the start of each
// inner step (§4), momentum projections (§5), a reversibility check after every inner step
// (§6), and a Metropolis accept (§7). Every failure rejects the transition and is reported as a
// status flag; none is an error. The constraint path runs in the generator's value_type
// (double: tolerances near 1e-9 need it).
//
// Teams (core/team.hpp). ChmcMachine takes the team that runs the chain: SerialTeam (the
// CPU backend and the thread-per-chain kernels) or a warp (kernels/chmc_kernels.cuh, one warp
// per chain). Vector updates are dealt to the lanes by element, the factor's linear algebra is
// shared (constraint_factor.hpp), the generator's own functions run on lane 0, and every scalar
// that steers control flow (a norm, an energy, a status) is computed by every lane from the whole
// vector in the one-lane order, so every lane takes the same branch and a team of any size
// reproduces the one-lane chain bit for bit.
//
// Lanes (core/lanes.hpp). The element type T may also be a SIMD batch of W chains (the CPU
// backend's lane kernels, detail/chmc_lane_kernel.hpp; with SerialTeam only): every scalar that
// steers control flow is then a batch, every decision a mask, and a chain that fails leaves the
// transition as a lane: its status is recorded, it stops counting Newton iterations and gradient
// evaluations and it can no longer be accepted, while the lanes still running go on (the masked
// lockstep of a converged warp). A Newton loop runs until its last running lane has converged
// or failed, the converged lanes keeping their iterate. Each lane so computes what the one-chain
// transition computes for its chain; with T a scalar every mask is a bool and the code is the
// one-chain code.

#include <cstdint>
#include <type_traits>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/constraint_factor.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// Settings of one constrained-HMC iteration, shared by all chains. Defaults: the Mici set of
/// tolerances (constrained-hmc.md §14).
template <class T>
struct ChmcStep {
  T step_size = T(0.25);       ///< δt
  int steps = 5;               ///< N_s outer steps this iteration (drawn per iteration, shared)
  int inner_steps = 3;         ///< N_g geodesic sub-steps per outer step
  T constraint_tol = T(1e-9);  ///< ‖g_x(v) − x̄‖∞ at convergence
  T position_tol = T(1e-8);    ///< ‖Δv‖∞ of the next update at convergence
  T reverse_tol = T(2e-8);     ///< ‖u_r − u‖∞ of the reverse sub-step
  T divergence_tol = T(1e10);  ///< ‖g_x(v) − x̄‖∞ above which a projection has diverged
  int max_iterations = 50;     ///< I_max of a projection
};

/// The factor type for a generator's declared Gram structure.
template <class Generator, class T>
struct constraint_factor_for {
  static constexpr GramStructure structure = generator_gram_structure<Generator>;
  using type = std::conditional_t<structure == GramStructure::dense, DenseConstraintFactor<T>,
                                  StructuredConstraintFactor<T, structure>>;
};

/// Offsets of one chain's constrained-HMC scratch (elements of its ChainWorkspace<T>).
struct ChmcLayout {
  int n, m, k;
  std::int64_t factor_size;  ///< J, and L unless external_gram
  std::int64_t vjp_size;     ///< scratch of the generator's add_jacobian_vjp (0 without one)
  /// Whether ∂J/∂u_i is formed on duals: no add_jacobian_vjp, and a jacobian() or
  /// structured_jacobian() to seed (without either, nested duals of generate() need no matrix).
  bool dual_jacobian;
  /// Lanes with their own dual and nested-dual output vectors: the team's size when J comes
  /// from forward passes of generate() (no analytic Jacobian; the passes are dealt to the lanes),
  /// else 1.
  int output_lanes;
  /// Whether the two Gram matrices live outside the workspace (ChmcChain::gram; the batched
  /// factorisation of a dense Gram), so that the factors hold J only.
  bool external_gram;
  // Vectors of length N: proposal, momentum, proposal gradient, sub-step start, iterate, update.
  MYRIAD_HD std::int64_t proposal() const { return 0; }
  MYRIAD_HD std::int64_t momentum() const { return n; }
  MYRIAD_HD std::int64_t proposal_gradient() const { return 2 * std::int64_t(n); }
  MYRIAD_HD std::int64_t start() const { return 3 * std::int64_t(n); }
  MYRIAD_HD std::int64_t iterate() const { return 4 * std::int64_t(n); }
  MYRIAD_HD std::int64_t update() const { return 5 * std::int64_t(n); }
  // Vectors of length M: residual.
  MYRIAD_HD std::int64_t residual() const { return 6 * std::int64_t(n); }
  // Two factors (start and end point of a sub-step) and C = G⁻¹J (M × N).
  MYRIAD_HD std::int64_t factor(int which) const {
    return 6 * std::int64_t(n) + m + which * factor_size;
  }
  MYRIAD_HD std::int64_t c_matrix() const { return factor(2); }
  // The generator's add_jacobian_vjp scratch (vjp_size elements).
  MYRIAD_HD std::int64_t jacobian_vjp_work() const { return c_matrix() + std::int64_t(m) * n; }
  MYRIAD_HD std::int64_t size() const { return jacobian_vjp_work() + vjp_size; }
  /// Dual scratch (ChainWorkspace<Dual<T>>): ∂J (M × N, only without add_jacobian_vjp) and an
  /// M-vector per output lane.
  MYRIAD_HD std::int64_t dual_outputs(int lane = 0) const {
    return (dual_jacobian ? std::int64_t(m) * n : 0) + std::int64_t(lane) * m;
  }
  MYRIAD_HD std::int64_t dual_size() const { return dual_outputs(output_lanes); }
  /// Nested-dual scratch (ChainWorkspace<Dual<Dual<T>>>): an M-vector per output lane.
  MYRIAD_HD std::int64_t nested_outputs(int lane = 0) const { return std::int64_t(lane) * m; }
  MYRIAD_HD std::int64_t nested_size() const { return nested_outputs(output_lanes); }
};

/// The layout for a chain run by `lanes` lanes (1: the CPU and thread-per-chain kernels), with
/// the Gram matrices in the workspace or, `external_gram` (a dense Gram only), outside it.
template <class Generator, class T>
MYRIAD_HD ChmcLayout chmc_layout(const Generator& g, int lanes = 1, bool external_gram = false) {
  int k = 0;
  std::int64_t factor_size = 0;
  if constexpr (generator_gram_structure<Generator> != GramStructure::dense) {
    k = g.num_parameters();
    external_gram = false;
    factor_size =
        constraint_factor_for<Generator, T>::type::workspace_size(g.output_dim(), g.input_dim(), k);
  } else {
    factor_size =
        DenseConstraintFactor<T>::workspace_size(g.output_dim(), g.input_dim(), 0, !external_gram);
  }
  return {g.input_dim(),
          g.output_dim(),
          k,
          factor_size,
          generator_jacobian_vjp_workspace(g),
          !generator_has_jacobian_vjp<Generator> &&
              (generator_has_jacobian<Generator> ||
               generator_gram_structure<Generator> != GramStructure::dense),
          generator_has_jacobian<Generator> ? 1 : lanes,
          external_gram};
}

/// Views of one chain's state (u, φ, ∇φ: updated on acceptance) and scratch.
template <class T>
struct ChmcChain {
  ChainVector<T> position;  ///< u, on the manifold
  ChainVector<T> gradient;  ///< ∇φ(u)
  T* potential;             ///< φ(u)
  ChainWorkspace<T> work;
  ChainWorkspace<Dual<T>> dual_work;
  ChainWorkspace<Dual<Dual<T>>> nested_work;
  /// Null, or the chain's two Gram matrices outside `work` (a dense Gram only): factor w's
  /// M × M matrix at gram + w · gram_step, column-major with leading dimension M, one matrix of
  /// the column-major batches of linalg/batched_cholesky.hpp, so that a library Cholesky can
  /// factor every chain's matrix in place between two phases of a transition.
  T* gram = nullptr;
  std::int64_t gram_step = 0;
};

/// What one transition did: for one chain, or per lane for chains in SIMD lanes (T a batch).
template <class T>
struct ChmcOutcome {
  template <class U>
  using per_lane = typename LaneOps<T>::template per_lane<U>;
  T accept_prob;
  lane_mask_t<T> accepted;
  per_lane<std::uint32_t> status;  ///< ChainStatus flags
  per_lane<int> gradient_evaluations;
  per_lane<int> newton_iterations;
};

/// Where one chain's transition stands between two Gram factorisations (the phases of
/// ChmcMachine::begin_transition / resume_transition). Trivially copyable: the batched
/// factorisation keeps one per chain in memory between launches.
template <class T>
struct ChmcProgress {
  ChmcOutcome<T> out;
  T initial_energy;         ///< H at the start of the trajectory
  T potential;              ///< φ at the proposal after the last gradient evaluation
  int current;              ///< the factor at the proposal u (0 or 1)
  int pending;              ///< the factor whose Gram matrix awaits factorisation
  lane_mask_t<T> formed;    ///< the pending factor's form() succeeded
  lane_mask_t<T> finished;  ///< `out` is final (per lane: the lane's transition has ended)
};

/// The per-chain machinery of constrained HMC for one generator (a bundle of views, built
/// inside the kernel or the OpenMP loop) and the team of lanes that runs it.
template <class Generator, class T, class Team = SerialTeam>
class ChmcMachine {
 public:
  using Factor = typename constraint_factor_for<Generator, T>::type;
  using Lanes = LaneOps<T>;
  using Mask = lane_mask_t<T>;
  using Scalar = typename Lanes::scalar;  ///< one lane's value type

  MYRIAD_HD ChmcMachine(const Generator& g, const ChmcChain<T>& chain, const Team& team = Team{})
      : g_(g),
        c_(chain),
        team_(team),
        layout_(chmc_layout<Generator, T>(g, team.size(), chain.gram != nullptr)) {
    n_ = layout_.n;
    m_ = layout_.m;
    for (int w = 0; w < 2; ++w) {
      if constexpr (generator_gram_structure<Generator> == GramStructure::dense) {
        if (layout_.external_gram) {
          const MatrixView<T> gram{c_.gram + w * c_.gram_step, m_, m_, 1, m_};
          factor_[w] = Factor::at(c_.work, layout_.factor(w), m_, n_, layout_.k, &gram);
          continue;
        }
      }
      factor_[w] = Factor::at(c_.work, layout_.factor(w), m_, n_, layout_.k);
    }
    dual_jacobian_ = c_.dual_work.matrix(0, layout_.dual_jacobian ? m_ : 0, n_);
    // This lane's output vectors (lane 0's when the layout has one set).
    const int output_lane = team.rank() < layout_.output_lanes ? team.rank() : 0;
    dual_outputs_ = c_.dual_work.vector(layout_.dual_outputs(output_lane), m_);
    nested_outputs_ = c_.nested_work.vector(layout_.nested_outputs(output_lane), m_);
  }

  /// Evaluates J, the Gram factor, φ and ∇φ at the chain's position (after initialisation).
  /// Returns a ChainStatus (kStatusOk on success). One chain only.
  MYRIAD_HD std::uint32_t evaluate_current() {
    static_assert(Lanes::width == 1, "chains are placed on the manifold one at a time");
    Factor& f = factor_[0];
    if (!f.evaluate(g_, c_.position, dual_outputs_, team_)) return kStatusCholeskyFailure;
    T potential = T(0);
    const bool finite = potential_and_gradient(c_.position, f, potential, c_.gradient);
    if (team_.rank() == 0) *c_.potential = potential;
    team_.sync();
    return finite ? kStatusOk : kStatusNonFinite;
  }

  /// One transition at `iteration` (keys the momentum and accept draws): the phases below run
  /// back to back, each Gram matrix factored in place by the chain's own team.
  /// With T a batch, rng holds the lanes' streams (LaneStreams, detail/simd_lanes.hpp) and
  /// step.step_size may differ between lanes (each chain's step back-off).
  template <class Rng>
  MYRIAD_HD ChmcOutcome<T> transition(const Rng& rng, std::uint32_t iteration,
                                      const ChmcStep<T>& step) {
    ChmcProgress<T> progress;
    begin_transition(progress);
    for (int phase = 0;; ++phase) {
      const Mask factored = factor_[progress.pending].factor(team_);
      if (!resume_transition(progress, phase, rng, iteration, step, factored)) return progress.out;
    }
  }

  // The transition in phases (the batched factorisation of DESIGN.md rule 6(c)). A trajectory
  // needs the Gram matrix factored at its start and at the end of each of its N_s · N_g inner
  // steps, and nothing between two such points needs another; so it splits into 1 + N_s · N_g
  // phases, the same for every chain of an iteration (N_s and N_g are shared). A phase starts
  // with a factor just factored and ends with the next Gram matrix formed (form()), whose
  // factorisation, by this team (transition()) or by a batched library call across all chains
  // between two launches, starts the next phase. The progress record carries the scalars across.

  /// Phase start: J and the Gram matrix at the chain's position into factor 0.
  MYRIAD_HD void begin_transition(ChmcProgress<T>& progress) {
    progress.out = ChmcOutcome<T>{T(0), Mask(false), {}, {}, {}};
    progress.initial_energy = T(0);
    progress.potential = T(0);
    progress.current = 0;
    progress.pending = 0;
    progress.finished = Mask(false);
    // J and L at the start point: recomputed rather than cached across transitions (one
    // Jacobian per transition against N_s·N_g per trajectory).
    progress.formed = factor_[0].form(g_, c_.position, dual_outputs_, team_);
  }

  /// Phase `phase` (0 … N_s · N_g) of the transition, after the pending factor's Gram matrix was
  /// factored (`factored`: its Cholesky succeeded). Returns true when it has formed the next Gram
  /// matrix (progress.pending names its factor) and false when the transition has ended, with
  /// progress.out its outcome (a finished transition stays finished). In lanes: true while any
  /// lane's transition goes on, `factored` and progress.finished per lane.
  template <class Rng>
  MYRIAD_HD bool resume_transition(ChmcProgress<T>& progress, int phase, const Rng& rng,
                                   std::uint32_t iteration, const ChmcStep<T>& step,
                                   Mask factored) {
    if (Lanes::all(progress.finished)) return false;
    ChmcOutcome<T>& out = progress.out;
    if (!fail(progress, !(progress.formed && factored), kStatusCholeskyFailure)) return false;
    ChainVector<T> u = c_.work.vector(layout_.proposal(), n_);
    ChainVector<T> p = c_.work.vector(layout_.momentum(), n_);
    ChainVector<T> grad = c_.work.vector(layout_.proposal_gradient(), n_);
    const int lane = team_.rank(), lanes = team_.size();
    const T h = step.step_size / T(step.inner_steps);
    int& current = progress.current;

    if (phase == 0) {
      fill_normal<Scalar>(team_, rng, iteration, Purpose::momentum, p, n_);
      project_momentum(p, factor_[current]);
      progress.initial_energy = *c_.potential + T(0.5) * linalg::dot(p, p, n_);
      team_.sync();  // every lane has read all of p before kick() changes it
      for (int i = lane; i < n_; i += lanes) {
        u[i] = c_.position[i];
        grad[i] = c_.gradient[i];
      }
      kick(p, grad, T(0.5) * step.step_size, factor_[current]);
    } else {
      // Inner step phase − 1 ends with the factor just factored at its end point.
      if (!finish_geodesic_step(progress, u, p, h, step)) return false;
      current = 1 - current;
      if (phase % step.inner_steps == 0) {  // the end of outer step s: a full kick
        const int s = phase / step.inner_steps - 1;
        const Mask finite = potential_and_gradient(u, factor_[current], progress.potential, grad);
        Lanes::add_where(out.gradient_evaluations, !progress.finished, 1);
        if (!fail(progress, !finite, kStatusNonFinite)) return false;
        kick(p, grad, s + 1 < step.steps ? step.step_size : T(0.5) * step.step_size,
             factor_[current]);
      }
    }
    if (phase < step.steps * step.inner_steps) {
      // Inner step `phase` up to the Gram matrix at its end point.
      if (!start_geodesic_step(progress, u, p, h, step)) return false;
      progress.pending = 1 - current;
      progress.formed = factor_[progress.pending].form(g_, c_.work.vector(layout_.iterate(), n_),
                                                       dual_outputs_, team_);
      return true;
    }

    // project_momentum ended with a barrier: every lane reads the whole of p.
    const T final_energy = progress.potential + T(0.5) * linalg::dot(p, p, n_);
    const T log_accept_ratio = progress.initial_energy - final_energy;
    if (!fail(progress, !myriad::isfinite(log_accept_ratio), kStatusNonFinite)) return false;
    const Mask running = !progress.finished;
    out.accept_prob = Lanes::select(
        running, Lanes::select(log_accept_ratio >= T(0), T(1), myriad::exp(log_accept_ratio)),
        out.accept_prob);
    const T uniform = rng.template uniform<Scalar>(iteration, Purpose::accept, 0);
    out.accepted = running && myriad::log(uniform) < log_accept_ratio;
    if (Lanes::any(out.accepted)) {
      for (int i = lane; i < n_; i += lanes) {
        c_.position[i] = Lanes::select(out.accepted, u[i], c_.position[i]);
        c_.gradient[i] = Lanes::select(out.accepted, grad[i], c_.gradient[i]);
      }
      if (lane == 0) *c_.potential = Lanes::select(out.accepted, progress.potential, *c_.potential);
      team_.sync();
    }
    progress.finished = Mask(true);  // the running lanes end with kStatusOk
    return false;
  }

  /// p ← (I − Jᵀ G⁻¹ J) p: the orthogonal projection onto the tangent space (§5).
  template <class Vec>
  MYRIAD_HD void project_momentum(Vec& p, const Factor& f) {
    ChainVector<T> w = c_.work.vector(layout_.residual(), m_);
    ChainVector<T> delta = c_.work.vector(layout_.update(), n_);
    f.apply(p, w, team_);
    f.gram_solve(w, team_);
    f.apply_transpose(w, delta, team_);
    for (int i = team_.rank(); i < n_; i += team_.size()) p[i] -= delta[i];
    team_.sync();
  }

 private:
  /// Ends the transition of the running lanes in `failed` with `status` (one chain: ends it when
  /// `failed`). Returns whether any lane's transition goes on.
  MYRIAD_HD static bool fail(ChmcProgress<T>& progress, Mask failed, std::uint32_t status) {
    Lanes::assign_where(progress.out.status, failed && !progress.finished, status);
    progress.finished = progress.finished || failed;
    return !Lanes::all(progress.finished);
  }

  /// Symmetric quasi-Newton projection of v onto the manifold along range(Jᵀ) of the frozen
  /// factor f (§4): v ← v − Jᵀ G⁻¹ (g_x(v) − x̄) until ‖r‖∞ < constraint_tol and the next
  /// update ‖Δ‖∞ < position_tol (returned without applying it, as Mici does). Projects the lanes
  /// whose transition goes on and ends those whose projection fails, with the projection's
  /// status or, if not kStatusOk, `failure`; returns whether any lane goes on.
  template <class Vec>
  MYRIAD_HD bool project_position(ChmcProgress<T>& progress, Vec& v, const Factor& f,
                                  const ChmcStep<T>& step, std::uint32_t failure = kStatusOk) {
    ChainVector<T> r = c_.work.vector(layout_.residual(), m_);
    ChainVector<T> delta = c_.work.vector(layout_.update(), n_);
    const auto end = [&](Mask failed, std::uint32_t status) {
      return fail(progress, failed, failure != kStatusOk ? failure : status);
    };
    Mask iterating = !progress.finished;  // the lanes not yet converged
    for (int it = 0; it < step.max_iterations; ++it) {
      Lanes::add_where(progress.out.newton_iterations, iterating, 1);
      on_lane_zero(team_, [&] {
        g_.generate(v, r);
        for (int i = 0; i < m_; ++i) r[i] -= T(g_.observed(i));
      });
      // Every lane scans the whole residual: the same norm, so the same branch, in every lane.
      T r_norm = T(0);
      Mask finite(true);
      for (int i = 0; i < m_; ++i) {
        finite = finite && myriad::isfinite(r[i]);
        const T a = myriad::fabs(r[i]);
        r_norm = Lanes::select(r_norm > a, r_norm, a);
      }
      if (!end(iterating && !finite, kStatusNonFinite)) return false;
      iterating = iterating && finite;
      const Mask divergent = iterating && r_norm > step.divergence_tol;
      if (!end(divergent, kStatusDivergent)) return false;
      iterating = iterating && !divergent;
      if (!Lanes::any(iterating)) return true;
      f.gram_solve(r, team_);
      f.apply_transpose(r, delta, team_);
      const T delta_norm = linalg::max_abs(delta, n_);
      iterating = iterating && !(r_norm < step.constraint_tol && delta_norm < step.position_tol);
      if (!Lanes::any(iterating)) return true;
      for (int i = team_.rank(); i < n_; i += team_.size())
        v[i] = Lanes::select(iterating, v[i] - delta[i], v[i]);
    }
    return end(iterating, kStatusNotConverged);
  }

  /// p ← P(p − t ∇φ).
  template <class Vec, class Grad>
  MYRIAD_HD void kick(Vec& p, const Grad& grad, T t, const Factor& f) {
    for (int i = team_.rank(); i < n_; i += team_.size()) p[i] -= t * grad[i];
    project_momentum(p, f);
  }

  // One inner step of length h from u with the factor `current` at u (§3, §6, GEOSTEP of §13),
  // in two halves around the factorisation at the new point: start_geodesic_step projects
  // u + h p forward into the iterate v (the caller then forms J and G at v in the other
  // factor); finish_geodesic_step, with that factor factored, takes the RATTLE momentum and
  // checks the reverse step. On success u and p hold the new point and tangent momentum.

  /// start ← u, v ← u + h p, then v projected onto the manifold with the factor at u. Returns
  /// whether any lane goes on.
  template <class Vec>
  MYRIAD_HD bool start_geodesic_step(ChmcProgress<T>& progress, const Vec& u, const Vec& p, T h,
                                     const ChmcStep<T>& step) {
    ChainVector<T> start = c_.work.vector(layout_.start(), n_);
    ChainVector<T> v = c_.work.vector(layout_.iterate(), n_);
    // Every element below is read and written by its own lane, except where a barrier
    // intervenes (the projections and factor operations fence themselves). The first barrier
    // waits for every lane to finish the previous sub-step's reading of all of v and start.
    team_.sync();
    for (int i = team_.rank(); i < n_; i += team_.size()) {
      start[i] = u[i];
      v[i] = u[i] + h * p[i];
    }
    return project_position(progress, v, factor_[progress.current], step);
  }

  /// u ← v, p ← P(v − start)/h at v (the other factor), then the reverse sub-step from
  /// (u, −p) must return to start (§6). Returns whether any lane goes on.
  template <class Vec>
  MYRIAD_HD bool finish_geodesic_step(ChmcProgress<T>& progress, Vec& u, Vec& p, T h,
                                      const ChmcStep<T>& step) {
    ChainVector<T> start = c_.work.vector(layout_.start(), n_);
    ChainVector<T> v = c_.work.vector(layout_.iterate(), n_);
    const int lane = team_.rank(), lanes = team_.size();
    Factor& next = factor_[1 - progress.current];
    // RATTLE momentum (u' − u)/h, projected at u'. (The factorisation ended with a barrier.)
    for (int i = lane; i < n_; i += lanes) {
      u[i] = v[i];
      p[i] = (v[i] - start[i]) / h;
    }
    project_momentum(p, next);
    // Reverse sub-step from (u', −p') must return to u (§6).
    for (int i = lane; i < n_; i += lanes) v[i] = u[i] - h * p[i];
    if (!project_position(progress, v, next, step, kStatusNotReversible)) return false;
    // project_position's last operation ended with a barrier and did not change v since: every
    // lane reads the whole of v and start.
    T distance = T(0);
    for (int i = 0; i < n_; ++i) {
      const T d = myriad::fabs(v[i] - start[i]);
      distance = Lanes::select(distance > d, distance, d);
    }
    return fail(progress, distance > step.reverse_tol, kStatusNotReversible);
  }

  /// φ(u) = −log ρ(u) + ½ log|G| and ∇φ with the factor f evaluated at u. Every lane gets φ.
  /// Returns whether φ and ∇φ are finite (per lane).
  template <class Vec, class Grad>
  MYRIAD_HD Mask potential_and_gradient(const Vec& u, const Factor& f, T& potential, Grad& grad) {
    const T log_prior = on_lane_zero(team_, [&] {
      T value;
      if constexpr (generator_has_log_prior_gradient<Generator>) {
        value = g_.log_prior_gradient(u, grad);
      } else {
        value = gradient_by_duals(PriorAsDensity{&g_}, u, grad, n_);
      }
      for (int i = 0; i < n_; ++i) grad[i] = -grad[i];
      return value;
    });
    MatrixView<T> c = c_.work.matrix(layout_.c_matrix(), m_, n_);
    f.add_half_log_det_gradient(
        g_, u, grad, c, dual_jacobian_, dual_outputs_, nested_outputs_,
        c_.work.vector(layout_.jacobian_vjp_work(), static_cast<int>(layout_.vjp_size)), team_);
    potential = -log_prior + f.half_log_det(team_);
    Mask finite = myriad::isfinite(potential);
    for (int i = 0; i < n_ && Lanes::any(finite); ++i) finite = finite && myriad::isfinite(grad[i]);
    return finite;
  }

  /// The prior as a density model, for gradient_by_duals.
  struct PriorAsDensity {
    const Generator* g;
    template <class Vec>
    MYRIAD_HD auto log_density(const Vec& u) const {
      return g->log_prior(u);
    }
  };

  Generator g_;  // by value: a small struct of views, never dangling
  ChmcChain<T> c_;
  Team team_;
  ChmcLayout layout_;
  int n_, m_;
  Factor factor_[2];
  MatrixView<Dual<T>> dual_jacobian_;
  ChainVector<Dual<T>> dual_outputs_;
  ChainVector<Dual<Dual<T>>> nested_outputs_;
};

/// Places a chain on the manifold with the generator's initialize() (retried up to max_tries
/// attempts keyed by the attempt number, each on lane 0) and evaluates φ and ∇φ there. False if
/// no attempt succeeded.
template <class Generator, class T, class Team = SerialTeam>
MYRIAD_HD bool initialize_chmc_chain(const Generator& g, const ChmcChain<T>& chain,
                                     const RandomStream& rng, int max_tries,
                                     const Team& team = Team{}) {
  static_assert(generator_has_initialize<Generator>,
                "constrained HMC starts each chain on the manifold g_x(u) = x_bar with the "
                "generator's initialize(rng, attempt, u) member, which this generator lacks "
                "(model/generator.hpp)");
  if constexpr (generator_has_initialize<Generator>) {  // else only the message above
    ChmcMachine<Generator, T, Team> machine(g, chain, team);
    for (int attempt = 0; attempt < max_tries; ++attempt) {
      const bool placed = on_lane_zero(team, [&] {
        ChainVector<T> u = chain.position;
        return g.initialize(rng, static_cast<std::uint32_t>(attempt), u);
      });
      if (!placed) continue;
      if (machine.evaluate_current() == kStatusOk) return true;
    }
  }
  return false;
}

}  // namespace myriad
