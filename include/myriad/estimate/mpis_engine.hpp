#pragma once
// The massively parallel importance-sampling engine (Bowyer, Heap & Aitchison 2024; mpis.md):
// for a plated model and a contraction plan it draws K proposal particles per latent instance,
// evaluates the log-factor tensors, contracts them to log P_MP per run, runs the explicit
// backward ("outside") pass for marginals and moments, and draws exact posterior index samples
// in reverse elimination order. It also runs the global importance-sampling baseline.
//
// The engine composes one part per concept, each holding its own arrays and given the rest
// explicitly: the proposals (estimate/mpis_proposals.hpp), factor evaluation
// (mpis_factors.hpp), the contraction and its outside pass (mpis_contraction.hpp), the
// timeseries tree (mpis_timeseries.hpp) and index sampling (mpis_sampling.hpp). What is left
// here is the walk over the plan's operations, window by window for a chunked plate
// (mpis_layout.hpp), and the results.
//
// Written once against a parallel policy (backend/cpu_parallel.hpp, kernels/cuda_parallel.cuh):
// every array lives where the policy computes and every loop is policy.for_each over a functor
// of estimate/mpis_elements.hpp. Host code reads only geometry, never tensor values, until the
// results are downloaded.
//
// Randomness (DESIGN.md rule 2): run r of a batch uses the Philox stream (seed, first_run + r),
// so run r's results do not depend on how many runs share a batch, nor on the backend.

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_contraction.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_factors.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/estimate/mpis_proposals.hpp"
#include "myriad/estimate/mpis_sampling.hpp"
#include "myriad/estimate/mpis_timeseries.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

/// What an engine computes besides the plan: the run streams and plate chunking.
struct MpisEngineOptions {
  std::uint64_t seed = 1;
  std::int64_t first_run = 0;  ///< Philox stream of run r is (seed, first_run + r)
  MpisChunking chunking;       ///< a top-level plate computed a window of elements at a time
  ContractionPath contraction = ContractionPath::automatic;  ///< read by the CUDA policy
};

template <class Model, class Parallel>
class MpisEngine {
 public:
  template <class T>
  using Array = typename Parallel::template Array<T>;

  /// `plan` must have been made from `structure`. Nothing is computed until asked.
  MpisEngine(const Model& model, PlatedStructure structure, MpisPlan plan, Parallel parallel,
             MpisEngineOptions options)
      : model_(model),
        s_(std::move(structure)),
        plan_(std::move(plan)),
        par_(std::move(parallel)),
        streams_{options.seed, options.first_run},
        runs_(plan_.runs),
        proposals_(model_, streams_, runs_),
        tensors_(plan_),
        timeseries_(par_, plan_) {
    MYRIAD_EXPECTS(plan_.latent_factor.size() == static_cast<std::size_t>(s_.latent_count()),
                   "MpisEngine: the plan was made for another structure");
    windows_ = MpisWindows(s_, plan_, options.chunking);
  }

  MpisEngine(const Model& model, PlatedStructure structure, MpisPlan plan, Parallel parallel,
             std::uint64_t seed, std::int64_t first_run = 0)
      : MpisEngine(model, std::move(structure), std::move(plan), std::move(parallel),
                   MpisEngineOptions{seed, first_run, {}, ContractionPath::automatic}) {}

  const MpisPlan& plan() const { return plan_; }
  const PlatedStructure& structure() const { return s_; }
  /// Log-factor entries that came out NaN or +inf and were set to −inf (zero weight).
  std::int64_t nonfinite_entries() const { return nonfinite_; }

  // ----------------------------------------------------------------------------------------
  // Forward pass

  /// Draws K particles of every latent instance from its proposal, parents first, with the
  /// permutation sampler for proposal parents (mpis.md §2.1), and evaluates log Q_MP.
  void sample_particles() { proposals_.draw_mixture(par_, s_, plan_.k); }

  /// Fills ℓ_g and λ_o (mpis.md §3.1); NaN or +inf entries become −inf and are counted. With
  /// chunking, the factors of the chunked subtree are filled window by window in contract().
  void evaluate_factors() {
    nonfinite_ = 0;
    recomputing_ = false;
    evaluate_factors_where(false);
  }

