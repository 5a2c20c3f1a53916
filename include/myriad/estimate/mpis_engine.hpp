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

#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

template <class Model, class Parallel>
class MpisEngine {
 public:
  template <class T>
  using Array = typename Parallel::template Array<T>;

  /// `plan` must have been made from `structure`. Nothing is computed until asked.
  MpisEngine(const Model& model, PlatedStructure structure, MpisPlan plan, Parallel parallel,
             std::uint64_t seed, std::int64_t first_run = 0)
      : model_(model),
        s_(std::move(structure)),
        plan_(std::move(plan)),
        par_(std::move(parallel)),
        seed_(seed),
        first_run_(first_run),
        runs_(plan_.runs),
        k_(plan_.k) {
    MYRIAD_EXPECTS(plan_.latent_factor.size() == static_cast<std::size_t>(s_.latent_count()),
                   "MpisEngine: the plan was made for another structure");
    tensors_.resize(plan_.tensors.size());
    mu_.resize(plan_.tensors.size());
    chains_.resize(plan_.ops.size());
    scratch_var_ = static_cast<int>(plan_.var_extent.size());
    minus_log_k_ = par_.template allocate<double>(1);
    const double value = -std::log(static_cast<double>(k_));
    par_.upload(minus_log_k_, &value, 1);
  }

