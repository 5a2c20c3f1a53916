#pragma once
// The massively parallel importance-sampling engine (Bowyer, Heap & Aitchison 2024; mpis.md):
// for a plated model and a contraction plan it draws K proposal particles per latent instance,
// evaluates the log-factor tensors, contracts them to log P_MP per run, runs the explicit
// backward ("outside") pass for marginals and moments, and draws exact posterior index samples
// in reverse elimination order. It also runs the global importance-sampling baseline.
//
// Written once against a parallel policy (backend/cpu_parallel.hpp, kernels/cuda_parallel.cuh):
// every array lives where the policy computes and every loop is policy.for_each over a functor
// of estimate/mpis_elements.hpp. Host code reads only geometry, never tensor values, until the
// results are downloaded.
//
// Randomness (DESIGN.md rule 2): run r of a batch uses the Philox stream (seed, first_run + r),
// so run r's results do not depend on how many runs share a batch, nor on the backend.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_plan.hpp"
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
        seed_(options.seed),
        first_run_(options.first_run),
        chunking_(options.chunking),
        runs_(plan_.runs),
        k_(plan_.k) {
    MYRIAD_EXPECTS(plan_.latent_factor.size() == static_cast<std::size_t>(s_.latent_count()),
                   "MpisEngine: the plan was made for another structure");
    validate_chunking(s_, chunking_);
    tensors_.resize(plan_.tensors.size());
    mu_.resize(plan_.tensors.size());
    chains_.resize(plan_.ops.size());
    scratch_var_ = static_cast<int>(plan_.var_extent.size());
    minus_log_k_ = par_.template allocate<double>(1);
    const double value = -std::log(static_cast<double>(k_));
    par_.upload(minus_log_k_, &value, 1);
    set_up_chunking();
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
  void sample_particles() {
    particles_.clear();
    log_q_.clear();
    perms_.clear();
    for (int g = 0; g < s_.latent_count(); ++g) {
      const mpis_elements::GroupView self = allocate_group(g, k_);
      perms_.emplace_back();
      mpis_elements::ProposalParents qa = proposal_parents(g, self.instances);
      for (int slot = 0; slot < qa.slots; ++slot) {
        perms_[g].push_back(par_.template allocate<std::int32_t>(runs_ * self.instances * k_));
        mpis_elements::PermutationSampler permute;
        permute.perm = perms_[g].back().data();
        permute.instances = self.instances;
        permute.k = k_;
        permute.uniforms = {streams(), kMpisPermutationPurpose +
                                           64u * static_cast<std::uint32_t>(g) +
                                           static_cast<std::uint32_t>(slot)};
        par_.for_each(runs_ * self.instances, permute, 4 * k_);
        qa.perm[slot] = perms_[g].back().data();
      }
      draw_particles(g, self, qa, 0);
      log_q_.push_back(par_.template allocate<double>(runs_ * self.instances * k_));
      mpis_elements::ProposalLogDensity<Model> density{model_, g, self, qa, log_q_.back().data()};
      par_.for_each(runs_ * self.instances * k_, density, kDensityWork * mixture_terms(qa));
    }
  }

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
      if (chunking_.active() && static_cast<int>(i) == window_first_op_) {
        for (std::int64_t w = 0; w < window_count(); ++w) {
          forward_window(w);
          run_forward_op(static_cast<std::size_t>(window_sum_op_), /*accumulate=*/w > 0);
          release_window();
        }
        i = static_cast<std::size_t>(window_sum_op_);
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
    MYRIAD_EXPECTS(!tensors_[plan_.result].owned.empty(), "MpisEngine: run forward() first");
    return par_.download(tensors_[plan_.result].owned);
  }

  // ----------------------------------------------------------------------------------------
  // Backward pass (mpis.md §5): μ(X) = X + O(X) − log P, the log joint marginal of X's scope

  void backward() {
    MYRIAD_EXPECTS(!tensors_[plan_.result].owned.empty(), "MpisEngine: run forward() first");
    recomputing_ = true;  // windows recomputed here were counted by contract()
    std::vector<double> zeros(static_cast<std::size_t>(runs_), 0.0);
    set_mu_owned(plan_.result, par_.template allocate<double>(runs_));
    par_.upload(mu_[plan_.result].owned, zeros.data(), runs_);
    window_weights_.clear();
    window_weights_.resize(static_cast<std::size_t>(s_.latent_count()));
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
      if (chunking_.active() && static_cast<int>(i) == window_sum_op_) {
        // Recompute each window's subtree, then walk it back from the accumulated sum's μ;
        // the marginal weights of its latents are kept, its tensors freed.
        const int sum_output = plan_.ops[i].output;
        kept_mu_ = sum_output;  // every window reads it
        for (std::int64_t w = 0; w < window_count(); ++w) {
          forward_window(w);
          for (std::size_t j = i + 1; j-- > static_cast<std::size_t>(window_first_op_);)
            run_backward_op(j);
          keep_window_weights();
          release_window();
        }
        kept_mu_ = -1;
        mu_[sum_output] = Tensor{};
        i = static_cast<std::size_t>(window_first_op_);
        continue;
      }
      run_backward_op(i);
    }
  }

  /// log P_z(k_g, parents' k, lag) per run and instance: μ(ℓ_g), laid out as ℓ_g
  /// (plan().tensors[plan().latent_factor[g]]). Needs backward().
  std::vector<double> log_joint_marginal(int g) const {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    MYRIAD_EXPECTS(!in_chunk(plan_, chunking_, id), "MpisEngine: the joint marginals of '",
                   s_.latent_decl(g).name, "' are not kept: its plate is computed in chunks");
    MYRIAD_EXPECTS(mu_[id].view.data != nullptr, "MpisEngine: run backward() first");
    return par_.download(mu_[id].owned);
  }

  /// Log marginal weights log w_g[run][instance][k] = log P_z(k_g = k) (mpis.md §4–§5), summed
  /// over the parents' indices of μ(ℓ_g); Σ_k w = 1 per instance. Needs backward().
  std::vector<double> log_marginal_weights(int g) {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    if (in_chunk(plan_, chunking_, id)) {
      MYRIAD_EXPECTS(!window_weights_.at(static_cast<std::size_t>(g)).empty(),
                     "MpisEngine: run backward() first");
      return par_.download(window_weights_[g]);
    }
    MYRIAD_EXPECTS(mu_[id].view.data != nullptr, "MpisEngine: run backward() first");
    Array<double> weights = par_.template allocate<double>(marginal_shape(g).size);
    marginal_weights_into(g, weights.data(), nullptr);
    return par_.download(weights);
  }

  /// Particles of latent g, [run][instance][k][event].
  std::vector<double> particles(int g) const {
    return par_.download(particles_.at(static_cast<std::size_t>(g)));
  }

  // ----------------------------------------------------------------------------------------
  // Exact posterior index sampling (mpis.md §6)

  /// Draws `draws` index tuples per run from P_z(k) in reverse elimination order. Needs the
  /// forward pass (not the backward one). A run whose log P̂ is −inf gets indices −1.
  void sample_indices(std::int64_t draws) {
    MYRIAD_EXPECTS(draws >= 1, "MP IS: the number of posterior draws must be positive, got ",
                   draws);
    MYRIAD_EXPECTS(!tensors_[plan_.result].owned.empty(), "MpisEngine: run forward() first");
    draws_ = draws;
    recomputing_ = true;
    index_.clear();
    index_.resize(plan_.var_extent.size());
    for (std::size_t v = 0; v < plan_.var_extent.size(); ++v)
      if (plan_.is_k_var(static_cast<int>(v)))
        index_[v] =
            par_.template allocate<std::int32_t>(draws * runs_ * s_.instances(plan_.var_plate[v]));
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
      if (chunking_.active() && static_cast<int>(i) == window_sum_op_) {
        for (std::int64_t w = 0; w < window_count(); ++w) {
          forward_window(w);
          for (std::size_t j = i; j-- > static_cast<std::size_t>(window_first_op_);)
            sample_op(j, draws);
          release_window();
        }
        i = static_cast<std::size_t>(window_first_op_);
        continue;
      }
      sample_op(i, draws);
    }
  }

  /// The sampled index of latent g per draw, run and instance: [draw][run][instance]; −1 in a
  /// run whose log P̂ is −inf. Needs sample_indices().
  std::vector<std::int32_t> sampled_indices(int g) const {
    MYRIAD_EXPECTS(draws_ > 0, "MpisEngine: run sample_indices() first");
    return par_.download(index_[plan_.latent_var.at(static_cast<std::size_t>(g))]);
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
    particles_.clear();
    log_q_.clear();
    perms_.clear();
    Array<double> log_r = par_.template allocate<double>(runs_ * count);
    std::vector<double> zeros(static_cast<std::size_t>(runs_ * count), 0.0);
    par_.upload(log_r, zeros.data(), runs_ * count);
    for (int g = 0; g < s_.latent_count(); ++g) {
      const mpis_elements::GroupView self = allocate_group(g, count);
      perms_.emplace_back();
      const mpis_elements::ProposalParents qa = proposal_parents(g, self.instances);
      draw_particles(g, self, qa, first);
      log_q_.push_back(par_.template allocate<double>(runs_ * self.instances * count));
      par_.for_each(
          runs_ * self.instances * count,
          mpis_elements::ProposalLogDensity<Model>{model_, g, self, qa, log_q_.back().data()},
          kDensityWork);
      const mpis_elements::GlobalLatentTerm<Model> term{latent_log_weight(g), log_r.data()};
      par_.for_each(runs_ * count, term, kDensityWork * self.instances);
    }
    for (int o = 0; o < s_.observed_count(); ++o) {
      const ObservedDecl& decl = s_.observed_decl(o);
      mpis_elements::GlobalObservedTerm<Model> term;
      term.model = model_;
      term.observed = o;
      term.parents = group_parents(-1, decl.parents, decl.plate);
      const std::vector<int> path = s_.path(decl.plate);
      term.depth = static_cast<int>(path.size());
      for (int d = 0; d < term.depth; ++d) term.plate_size[d] = s_.plate_decl(path[d]).size;
      term.instances = s_.instances(decl.plate);
      term.k = count;
      term.log_r = log_r.data();
      par_.for_each(runs_ * count, term, kDensityWork * term.instances);
    }
    std::vector<double> host = par_.download(log_r);
    for (double& x : host)
      if (std::isnan(x) || x == INFINITY) {
        x = -INFINITY;
        ++nonfinite_;
      }
    return host;
  }

 private:
  static constexpr std::int64_t kDensityWork = mpis_elements::kDensityWork;

  mpis_elements::RunStreams streams() const { return {seed_, first_run_}; }

  /// Terms of the mixture proposal's density per particle: K per proposal slot.
  std::int64_t mixture_terms(const mpis_elements::ProposalParents& qa) const {
    std::int64_t terms = 1;
    for (int s = 0; s < qa.slots; ++s)
      if (qa.perm[s]) terms *= k_;
    return terms;
  }

  struct Tensor {
    Array<double> owned;
    LogTensorView view;
    int source = -1;  ///< tensor whose owned array `view` reads (mu_ broadcasts share)
  };

  // --- the forward, backward and sampling step of one operation ---------------------------

  void run_forward_op(std::size_t i, bool accumulate) {
    const MpisOp& op = plan_.ops[i];
    std::vector<LogTensorView> inputs;
    for (int id : op.inputs) inputs.push_back(view(id));
    const std::vector<int>& out_vars = plan_.tensors[op.output].vars;
    if (op.kind == MpisOpKind::eliminate) {
      run_step(plan_log_sum_product(inputs, op.eliminate, &out_vars), allocate_tensor(op.output));
    } else if (op.kind == MpisOpKind::plate_sum) {
      const LogSumProductPlan step = plan_log_sum_product(inputs, op.eliminate, &out_vars);
      double* out = accumulate ? tensors_[op.output].owned.data() : allocate_tensor(op.output);
      par_.for_each(step.out_size, mpis_elements::PlateSumInto{step.element, out, accumulate},
                    step.element.elim_size);
    } else {
      chain_forward(i);
    }
  }

  void run_backward_op(std::size_t i) {
    const MpisOp& op = plan_.ops[i];
    if (op.kind == MpisOpKind::eliminate) {
      eliminate_backward(op);
    } else if (op.kind == MpisOpKind::plate_sum) {
      // μ(R)[s, n] = μ(R_out)[s]: a broadcast view, no copy.
      const int r = op.inputs[0];
      const LogTensorView out_mu = mu_[op.output].view;
      LogTensorView v;
      v.data = out_mu.data;
      v.vars = plan_.tensors[r].vars;
      v.extents = extents_of(r);
      for (int var : v.vars) v.strides.push_back(out_mu.stride_of(var));
      mu_[r].view = v;
      mu_[r].source = mu_[op.output].source;
    } else {
      chain_backward(i);
    }
    // A plate sum's output μ stays: its input's μ is a broadcast view of it, released with
    // that input once the input's own consumer has run.
    if (op.kind != MpisOpKind::plate_sum) release_mu(op.output);
  }

  void sample_op(std::size_t i, std::int64_t draws) {
    const MpisOp& op = plan_.ops[i];
    if (op.kind == MpisOpKind::eliminate && !op.eliminate.empty()) {
      std::vector<LogTensorView> inputs;
      for (int id : op.inputs) inputs.push_back(view(id));
      mpis_elements::IndexSampler sampler;
      sampler.element =
          plan_log_sum_product(inputs, op.eliminate, &plan_.tensors[op.output].vars).element;
      sampler.context = sampled_context(inputs, op.plate, plan_.tensors[op.output].vars);
      for (std::size_t a = 0; a < op.eliminate.size(); ++a)
        sampler.out[a] = index_[op.eliminate[a]].data();
      sampler.out_instances = s_.instances(op.plate);
      sampler.element_base = window_base(op.plate);
      sampler.out_element_base = sampler.element_base;
      sampler.uniforms = {streams(), kMpisIndexPurpose + 64u * static_cast<std::uint32_t>(i)};
      par_.for_each(draws * runs_ * sampler.context.elements, sampler,
                    3 * sampler.element.elim_size);
    } else if (op.kind == MpisOpKind::chain) {
      chain_sample(i, draws);
    }
  }

  // --- plate chunking (mpis.md §3.3) ------------------------------------------------------

  /// The operations of the chunked plate's subtree are contiguous in the plan (post-order):
  /// [window_first_op_, window_sum_op_], the last one the plate's own sum.
  void set_up_chunking() {
    if (!chunking_.active()) return;
    const int plate = chunking_.plate;
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const bool inside = s_.encloses(plate, plan_.ops[i].plate);
      if (inside && window_first_op_ < 0) window_first_op_ = static_cast<int>(i);
      if (plan_.ops[i].plate == plate && (plan_.ops[i].kind == MpisOpKind::plate_sum))
        window_sum_op_ = static_cast<int>(i);
    }
    MYRIAD_EXPECTS(window_first_op_ >= 0 && window_sum_op_ >= window_first_op_,
                   "MP IS: the plate to chunk ('", s_.plate_decl(plate).name,
                   "') has nothing to contract");
    for (int i = window_first_op_; i <= window_sum_op_; ++i)
      MYRIAD_EXPECTS(s_.encloses(plate, plan_.ops[static_cast<std::size_t>(i)].plate),
                     "MP IS: internal error: the chunked subtree's operations are not contiguous");
  }

  std::int64_t window_count() const {
    const std::int64_t size = s_.plate_decl(chunking_.plate).size;
    return (size + chunking_.size - 1) / chunking_.size;
  }

  /// Extents of tensor `id` now: the chunked plate's dim holds the current window.
  std::vector<std::int64_t> extents_of(int id) const {
    std::vector<std::int64_t> extents = plan_.tensors[id].extents;
    if (in_chunk(plan_, chunking_, id)) {
      const auto& vars = plan_.tensors[id].vars;
      const auto a =
          std::find(vars.begin(), vars.end(), plan_.plate_var[chunking_.plate]) - vars.begin();
      extents[static_cast<std::size_t>(a)] = window_size_;
    }
    return extents;
  }

  /// The global number of the current window's first instance of `plate`'s path (0 outside
  /// the chunked subtree): the chunked plate is outermost, so instances of a window are
  /// contiguous.
  std::int64_t window_base(int plate) const {
    if (!chunking_.active() || !s_.encloses(chunking_.plate, plate)) return 0;
    return window_offset_ * (s_.instances(plate) / s_.plate_decl(chunking_.plate).size);
  }

  /// Instances of `plate`'s path in the current window.
  std::int64_t window_instances(int plate) const {
    if (!chunking_.active() || !s_.encloses(chunking_.plate, plate)) return s_.instances(plate);
    return window_size_ * (s_.instances(plate) / s_.plate_decl(chunking_.plate).size);
  }

  /// Window w's factors and forward operations (all but the plate's own sum).
  void forward_window(std::int64_t w) {
    const std::int64_t size = s_.plate_decl(chunking_.plate).size;
    window_offset_ = w * chunking_.size;
    window_size_ = std::min(chunking_.size, size - window_offset_);
    evaluate_factors_where(true);
    for (int i = window_first_op_; i < window_sum_op_; ++i)
      run_forward_op(static_cast<std::size_t>(i), false);
  }

  /// Frees the chunked subtree's tensors, outside tensors and chain levels.
  void release_window() {
    for (std::size_t id = 0; id < tensors_.size(); ++id)
      if (in_chunk(plan_, chunking_, static_cast<int>(id))) {
        tensors_[id] = Tensor{};
        mu_[id] = Tensor{};
      }
    for (int i = window_first_op_; i <= window_sum_op_; ++i)
      chains_[static_cast<std::size_t>(i)] = ChainLevels{};
  }

  /// The marginal weights of the chunked subtree's latents for the current window, written
  /// into their place in the kept full arrays.
  void keep_window_weights() {
    for (int g = 0; g < s_.latent_count(); ++g) {
      const int id = plan_.latent_factor[g];
      if (!in_chunk(plan_, chunking_, id)) continue;
      const MarginalShape full = marginal_shape(g);
      if (window_weights_[g].empty())
        window_weights_[g] = par_.template allocate<double>(full.size);
      LogTensorView destination{window_weights_[g].data(), full.vars, full.extents,
                                row_major_strides(full.extents)};
      destination =
          destination.slice(plan_.plate_var[chunking_.plate], window_offset_, 1, window_size_);
      marginal_weights_into(g, const_cast<double*>(destination.data), &destination);
    }
  }

  /// Fills the factors of the latents and observations inside (or outside) the chunked
  /// subtree; without chunking, "outside" is everything.
  void evaluate_factors_where(bool inside) {
    for (int g = 0; g < s_.latent_count(); ++g)
      if (in_chunk(plan_, chunking_, plan_.latent_factor[g]) == inside) evaluate_latent_factor(g);
    for (int o = 0; o < s_.observed_count(); ++o)
      if (in_chunk(plan_, chunking_, plan_.observed_factor[o]) == inside)
        evaluate_observed_factor(o);
  }

  void evaluate_latent_factor(int g) {
    const int id = plan_.latent_factor[g];
    mpis_elements::LatentFactor<Model> factor;
    factor.weight = latent_log_weight(g);
    factor.axes = factor_axes(id, g, s_.latent_decl(g).parents);
    factor.log_k = std::log(static_cast<double>(k_));
    factor.out = allocate_tensor(id);
    const std::int64_t n = tensors_[id].owned.size();
    par_.for_each(n, factor, kDensityWork);
    const std::int64_t scrubbed = par_.count_if(n, mpis_elements::ScrubNonFinite{factor.out});
    if (!recomputing_) nonfinite_ += scrubbed;
  }

  void evaluate_observed_factor(int o) {
    const int id = plan_.observed_factor[o];
    const ObservedDecl& decl = s_.observed_decl(o);
    const int home = plan_.observed_home[o];
    mpis_elements::LikelihoodFactor<Model> factor;
    factor.model = model_;
    factor.observed = o;
    factor.parents = group_parents(-1, decl.parents, home);
    factor.axes = factor_axes(id, -1, decl.parents);
    const std::vector<int> home_path = s_.path(home), obs_path = s_.path(decl.plate);
    factor.home_depth = static_cast<int>(home_path.size());
    for (int d = 0; d < factor.home_depth; ++d)
      factor.home_size[d] = s_.plate_decl(home_path[d]).size;
    factor.extra_depth = static_cast<int>(obs_path.size() - home_path.size());
    for (int d = 0; d < factor.extra_depth; ++d) {
      factor.extra_size[d] = s_.plate_decl(obs_path[home_path.size() + d]).size;
      factor.extra_instances *= factor.extra_size[d];
    }
    factor.out = allocate_tensor(id);
    const std::int64_t n = tensors_[id].owned.size();
    par_.for_each(n, factor, kDensityWork * factor.extra_instances);
    const std::int64_t scrubbed = par_.count_if(n, mpis_elements::ScrubNonFinite{factor.out});
    if (!recomputing_) nonfinite_ += scrubbed;
  }

  /// The layout of latent g's marginal weights: (run, its plates, its K-dim).
  struct MarginalShape {
    std::vector<int> vars;
    std::vector<std::int64_t> extents;
    std::int64_t size = 1;
  };
  MarginalShape marginal_shape(int g) const {
    MarginalShape shape;
    shape.vars.push_back(MpisPlan::kRunVar);
    for (int p : s_.path(s_.latent_decl(g).plate)) shape.vars.push_back(plan_.plate_var[p]);
    shape.vars.push_back(plan_.latent_var[g]);
    for (int v : shape.vars) {
      shape.extents.push_back(plan_.var_extent[v]);
      shape.size *= plan_.var_extent[v];
    }
    return shape;
  }

  /// log w_g = μ(ℓ_g) summed over the parents' indices, into `out` (contiguous) or through
  /// `destination`'s strides.
  void marginal_weights_into(int g, double* out, const LogTensorView* destination) {
    const int id = plan_.latent_factor[g];
    const std::vector<int> keep = marginal_shape(g).vars;
    std::vector<int> eliminate;
    for (int v : plan_.tensors[id].vars)
      if (std::find(keep.begin(), keep.end(), v) == keep.end()) eliminate.push_back(v);
    run_step(plan_log_sum_product({mu_[id].view}, eliminate, &keep), out, destination);
  }
  struct ChainLevels {
    std::vector<Tensor> levels;  ///< level 0 views the chain's input; level L is the top
  };

  // --- layout helpers ---------------------------------------------------------------------

  mpis_elements::GroupView group_view(int g) const {
    const LatentDecl& decl = s_.latent_decl(g);
    mpis_elements::GroupView v;
    v.particles = const_cast<double*>(particles_[g].data());
    v.instances = s_.instances(decl.plate);
    v.k = particles_[g].size() / std::max<std::int64_t>(1, runs_ * v.instances * decl.event_size);
    v.event_size = decl.event_size;
    const std::vector<int> path = s_.path(decl.plate);
    v.depth = static_cast<int>(path.size());
    for (int d = 0; d < v.depth; ++d) v.plate_size[d] = s_.plate_decl(path[d]).size;
    return v;
  }

  mpis_elements::GroupView allocate_group(int g, std::int64_t particles_per_instance) {
    const LatentDecl& decl = s_.latent_decl(g);
    particles_.push_back(par_.template allocate<double>(runs_ * s_.instances(decl.plate) *
                                                        particles_per_instance * decl.event_size));
    return group_view(g);
  }

  /// The link from an instance of a group in `child_plate` (latent `child`, or −1 for an
  /// observation's home plate) to parent `parent` (a latent, or kPreviousStep).
  mpis_elements::ParentLink parent_link(int child, int parent, int child_plate) const {
    mpis_elements::ParentLink link;
    if (parent == kPreviousStep) {
      link.parent = group_view(child);
      link.previous_step = true;
      link.steps = s_.plate_decl(child_plate).size;
      return link;
    }
    link.parent = group_view(parent);
    link.divisor = s_.instances(child_plate) / s_.instances(s_.latent_decl(parent).plate);
    return link;
  }

  mpis_elements::GroupParents group_parents(int child, const std::vector<int>& parents,
                                            int child_plate) const {
    mpis_elements::GroupParents links;
    links.count = static_cast<int>(parents.size());
    for (int slot = 0; slot < links.count; ++slot)
      links.link[slot] = parent_link(child, parents[slot], child_plate);
    return links;
  }

  mpis_elements::LatentLogWeight<Model> latent_log_weight(int g) const {
    const LatentDecl& decl = s_.latent_decl(g);
    return {model_, g, group_view(g), group_parents(g, decl.parents, decl.plate), log_q_[g].data()};
  }

  mpis_elements::ProposalParents proposal_parents(int g, std::int64_t instances) const {
    const LatentDecl& decl = s_.latent_decl(g);
    mpis_elements::ProposalParents qa;
    qa.slots = static_cast<int>(decl.proposal_parents.size());
    qa.child_instances = instances;
    for (int slot = 0; slot < qa.slots; ++slot)
      qa.link[slot] = parent_link(g, decl.proposal_parents[slot], decl.plate);
    return qa;
  }

  /// Draws every particle of group g; a chain latent step by step, since step t's proposal
  /// conditions on step t − 1's particles.
  void draw_particles(int g, const mpis_elements::GroupView& self,
                      const mpis_elements::ProposalParents& qa, std::int64_t particle_offset) {
    const LatentDecl& decl = s_.latent_decl(g);
    mpis_elements::ParticleSampler<Model> sampler{model_, g, self, qa};
    sampler.streams = streams();
    sampler.particle_offset = particle_offset;
    const bool chain =
        std::find(decl.parents.begin(), decl.parents.end(), kPreviousStep) != decl.parents.end();
    if (!chain) {
      par_.for_each(runs_ * self.instances * self.k, sampler, kDensityWork);
      return;
    }
    sampler.steps = s_.plate_decl(decl.plate).size;
    for (std::int64_t t = 0; t < sampler.steps; ++t) {
      sampler.step = t;
      par_.for_each(runs_ * (self.instances / sampler.steps) * self.k, sampler, kDensityWork);
    }
  }

  mpis_elements::FactorAxes factor_axes(int id, int g, const std::vector<int>& parents) const {
    const MpisTensor& t = plan_.tensors[id];
    const std::vector<std::int64_t> extents = extents_of(id);
    mpis_elements::FactorAxes axes;
    axes.axes = static_cast<int>(t.vars.size());
    for (int a = 0; a < axes.axes; ++a) {
      const int v = t.vars[a];
      axes.extent[a] = extents[a];
      axes.full_extent[a] = t.extents[a];
      if (chunking_.active() && v == plan_.plate_var[chunking_.plate])
        axes.offset[a] = window_offset_;
      if (v == MpisPlan::kRunVar) {
        axes.role[a] = mpis_elements::kAxisRun;
      } else if (!plan_.is_k_var(v)) {
        axes.role[a] = mpis_elements::kAxisPlate;
      } else if (g >= 0 && v == plan_.latent_var[g]) {
        axes.role[a] = mpis_elements::kAxisSelf;
      } else if (g >= 0 && v == plan_.lag_var[g]) {
        axes.role[a] = mpis_elements::kAxisLag;
      } else {
        axes.role[a] = -100;
        for (std::size_t slot = 0; slot < parents.size(); ++slot)
          if (parents[slot] >= 0 && plan_.latent_var[parents[slot]] == v)
            axes.role[a] = static_cast<int>(slot);
        MYRIAD_EXPECTS(axes.role[a] >= 0, "MpisEngine: internal error: axis of variable ", v,
                       " of tensor ", id, " has no role");
      }
    }
    return axes;
  }

  /// Runs one log-sum-product step into `out`, contiguous over the plan's output variables or
  /// through the strides `destination` has for them.
  void run_step(const LogSumProductPlan& plan, double* out,
                const LogTensorView* destination = nullptr) {
    LogSumProductStep step;
    step.element = plan.element;
    step.out = out;
    step.out_size = plan.out_size;
    const std::vector<std::int64_t> contiguous = row_major_strides(plan.out_extents);
    for (std::size_t a = 0; a < plan.out_vars.size(); ++a)
      step.out_stride[a] = destination ? destination->stride_of(plan.out_vars[a]) : contiguous[a];
    run_log_sum_product(par_, step);
  }

  double* allocate_tensor(int id) {
    Tensor& t = tensors_[id];
    const std::vector<std::int64_t> extents = extents_of(id);
    t.owned = par_.template allocate<double>(checked_index_space_size(extents, "MP IS tensor"));
    t.view =
        LogTensorView{t.owned.data(), plan_.tensors[id].vars, extents, row_major_strides(extents)};
    t.source = id;
    return t.owned.data();
  }

  LogTensorView view(int id) const {
    MYRIAD_EXPECTS(tensors_[id].view.data != nullptr, "MpisEngine: tensor ", id,
                   " has not been computed");
    return tensors_[id].view;
  }

  Tensor contiguous(const std::vector<int>& vars, const std::vector<std::int64_t>& extents) {
    Tensor t;
    t.owned = par_.template allocate<double>(checked_index_space_size(extents, "MP IS tensor"));
    t.view = LogTensorView{t.owned.data(), vars, extents, row_major_strides(extents)};
    return t;
  }

  void set_mu_owned(int id, Array<double> array) {
    const std::vector<std::int64_t> extents = extents_of(id);
    mu_[id].owned = std::move(array);
    mu_[id].view = LogTensorView{mu_[id].owned.data(), plan_.tensors[id].vars, extents,
                                 row_major_strides(extents)};
    mu_[id].source = id;
  }

  /// Frees μ of an operation's output once its operation's backward step has read it (the
  /// outside tensors of leaves are kept for the marginals).
  void release_mu(int id) {
    const int source = mu_[id].source;
    if (source >= 0 && !is_leaf(source) && source != kept_mu_) mu_[source].owned = Array<double>{};
    if (!is_leaf(id) && id != kept_mu_) mu_[id] = Tensor{};
  }

  bool is_leaf(int id) const { return id < s_.latent_count() + s_.observed_count(); }

  /// W = μ(U) − U over U's axes, contiguous.
  Tensor outside_weight(const LogTensorView& mu, const LogTensorView& u) {
    Tensor w = contiguous(u.vars, u.extents);
    const LogSumProductPlan geometry = plan_log_sum_product({mu, u}, {}, &u.vars);
    par_.for_each(geometry.out_size,
                  mpis_elements::OutsideWeight{geometry.element, w.owned.data()});
    return w;
  }

  /// μ(T_j) = LSE_{D∖dims(T_j)}(Σ_i T_i + W) written through `destination`'s strides (the
  /// elimination rule of mpis.md §5 in log-marginal form).
  void outside_into(const std::vector<LogTensorView>& inputs_and_w, const LogTensorView& target,
                    const LogTensorView& destination) {
    std::vector<int> eliminate;
    for (const LogTensorView& t : inputs_and_w)
      for (int v : t.vars)
        if (!target.has_var(v) &&
            std::find(eliminate.begin(), eliminate.end(), v) == eliminate.end())
          eliminate.push_back(v);
    run_step(plan_log_sum_product(inputs_and_w, eliminate, &target.vars),
             const_cast<double*>(destination.data), &destination);
  }

  void eliminate_backward(const MpisOp& op) {
    const Tensor w = outside_weight(mu_[op.output].view, view(op.output));
    std::vector<LogTensorView> inputs;
    for (int id : op.inputs) inputs.push_back(view(id));
    inputs.push_back(w.view);
    for (int id : op.inputs) {
      set_mu_owned(id, par_.template allocate<double>(tensors_[id].owned.size()));
      outside_into(inputs, view(id), mu_[id].view);
    }
  }

  void copy(const LogTensorView& from, const LogTensorView& to) {
    const LogSumProductPlan geometry = plan_log_sum_product({from}, {}, &from.vars);
    mpis_elements::CopyInto into{geometry.element, const_cast<double*>(to.data)};
    for (std::size_t a = 0; a < geometry.out_vars.size(); ++a)
      into.out_stride[a] = to.stride_of(geometry.out_vars[a]);
    par_.for_each(geometry.out_size, into);
  }

  // --- timeseries chains (mpis.md §3.6) -------------------------------------------------

  /// Level l + 1 of the tree multiplies adjacent pairs of level l's log-matrices,
  /// C[p, c] = LSE_m A[p, m] + B[m, c], and carries an odd last one; the top (one matrix) is
  /// closed by LSE over both ends with the initial lag uniform (−log K).
  void chain_forward(std::size_t index) {
    const MpisOp& op = plan_.ops[index];
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    ChainLevels& c = chains_[index];
    c.levels.clear();
    Tensor level0;
    level0.view = view(op.inputs[0]);
    c.levels.push_back(std::move(level0));
    for (;;) {
      const LogTensorView cur = c.levels.back().view;
      const std::int64_t steps = cur.extent_of(t);
      if (steps == 1) break;
      const std::int64_t pairs = steps / 2;
      std::vector<std::int64_t> extents = cur.extents;
      extents[cur.axis_of(t)] = pairs + steps % 2;
      Tensor next = contiguous(cur.vars, extents);
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      const LogTensorView head = next.view.slice(t, 0, 1, pairs);
      run_step(plan_log_sum_product({a, b}, {scratch_var_}, &cur.vars), next.owned.data(), &head);
      if (steps % 2 == 1) copy(cur.slice(t, steps - 1, 1, 1), next.view.slice(t, pairs, 1, 1));
      c.levels.push_back(std::move(next));
    }
    const LogTensorView top = c.levels.back().view;
    const LogTensorView constant{minus_log_k_.data(), {}, {}, {}};
    const LogSumProductPlan close =
        plan_log_sum_product({top, constant}, {t, lag, chain}, &plan_.tensors[op.output].vars);
    run_step(close, allocate_tensor(op.output));
  }

  void chain_backward(std::size_t index) {
    const MpisOp& op = plan_.ops[index];
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    ChainLevels& c = chains_[index];
    const LogTensorView constant{minus_log_k_.data(), {}, {}, {}};
    // The closing step: μ(top) = top − log K + μ(out) − out.
    const LogTensorView top = c.levels.back().view;
    Tensor mu_next = contiguous(top.vars, top.extents);
    {
      const Tensor w = outside_weight(mu_[op.output].view, view(op.output));
      outside_into({top, constant, w.view}, top, mu_next.view);
    }
    for (std::size_t l = c.levels.size() - 1; l-- > 0;) {
      const LogTensorView cur = c.levels[l].view;
      const LogTensorView next = c.levels[l + 1].view;
      const std::int64_t steps = cur.extent_of(t), pairs = steps / 2;
      Tensor mu_cur = contiguous(cur.vars, cur.extents);
      const Tensor w =
          outside_weight(mu_next.view.slice(t, 0, 1, pairs), next.slice(t, 0, 1, pairs));
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      outside_into({a, b, w.view}, a,
                   mu_cur.view.slice(t, 0, 2, pairs).renamed(chain, scratch_var_));
      outside_into({a, b, w.view}, b, mu_cur.view.slice(t, 1, 2, pairs).renamed(lag, scratch_var_));
      if (steps % 2 == 1)
        copy(mu_next.view.slice(t, pairs, 1, 1), mu_cur.view.slice(t, steps - 1, 1, 1));
      mu_next = std::move(mu_cur);
    }
    const int input = op.inputs[0];
    mu_[input].owned = std::move(mu_next.owned);
    mu_[input].view = mu_next.view;
    mu_[input].source = input;
  }

  /// The batch axes (run, then the plates of `plate`'s path) and the already-sampled K-dims
  /// among `kept` of a sampling step over `inputs`.
  mpis_elements::SampledContext sampled_context(const std::vector<LogTensorView>& inputs, int plate,
                                                const std::vector<int>& kept) const {
    mpis_elements::SampledContext context;
    context.runs = runs_;
    std::vector<int> batch{MpisPlan::kRunVar};
    for (int p : s_.path(plate)) batch.push_back(plan_.plate_var[p]);
    context.batch_axes = static_cast<int>(batch.size());
    for (std::size_t a = 0; a < batch.size(); ++a) {
      context.batch_extent[a] = inputs_extent(inputs, batch[a]);
      for (std::size_t j = 0; j < inputs.size(); ++j)
        context.batch_stride[j][a] = inputs[j].stride_of(batch[a]);
      if (a > 0) context.elements *= context.batch_extent[a];
    }
    for (int v : kept) {
      if (!plan_.is_k_var(v)) continue;
      const int c = context.conditioned++;
      const int home = plan_.var_plate[v];
      context.index[c] = index_[v].data();
      context.instances[c] = s_.instances(home);
      context.base[c] = window_base(home);
      context.divisor[c] = context.elements / window_instances(home);
      for (std::size_t j = 0; j < inputs.size(); ++j) context.stride[j][c] = inputs[j].stride_of(v);
    }
    return context;
  }

  static std::int64_t inputs_extent(const std::vector<LogTensorView>& inputs, int var) {
    for (const LogTensorView& t : inputs)
      if (t.has_var(var)) return t.extent_of(var);
    return 1;
  }

  void chain_sample(std::size_t index, std::int64_t draws) {
    const MpisOp& op = plan_.ops[index];
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    const ChainLevels& c = chains_[index];
    const std::int64_t steps = s_.plate_decl(op.plate).size;
    const int outer_plate = s_.plate_decl(op.plate).parent;
    const std::int64_t outer = window_instances(outer_plate);  // outer series in the window
    Array<std::int32_t> boundary =
        par_.template allocate<std::int32_t>(draws * runs_ * outer * (steps + 1));
    const std::uint32_t purpose = kMpisIndexPurpose + 64u * static_cast<std::uint32_t>(index);

    // The ends: (lag before step 0, chain at step T − 1) from the top matrix.
    {
      const LogTensorView top = c.levels.back().view;
      mpis_elements::IndexSampler sampler;
      std::vector<int> kept;
      for (int v : top.vars)
        if (v != lag && v != chain) kept.push_back(v);
      sampler.element = plan_log_sum_product({top}, {lag, chain}, &kept).element;
      sampler.context = sampled_context({top}, op.plate, kept);
      sampler.out[0] = sampler.out[1] = boundary.data();
      sampler.out_instances = outer * (steps + 1);
      sampler.out_scale = steps + 1;
      sampler.out_offset[0] = 0;
      sampler.out_offset[1] = steps;
      sampler.element_base = window_base(outer_plate);  // the boundary array is the window's
      sampler.uniforms = {streams(), purpose};
      par_.for_each(draws * runs_ * sampler.context.elements, sampler,
                    3 * sampler.element.elim_size);
    }
    // Down the tree: each level's pairs draw the value at their join.
    for (std::size_t l = c.levels.size() - 1; l-- > 0;) {
      const LogTensorView cur = c.levels[l].view;
      const std::int64_t pairs = cur.extent_of(t) / 2;
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      std::vector<int> kept;
      for (int v : cur.vars)
        if (v != lag && v != chain) kept.push_back(v);
      mpis_elements::ChainMidpointSampler sampler;
      // Only the element's sweep over m is used; the ends enter through left/right strides.
      sampler.element = plan_log_sum_product({a, b}, {scratch_var_}).element;
      sampler.context = sampled_context({a, b}, op.plate, kept);
      sampler.left_stride[0] = a.stride_of(lag);
      sampler.right_stride[1] = b.stride_of(chain);
      sampler.boundary = boundary.data();
      sampler.steps = steps;
      sampler.pairs = pairs;
      sampler.span = std::int64_t{2} << l;
      sampler.element_base = window_base(outer_plate) * pairs;
      sampler.uniforms = {streams(), purpose + static_cast<std::uint32_t>(l) + 1u};
      par_.for_each(draws * runs_ * sampler.context.elements, sampler,
                    3 * sampler.element.elim_size);
    }
    mpis_elements::ChainIndicesFromBoundary unpack;
    unpack.boundary = boundary.data();
    unpack.chain = index_[chain].data();
    unpack.lag = index_[lag].data();
    unpack.steps = steps;
    unpack.window_outer = outer;
    unpack.outer_instances = s_.instances(outer_plate);
    unpack.outer_base = window_base(outer_plate);
    par_.for_each(draws * runs_ * outer * steps, unpack);
  }

  Model model_;
  PlatedStructure s_;
  MpisPlan plan_;
  Parallel par_;
  std::uint64_t seed_;
  std::int64_t first_run_;
  MpisChunking chunking_;
  int window_first_op_ = -1;        ///< first operation of the chunked subtree
  int window_sum_op_ = -1;          ///< the chunked plate's sum
  std::int64_t window_offset_ = 0;  ///< the current window: elements [offset, offset + size)
  std::int64_t window_size_ = 0;
  std::vector<Array<double>> window_weights_;  ///< chunked latents' marginal weights, kept
  std::int64_t runs_;
  std::int64_t k_;
  int scratch_var_ = 0;
  Array<double> minus_log_k_;
  std::vector<Array<double>> particles_;
  std::vector<Array<double>> log_q_;
  std::vector<std::vector<Array<std::int32_t>>> perms_;
  std::vector<Tensor> tensors_;
  std::vector<Tensor> mu_;
  std::vector<ChainLevels> chains_;
  std::int64_t nonfinite_ = 0;
  bool recomputing_ = false;  ///< a window recomputed by the backward pass or the sampler
  int kept_mu_ = -1;          ///< the chunked plate's sum: its μ outlives every window
  std::int64_t draws_ = 0;
  std::vector<Array<std::int32_t>> index_;
};

}  // namespace myriad