  /// Runs the plan's operations (mpis.md §3.2): log P_MP of each run in the result tensor.
  /// A chunked plate's subtree runs window by window, its plate sum accumulated.
  void contract() {
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      if (windows_.active() && static_cast<int>(i) == windows_.first_op()) {
        for (std::int64_t w = 0; w < windows_.count(); ++w) {
          forward_window(w);
          run_forward_op(static_cast<std::size_t>(windows_.sum_op()), /*accumulate=*/w > 0);
          release_window();
        }
        i = static_cast<std::size_t>(windows_.sum_op());
        continue;
      }
      run_forward_op(i, false);
    }
  }

  /// sample_particles, evaluate_factors and contract.
  void forward() {
    sample_particles();
    evaluate_factors();
    contract();
  }

  /// log P_MP of each run (mpis.md §2.2): E[P_MP] = P(x), so E[log P_MP] ≤ log P(x).
  std::vector<double> log_marginal() const {
    expect_forward();
    return par_.download(tensors_.value(plan_.result).owned);
  }

  // ----------------------------------------------------------------------------------------
  // Backward pass (mpis.md §5): μ(X) = X + O(X) − log P, the log joint marginal of X's scope

  void backward() {
    expect_forward();
    recomputing_ = true;  // windows recomputed here were counted by contract()
    tensors_.start_backward(par_, layout());
    window_weights_.clear();
    window_weights_.resize(static_cast<std::size_t>(s_.latent_count()));
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
      if (windows_.active() && static_cast<int>(i) == windows_.sum_op()) {
        // Recompute each window's subtree, then walk it back from the accumulated sum's μ;
        // the marginal weights of its latents are kept, its tensors freed.
        tensors_.hold_outside(plan_.ops[i].output);  // every window reads it
        for (std::int64_t w = 0; w < windows_.count(); ++w) {
          forward_window(w);
          for (std::size_t j = i + 1; j-- > static_cast<std::size_t>(windows_.first_op());)
            run_backward_op(j);
          keep_window_weights();
          release_window();
        }
        tensors_.drop_held_outside();
        i = static_cast<std::size_t>(windows_.first_op());
        continue;
      }
      run_backward_op(i);
    }
  }

  /// log P_z(k_g, parents' k, lag) per run and instance: μ(ℓ_g), laid out as ℓ_g
  /// (plan().tensors[plan().latent_factor[g]]). Needs backward().
  std::vector<double> log_joint_marginal(int g) const {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    MYRIAD_EXPECTS(!layout().in_window(id), "MpisEngine: the joint marginals of '",
                   s_.latent_decl(g).name, "' are not kept: its plate is computed in chunks");
    MYRIAD_EXPECTS(tensors_.outside(id).view.data != nullptr, "MpisEngine: run backward() first");
    return par_.download(tensors_.outside(id).owned);
  }

  /// Log marginal weights log w_g[run][instance][k] = log P_z(k_g = k) (mpis.md §4–§5), summed
  /// over the parents' indices of μ(ℓ_g); Σ_k w = 1 per instance. Needs backward().
  std::vector<double> log_marginal_weights(int g) {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    if (layout().in_window(id)) {
      MYRIAD_EXPECTS(!window_weights_.at(static_cast<std::size_t>(g)).empty(),
                     "MpisEngine: run backward() first");
      return par_.download(window_weights_[g]);
    }
    MYRIAD_EXPECTS(tensors_.outside(id).view.data != nullptr, "MpisEngine: run backward() first");
    Array<double> weights = par_.template allocate<double>(marginal_shape(s_, plan_, g).size);
    tensors_.marginal_weights_into(par_, layout(), g, weights.data(), nullptr);
    return par_.download(weights);
  }

  /// Particles of latent g, [run][instance][k][event].
  std::vector<double> particles(int g) const { return par_.download(proposals_.particles(g)); }

  // ----------------------------------------------------------------------------------------
  // Exact posterior index sampling (mpis.md §6)

  /// Draws `draws` index tuples per run from P_z(k) in reverse elimination order. Needs the
  /// forward pass (not the backward one). A run whose log P̂ is −inf gets indices −1.
  void sample_indices(std::int64_t draws) {
    MYRIAD_EXPECTS(draws >= 1, "MP IS: the number of posterior draws must be positive, got ",
                   draws);
    expect_forward();
    recomputing_ = true;
    indices_.start(par_, layout(), draws);
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
      if (windows_.active() && static_cast<int>(i) == windows_.sum_op()) {
        for (std::int64_t w = 0; w < windows_.count(); ++w) {
          forward_window(w);
          for (std::size_t j = i; j-- > static_cast<std::size_t>(windows_.first_op());)
            sample_op(j);
          release_window();
        }
        i = static_cast<std::size_t>(windows_.first_op());
        continue;
      }
      sample_op(i);
    }
  }

  /// The sampled index of latent g per draw, run and instance: [draw][run][instance]; −1 in a
  /// run whose log P̂ is −inf. Needs sample_indices().
  std::vector<std::int32_t> sampled_indices(int g) const {
    MYRIAD_EXPECTS(indices_.draws() > 0, "MpisEngine: run sample_indices() first");
    return par_.download(indices_.of(plan_.latent_var.at(static_cast<std::size_t>(g))));
  }

  /// The policy's memory: bytes of every array the engine holds now, and the peak.
  const MemoryTracker& memory() const { return par_.memory(); }

  // ----------------------------------------------------------------------------------------
  // Global importance sampling (mpis.md §1): K joint samples, every latent instance of joint
  // sample k drawn from its proposal given its proposal parents' particle k.

  /// log r_k = log P(x, z^k) − log Q(z^k) of particles [first, first + count) for every run:
  /// [run][particle]. The particles drawn are the same for any split into calls (Philox keyed
  /// by the particle number), and the first K of them are MP IS's particles at K = 1 … K.
  std::vector<double> global_log_weights(std::int64_t first, std::int64_t count) {
    MYRIAD_EXPECTS(count >= 1 && first >= 0, "MP IS: bad global importance-sampling range");
    proposals_.draw_joint(par_, s_, first, count);
    std::vector<double> host =
        par_.download(myriad::global_log_weights(par_, model_, s_, proposals_, runs_, count));
    for (double& x : host)
      if (std::isnan(x) || x == INFINITY) {
        x = -INFINITY;
        ++nonfinite_;
      }
    return host;
  }

 private:
  MpisLayout layout() const { return MpisLayout{s_, plan_, windows_}; }

  void expect_forward() const {
    MYRIAD_EXPECTS(!tensors_.value(plan_.result).owned.empty(), "MpisEngine: run forward() first");
  }

  // --- the forward, backward and sampling step of one operation ---------------------------

  void run_forward_op(std::size_t i, bool accumulate) {
    if (plan_.ops[i].kind == MpisOpKind::chain)
      timeseries_.forward(par_, layout(), tensors_, i);
    else
      tensors_.forward(par_, layout(), plan_.ops[i], accumulate);
  }

  void run_backward_op(std::size_t i) {
    const MpisOp& op = plan_.ops[i];
    if (op.kind == MpisOpKind::chain)
      timeseries_.backward(par_, layout(), tensors_, i);
    else
      tensors_.backward(par_, layout(), op);
    // A plate sum's output μ stays: its input's μ is a broadcast view of it, released with
    // that input once the input's own consumer has run.
    if (op.kind != MpisOpKind::plate_sum) tensors_.release_outside(op.output);
  }

  void sample_op(std::size_t i) {
    const MpisOp& op = plan_.ops[i];
    if (op.kind == MpisOpKind::eliminate && !op.eliminate.empty())
      indices_.sample_elimination(par_, layout(), tensors_, streams_, i);
    else if (op.kind == MpisOpKind::chain)
      timeseries_.sample(par_, layout(), streams_, indices_, i);
  }

  /// Fills the factors of the latents and observations inside (or outside) the chunked
  /// subtree; without chunking, "outside" is everything. Entries scrubbed in a window that the
  /// backward pass or the sampler recomputes were counted by contract().
  void evaluate_factors_where(bool inside) {
    const MpisLayout at = layout();
    for (int g = 0; g < s_.latent_count(); ++g)
      if (at.in_window(plan_.latent_factor[g]) == inside)
        count_nonfinite(evaluate_latent_factor(par_, model_, at, proposals_, tensors_, g));
    for (int o = 0; o < s_.observed_count(); ++o)
      if (at.in_window(plan_.observed_factor[o]) == inside)
        count_nonfinite(evaluate_observed_factor(par_, model_, at, proposals_, tensors_, o));
  }
  void count_nonfinite(std::int64_t scrubbed) {
    if (!recomputing_) nonfinite_ += scrubbed;
  }

  // --- plate chunking (mpis.md §3.3) ------------------------------------------------------

  /// Window w's factors and forward operations (all but the plate's own sum).
  void forward_window(std::int64_t w) {
    windows_.select(w);
    evaluate_factors_where(true);
    for (int i = windows_.first_op(); i < windows_.sum_op(); ++i)
      run_forward_op(static_cast<std::size_t>(i), false);
  }

  /// Frees the chunked subtree's tensors, outside tensors and chain levels.
  void release_window() {
    tensors_.release_window(layout());
    timeseries_.release(windows_.first_op(), windows_.sum_op());
  }

  /// The marginal weights of the chunked subtree's latents for the current window, written
  /// into their place in the kept full arrays.
  void keep_window_weights() {
    const MpisLayout at = layout();
    for (int g = 0; g < s_.latent_count(); ++g) {
      if (!at.in_window(plan_.latent_factor[g])) continue;
      const MpisMarginalShape full = marginal_shape(s_, plan_, g);
      if (window_weights_[g].empty())
        window_weights_[g] = par_.template allocate<double>(full.size);
      LogTensorView destination{window_weights_[g].data(), full.vars, full.extents,
                                row_major_strides(full.extents)};
      destination = destination.slice(at.window_var(), windows_.offset(), 1, windows_.size());
      tensors_.marginal_weights_into(par_, at, g, const_cast<double*>(destination.data),
                                     &destination);
    }
  }

  Model model_;
  PlatedStructure s_;
  MpisPlan plan_;
  Parallel par_;
  mpis_elements::RunStreams streams_;
  std::int64_t runs_;
  MpisWindows windows_;
  MpisProposals<Model, Parallel> proposals_;
  MpisContraction<Parallel> tensors_;
  MpisTimeseries<Parallel> timeseries_;
  MpisIndexDraws<Parallel> indices_;
  std::vector<Array<double>> window_weights_;  ///< chunked latents' marginal weights, kept
  std::int64_t nonfinite_ = 0;
  bool recomputing_ = false;  ///< a window recomputed by the backward pass or the sampler
};

}  // namespace myriad
