#pragma once
// The contraction of massively parallel importance sampling on a parallel policy: the plan's
// tensors (log-factors and messages, mpis.md §3.1–§3.2) with their outside tensors μ
// (mpis.md §5), the forward and backward step of its eliminate and plate-sum operations, and
// the marginal weights read off μ (mpis.md §4–§5). Every step is a log-sum-product
// (estimate/log_contract.hpp) run by run_log_sum_product on the policy, which a policy may
// specialise (the CUDA policy sends GEMM-shaped steps to dedicated kernels).

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/estimate/mpis_plan.hpp"

namespace myriad {

/// A log tensor on a policy: the array it owns (if any) and the view through which it is read.
template <class Parallel>
struct PolicyLogTensor {
  PolicyArray<Parallel, double> owned;
  LogTensorView view;
  int source = -1;  ///< tensor whose owned array `view` reads (μ broadcasts share)
};

/// Runs one log-sum-product step into `out`, contiguous over the plan's output variables or
/// through the strides `destination` has for them.
template <class Parallel>
void run_log_sum_product_plan(const Parallel& par, const LogSumProductPlan& plan, double* out,
                              const LogTensorView* destination = nullptr) {
  LogSumProductStep step;
  step.element = plan.element;
  step.out = out;
  step.out_size = plan.out_size;
  const std::vector<std::int64_t> contiguous = row_major_strides(plan.out_extents);
  for (std::size_t a = 0; a < plan.out_vars.size(); ++a)
    step.out_stride[a] = destination ? destination->stride_of(plan.out_vars[a]) : contiguous[a];
  run_log_sum_product(par, step);
}

/// A new contiguous (row-major) tensor over `vars`, uninitialised.
template <class Parallel>
PolicyLogTensor<Parallel> contiguous_log_tensor(const Parallel& par, const std::vector<int>& vars,
                                                const std::vector<std::int64_t>& extents) {
  PolicyLogTensor<Parallel> t;
  t.owned = par.template allocate<double>(checked_index_space_size(extents, "MP IS tensor"));
  t.view = LogTensorView{t.owned.data(), vars, extents, row_major_strides(extents)};
  return t;
}

/// W = μ(U) − U over U's axes, contiguous.
template <class Parallel>
PolicyLogTensor<Parallel> outside_weight(const Parallel& par, const LogTensorView& mu,
                                         const LogTensorView& u) {
  PolicyLogTensor<Parallel> w = contiguous_log_tensor(par, u.vars, u.extents);
  const LogSumProductPlan geometry = plan_log_sum_product({mu, u}, {}, &u.vars);
  par.for_each(geometry.out_size, mpis_elements::OutsideWeight{geometry.element, w.owned.data()});
  return w;
}

/// μ(T_j) = LSE_{D∖dims(T_j)}(Σ_i T_i + W) written through `destination`'s strides (the
/// elimination rule of mpis.md §5 in log-marginal form).
template <class Parallel>
void outside_into(const Parallel& par, const std::vector<LogTensorView>& inputs_and_w,
                  const LogTensorView& target, const LogTensorView& destination) {
  std::vector<int> eliminate;
  for (const LogTensorView& t : inputs_and_w)
    for (int v : t.vars)
      if (!target.has_var(v) && std::find(eliminate.begin(), eliminate.end(), v) == eliminate.end())
        eliminate.push_back(v);
  run_log_sum_product_plan(par, plan_log_sum_product(inputs_and_w, eliminate, &target.vars),
                           const_cast<double*>(destination.data), &destination);
}

/// Copies `from` into the elements `to` views.
template <class Parallel>
void copy_log_tensor(const Parallel& par, const LogTensorView& from, const LogTensorView& to) {
  const LogSumProductPlan geometry = plan_log_sum_product({from}, {}, &from.vars);
  mpis_elements::CopyInto into{geometry.element, const_cast<double*>(to.data)};
  for (std::size_t a = 0; a < geometry.out_vars.size(); ++a)
    into.out_stride[a] = to.stride_of(geometry.out_vars[a]);
  par.for_each(geometry.out_size, into);
}

/// The layout of latent g's marginal weights: (run, its plates, its K-dim).
struct MpisMarginalShape {
  std::vector<int> vars;
  std::vector<std::int64_t> extents;
  std::int64_t size = 1;
};

inline MpisMarginalShape marginal_shape(const PlatedStructure& s, const MpisPlan& plan, int g) {
  MpisMarginalShape shape;
  shape.vars.push_back(MpisPlan::kRunVar);
  for (int p : s.path(s.latent_decl(g).plate)) shape.vars.push_back(plan.plate_var[p]);
  shape.vars.push_back(plan.latent_var[g]);
  for (int v : shape.vars) {
    shape.extents.push_back(plan.var_extent[v]);
    shape.size *= plan.var_extent[v];
  }
  return shape;
}

/// The plan's tensors and their outside tensors μ (the log joint marginal of each tensor's
/// scope, mpis.md §5), with the forward and backward steps of the operations that are plain
/// contractions (eliminate, plate_sum; a timeseries chain is estimate/mpis_timeseries.hpp's).
template <class Parallel>
class MpisContraction {
 public:
  using Tensor = PolicyLogTensor<Parallel>;