  const MpisPlan& plan() const { return plan_; }
  const PlatedStructure& structure() const { return s_; }
  Parallel& parallel() { return par_; }
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
      const LatentDecl& decl = s_.latent_decl(g);
      const mpis_elements::GroupView self = allocate_group(g, k_);
      perms_.emplace_back();
      mpis_elements::ProposalParents qa = proposal_parents(g, self.instances);
      for (int slot = 0; slot < qa.slots; ++slot) {
        perms_[g].push_back(par_.template allocate<std::int32_t>(runs_ * self.instances * k_));
        mpis_elements::PermutationSampler permute;
        permute.perm = perms_[g].back().data();
        permute.instances = self.instances;
        permute.k = k_;
        permute.seed = seed_;
        permute.first_run = first_run_;
        permute.purpose = kMpisPermutationPurpose + 64u * static_cast<std::uint32_t>(g) +
                          static_cast<std::uint32_t>(slot);
        par_.for_each(runs_ * self.instances, permute, 4 * k_);
        qa.perm[slot] = perms_[g].back().data();
      }
      draw_particles(g, self, qa, 0);
      log_q_.push_back(par_.template allocate<double>(runs_ * self.instances * k_));
      mpis_elements::ProposalLogDensity<Model> density{model_, g, self, qa, log_q_.back().data()};
      par_.for_each(runs_ * self.instances * k_, density, kDensityWork * mixture_terms(qa));
      (void)decl;
    }
  }

  /// Fills ℓ_g and λ_o (mpis.md §3.1); NaN or +inf entries become −inf and are counted.
  void evaluate_factors() {
    nonfinite_ = 0;
    for (int g = 0; g < s_.latent_count(); ++g) {
      const int id = plan_.latent_factor[g];
      const mpis_elements::GroupView self = group_view(g);
      mpis_elements::LatentFactor<Model> factor;
      factor.model = model_;
      factor.latent = g;
      factor.self = self;
      const LatentDecl& decl = s_.latent_decl(g);
      factor.parents = static_cast<int>(decl.parents.size());
      for (int slot = 0; slot < factor.parents; ++slot)
        factor.link[slot] = parent_link(g, decl.parents[slot], decl.plate);
      factor.axes = factor_axes(id, g, decl.parents);
      factor.log_q = log_q_[g].data();
      factor.log_k = std::log(static_cast<double>(k_));
      factor.out = allocate_tensor(id);
      par_.for_each(plan_.tensors[id].size(), factor, kDensityWork);
      nonfinite_ += par_.count_if(plan_.tensors[id].size(), mpis_elements::ScrubNonFinite{factor.out});
    }
    for (int o = 0; o < s_.observed_count(); ++o) {
      const int id = plan_.observed_factor[o];
      const ObservedDecl& decl = s_.observed_decl(o);
      const int home = plan_.observed_home[o];
      mpis_elements::LikelihoodFactor<Model> factor;
      factor.model = model_;
      factor.observed = o;
      factor.parents = static_cast<int>(decl.parents.size());
      for (int slot = 0; slot < factor.parents; ++slot)
        factor.link[slot] = parent_link(-1, decl.parents[slot], home);
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
      par_.for_each(plan_.tensors[id].size(), factor, kDensityWork * factor.extra_instances);
      nonfinite_ += par_.count_if(plan_.tensors[id].size(), mpis_elements::ScrubNonFinite{factor.out});
    }
  }

  /// Runs the plan's operations (mpis.md §3.2): log P_MP of each run in the result tensor.
  void contract() {
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const MpisOp& op = plan_.ops[i];
      const MpisTensor& out = plan_.tensors[op.output];
      std::vector<LogTensorView> inputs;
      for (int id : op.inputs) inputs.push_back(view(id));
      if (op.kind == MpisOpKind::eliminate) {
        const LogSumProductPlan step = plan_log_sum_product(inputs, op.eliminate, &out.vars);
        run_step(step, allocate_tensor(op.output));
      } else if (op.kind == MpisOpKind::plate_sum) {
        const LogSumProductPlan step = plan_log_sum_product(inputs, op.eliminate, &out.vars);
        par_.for_each(step.out_size, mpis_elements::PlateSumInto{step.element, allocate_tensor(op.output)},
                      step.element.elim_size);
      } else {
        chain_forward(i);
      }
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
    std::vector<double> zeros(static_cast<std::size_t>(runs_), 0.0);
    set_mu_owned(plan_.result, par_.template allocate<double>(runs_));
    par_.upload(mu_[plan_.result].owned, zeros.data(), runs_);
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
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
        v.extents = plan_.tensors[r].extents;
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
  }

  /// log P_z(k_g, parents' k, lag) per run and instance: μ(ℓ_g), laid out as ℓ_g
  /// (plan().tensors[plan().latent_factor[g]]). Needs backward().
  std::vector<double> log_joint_marginal(int g) const {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    MYRIAD_EXPECTS(mu_[id].view.data != nullptr, "MpisEngine: run backward() first");
    return par_.download(mu_[id].owned);
  }

  /// Log marginal weights log w_g[run][instance][k] = log P_z(k_g = k) (mpis.md §4–§5), summed
  /// over the parents' indices of μ(ℓ_g); Σ_k w = 1 per instance. Needs backward().
  std::vector<double> log_marginal_weights(int g) {
    const int id = plan_.latent_factor.at(static_cast<std::size_t>(g));
    MYRIAD_EXPECTS(mu_[id].view.data != nullptr, "MpisEngine: run backward() first");
    std::vector<int> keep{MpisPlan::kRunVar}, eliminate;
    for (int p : s_.path(s_.latent_decl(g).plate)) keep.push_back(plan_.plate_var[p]);
    keep.push_back(plan_.latent_var[g]);
    for (int v : plan_.tensors[id].vars)
      if (std::find(keep.begin(), keep.end(), v) == keep.end()) eliminate.push_back(v);
    const LogSumProductPlan step = plan_log_sum_product({mu_[id].view}, eliminate, &keep);
    Array<double> weights = par_.template allocate<double>(step.out_size);
    run_step(step, weights.data());
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
    index_.clear();
    index_.resize(plan_.var_extent.size());
    for (std::size_t v = 0; v < plan_.var_extent.size(); ++v)
      if (plan_.is_k_var(static_cast<int>(v)))
        index_[v] = par_.template allocate<std::int32_t>(
            draws * runs_ * s_.instances(plan_.var_plate[v]));
    for (std::size_t i = plan_.ops.size(); i-- > 0;) {
      const MpisOp& op = plan_.ops[i];
      if (op.kind == MpisOpKind::eliminate && !op.eliminate.empty()) {
        std::vector<LogTensorView> inputs;
        for (int id : op.inputs) inputs.push_back(view(id));
        mpis_elements::IndexSampler sampler;
        sampler.element = plan_log_sum_product(inputs, op.eliminate, &plan_.tensors[op.output].vars).element;
        sampler.context = sampled_context(inputs, op.plate, plan_.tensors[op.output].vars);
        for (std::size_t a = 0; a < op.eliminate.size(); ++a)
          sampler.out[a] = index_[op.eliminate[a]].data();
        sampler.out_instances = sampler.context.elements;
        sampler.seed = seed_;
        sampler.first_run = first_run_;
        sampler.purpose = kMpisIndexPurpose + 64u * static_cast<std::uint32_t>(i);
        par_.for_each(draws * runs_ * sampler.context.elements, sampler,
                      3 * sampler.element.elim_size);
      } else if (op.kind == MpisOpKind::chain) {
        chain_sample(i, draws);
      }
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

  /// Frees the tensors (factors, messages, outside tensors, chain levels), keeping particles,
  /// proposals' log densities and sampled indices.
  void release_tensors() {
    for (auto& t : tensors_) t = Tensor{};
    for (auto& t : mu_) t = Tensor{};
    for (auto& c : chains_) c = ChainLevels{};
  }

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
      par_.for_each(runs_ * self.instances * count,
                    mpis_elements::ProposalLogDensity<Model>{model_, g, self, qa, log_q_.back().data()},
                    kDensityWork);
      mpis_elements::GlobalLatentTerm<Model> term;
      term.model = model_;
      term.latent = g;
      term.self = self;
      const LatentDecl& decl = s_.latent_decl(g);
      term.parents = static_cast<int>(decl.parents.size());
      for (int slot = 0; slot < term.parents; ++slot)
        term.link[slot] = parent_link(g, decl.parents[slot], decl.plate);
      term.log_q = log_q_.back().data();
      term.log_r = log_r.data();
      par_.for_each(runs_ * count, term, kDensityWork * self.instances);
    }
    for (int o = 0; o < s_.observed_count(); ++o) {
      const ObservedDecl& decl = s_.observed_decl(o);
      mpis_elements::GlobalObservedTerm<Model> term;
      term.model = model_;
      term.observed = o;
      term.parents = static_cast<int>(decl.parents.size());
      for (int slot = 0; slot < term.parents; ++slot)
        term.link[slot] = parent_link(-1, decl.parents[slot], decl.plate);
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
  /// Cost of one density evaluation relative to a cheap element (the CPU policy's parallel
  /// threshold; see CpuParallel::for_each).
  static constexpr std::int64_t kDensityWork = 16;

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
    particles_.push_back(par_.template allocate<double>(
        runs_ * s_.instances(decl.plate) * particles_per_instance * decl.event_size));
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
  void draw_particles(int g, const mpis_elements::GroupView& self, const mpis_elements::ProposalParents& qa,
                      std::int64_t particle_offset) {
    const LatentDecl& decl = s_.latent_decl(g);
    mpis_elements::ParticleSampler<Model> sampler{model_, g, self, qa};
    sampler.seed = seed_;
    sampler.first_run = first_run_;
    sampler.particle_offset = particle_offset;
    const bool chain = std::find(decl.parents.begin(), decl.parents.end(), kPreviousStep) !=
                       decl.parents.end();
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
    mpis_elements::FactorAxes axes;
    axes.axes = static_cast<int>(t.vars.size());
    for (int a = 0; a < axes.axes; ++a) {
      const int v = t.vars[a];
      axes.extent[a] = t.extents[a];
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
    t.owned = par_.template allocate<double>(plan_.tensors[id].size());
    t.view = LogTensorView{t.owned.data(), plan_.tensors[id].vars, plan_.tensors[id].extents,
                           row_major_strides(plan_.tensors[id].extents)};
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
    mu_[id].owned = std::move(array);
    mu_[id].view = LogTensorView{mu_[id].owned.data(), plan_.tensors[id].vars,
                                 plan_.tensors[id].extents,
                                 row_major_strides(plan_.tensors[id].extents)};
    mu_[id].source = id;
  }

  /// Frees μ of an operation's output once its operation's backward step has read it (the
  /// outside tensors of leaves are kept for the marginals).
  void release_mu(int id) {
    const int source = mu_[id].source;
    if (source >= 0 && !is_leaf(source)) mu_[source].owned = Array<double>{};
    if (!is_leaf(id)) mu_[id] = Tensor{};
  }

  bool is_leaf(int id) const {
    return id < s_.latent_count() + s_.observed_count();
  }

  /// W = μ(U) − U over U's axes, contiguous.
  Tensor outside_weight(const LogTensorView& mu, const LogTensorView& u) {
    Tensor w = contiguous(u.vars, u.extents);
    const LogSumProductPlan geometry = plan_log_sum_product({mu, u}, {}, &u.vars);
    par_.for_each(geometry.out_size, mpis_elements::OutsideWeight{geometry.element, w.owned.data()});
    return w;
  }

  /// μ(T_j) = LSE_{D∖dims(T_j)}(Σ_i T_i + W) written through `destination`'s strides (the
  /// elimination rule of mpis.md §5 in log-marginal form).
  void outside_into(const std::vector<LogTensorView>& inputs_and_w, const LogTensorView& target,
                    const LogTensorView& destination) {
    std::vector<int> eliminate;
    for (const LogTensorView& t : inputs_and_w)
      for (int v : t.vars)
        if (!target.has_var(v) && std::find(eliminate.begin(), eliminate.end(), v) == eliminate.end())
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
      set_mu_owned(id, par_.template allocate<double>(plan_.tensors[id].size()));
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
      const Tensor w = outside_weight(mu_next.view.slice(t, 0, 1, pairs), next.slice(t, 0, 1, pairs));
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      outside_into({a, b, w.view}, a, mu_cur.view.slice(t, 0, 2, pairs).renamed(chain, scratch_var_));
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
      context.index[c] = index_[v].data();
      context.instances[c] = s_.instances(plan_.var_plate[v]);
      context.divisor[c] = context.elements / context.instances[c];
      for (std::size_t j = 0; j < inputs.size(); ++j)
        context.stride[j][c] = inputs[j].stride_of(v);
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
    const std::int64_t outer = s_.instances(s_.plate_decl(op.plate).parent);
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
      sampler.seed = seed_;
      sampler.first_run = first_run_;
      sampler.purpose = purpose;
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
      sampler.seed = seed_;
      sampler.first_run = first_run_;
      sampler.purpose = purpose + static_cast<std::uint32_t>(l) + 1u;
      par_.for_each(draws * runs_ * sampler.context.elements, sampler, 3 * sampler.element.elim_size);
    }
    mpis_elements::ChainIndicesFromBoundary unpack{boundary.data(), index_[chain].data(), index_[lag].data(),
                                          steps};
    par_.for_each(draws * runs_ * outer * steps, unpack);
  }

  Model model_;
  PlatedStructure s_;
  MpisPlan plan_;
  Parallel par_;
  std::uint64_t seed_;
  std::int64_t first_run_;
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
  std::int64_t draws_ = 0;
  std::vector<Array<std::int32_t>> index_;
};

}  // namespace myriad