  explicit MpisContraction(const MpisPlan& plan)
      : values_(plan.tensors.size()),
        mu_(plan.tensors.size()),
        leaves_(static_cast<int>(plan.latent_factor.size() + plan.observed_factor.size())) {}

  /// Allocates tensor `id` contiguous at its extents now and returns its data.
  double* allocate(const Parallel& par, const MpisLayout& at, int id) {
    Tensor& t = values_[id];
    const std::vector<std::int64_t> extents = at.extents_of(id);
    t.owned = par.template allocate<double>(checked_index_space_size(extents, "MP IS tensor"));
    t.view = LogTensorView{t.owned.data(), at.plan.tensors[id].vars, extents,
                           row_major_strides(extents)};
    t.source = id;
    return t.owned.data();
  }

  /// Tensor `id`; throws unless it has been computed.
  LogTensorView view(int id) const {
    MYRIAD_EXPECTS(values_[id].view.data != nullptr, "MpisEngine: tensor ", id,
                   " has not been computed");
    return values_[id].view;
  }
  const Tensor& value(int id) const { return values_[id]; }
  const Tensor& outside(int id) const { return mu_[id]; }

  /// The forward step of an eliminate or plate_sum operation; `accumulate` adds a plate sum to
  /// its output (a chunked plate's later windows).
  void forward(const Parallel& par, const MpisLayout& at, const MpisOp& op, bool accumulate) {
    std::vector<LogTensorView> inputs;
    for (int id : op.inputs) inputs.push_back(view(id));
    const std::vector<int>& out_vars = at.plan.tensors[op.output].vars;
    if (op.kind == MpisOpKind::eliminate) {
      run_log_sum_product_plan(par, plan_log_sum_product(inputs, op.eliminate, &out_vars),
                               allocate(par, at, op.output));
    } else {
      const LogSumProductPlan step = plan_log_sum_product(inputs, op.eliminate, &out_vars);
      double* out = accumulate ? values_[op.output].owned.data() : allocate(par, at, op.output);
      par.for_each(step.out_size, mpis_elements::PlateSumInto{step.element, out, accumulate},
                   step.element.elim_size);
    }
  }

  /// μ(result) = 0: the start of the backward pass.
  void start_backward(const Parallel& par, const MpisLayout& at) {
    std::vector<double> zeros(static_cast<std::size_t>(at.runs()), 0.0);
    set_outside(at, at.plan.result, par.template allocate<double>(at.runs()));
    par.upload(mu_[at.plan.result].owned, zeros.data(), at.runs());
  }

  /// The backward step of an eliminate or plate_sum operation: μ of its inputs from μ of its
  /// output.
  void backward(const Parallel& par, const MpisLayout& at, const MpisOp& op) {
    if (op.kind == MpisOpKind::eliminate) {
      const Tensor w = outside_weight(par, mu_[op.output].view, view(op.output));
      std::vector<LogTensorView> inputs;
      for (int id : op.inputs) inputs.push_back(view(id));
      inputs.push_back(w.view);
      for (int id : op.inputs) {
        set_outside(at, id, par.template allocate<double>(values_[id].owned.size()));
        outside_into(par, inputs, view(id), mu_[id].view);
      }
      return;
    }
    // μ(R)[s, n] = μ(R_out)[s]: a broadcast view, no copy.
    const int r = op.inputs[0];
    const LogTensorView out_mu = mu_[op.output].view;
    LogTensorView v;
    v.data = out_mu.data;
    v.vars = at.plan.tensors[r].vars;
    v.extents = at.extents_of(r);
    for (int var : v.vars) v.strides.push_back(out_mu.stride_of(var));
    mu_[r].view = v;
    mu_[r].source = mu_[op.output].source;
  }

  /// μ of tensor `id` as `array`, contiguous at the tensor's extents now.
  void set_outside(const MpisLayout& at, int id, PolicyArray<Parallel, double> array) {
    const std::vector<std::int64_t> extents = at.extents_of(id);
    mu_[id].owned = std::move(array);
    mu_[id].view = LogTensorView{mu_[id].owned.data(), at.plan.tensors[id].vars, extents,
                                 row_major_strides(extents)};
    mu_[id].source = id;
  }

  /// μ of tensor `id` as `t` (computed elsewhere: a timeseries chain's input).
  void set_outside(int id, Tensor t) {
    mu_[id].owned = std::move(t.owned);
    mu_[id].view = t.view;
    mu_[id].source = id;
  }

  /// Frees μ of an operation's output once its operation's backward step has read it (the
  /// outside tensors of leaves are kept for the marginals).
  void release_outside(int id) {
    const int source = mu_[id].source;
    if (source >= 0 && !is_leaf(source) && source != held_)
      mu_[source].owned = PolicyArray<Parallel, double>{};
    if (!is_leaf(id) && id != held_) mu_[id] = Tensor{};
  }

  /// Keeps μ of tensor `id` (a chunked plate's sum, which every window reads) until
  /// drop_held_outside().
  void hold_outside(int id) { held_ = id; }
  void drop_held_outside() {
    const int id = held_;
    held_ = -1;
    mu_[id] = Tensor{};
  }

  /// Frees the tensors and outside tensors of the chunked subtree (the current window's).
  void release_window(const MpisLayout& at) {
    for (std::size_t id = 0; id < values_.size(); ++id)
      if (at.in_window(static_cast<int>(id))) {
        values_[id] = Tensor{};
        mu_[id] = Tensor{};
      }
  }

  /// log w_g = μ(ℓ_g) summed over the parents' indices, into `out` (contiguous) or through
  /// `destination`'s strides.
  void marginal_weights_into(const Parallel& par, const MpisLayout& at, int g, double* out,
                             const LogTensorView* destination) const {
    const int id = at.plan.latent_factor[g];
    const std::vector<int> keep = marginal_shape(at.structure, at.plan, g).vars;
    std::vector<int> eliminate;
    for (int v : at.plan.tensors[id].vars)
      if (std::find(keep.begin(), keep.end(), v) == keep.end()) eliminate.push_back(v);
    run_log_sum_product_plan(par, plan_log_sum_product({mu_[id].view}, eliminate, &keep), out,
                             destination);
  }

 private:
  bool is_leaf(int id) const { return id < leaves_; }

  std::vector<Tensor> values_;
  std::vector<Tensor> mu_;
  int leaves_ = 0;  ///< the log-factors ℓ_g and λ_o, tensors 0 … leaves − 1
  int held_ = -1;   ///< the chunked plate's sum: its μ outlives every window
};

}  // namespace myriad
