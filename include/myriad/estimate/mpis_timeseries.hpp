#pragma once
// The timeseries tree of massively parallel importance sampling (mpis.md §3.6): a timeseries
// plate's result M[…, t, lag, k] reduced by rounds of pairwise log-matrix products of strided
// slices (even t with odd t, the odd one out carried) and closed at both ends with the lag of
// t = 0 uniform (−log K). The backward pass (mpis.md §5) and the index sampler (§6) walk the
// same tree down. MpisTimeseries keeps each chain operation's levels between the passes.

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_contraction.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/estimate/mpis_sampling.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

template <class Parallel>
class MpisTimeseries {
 public:
  using Tensor = PolicyLogTensor<Parallel>;

  MpisTimeseries(const Parallel& par, const MpisPlan& plan)
      : chains_(plan.ops.size()), scratch_var_(static_cast<int>(plan.var_extent.size())) {
    minus_log_k_ = par.template allocate<double>(1);
    const double value = -std::log(static_cast<double>(plan.k));
    par.upload(minus_log_k_, &value, 1);
  }

  /// Chain operation `index` forward. Level l + 1 of the tree multiplies adjacent pairs of
  /// level l's log-matrices, C[p, c] = LSE_m A[p, m] + B[m, c], and carries an odd last one;
  /// the top (one matrix) is closed by LSE over both ends with the initial lag uniform (−log K).
  void forward(const Parallel& par, const MpisLayout& at, MpisContraction<Parallel>& tensors,
               std::size_t index) {
    const MpisOp& op = at.plan.ops[index];
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    Levels& c = chains_[index];
    c.levels.clear();
    Tensor level0;
    level0.view = tensors.view(op.inputs[0]);
    c.levels.push_back(std::move(level0));
    for (;;) {
      const LogTensorView cur = c.levels.back().view;
      const std::int64_t steps = cur.extent_of(t);
      if (steps == 1) break;
      const std::int64_t pairs = steps / 2;
      std::vector<std::int64_t> extents = cur.extents;
      extents[cur.axis_of(t)] = pairs + steps % 2;
      Tensor next = contiguous_log_tensor(par, cur.vars, extents);
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      const LogTensorView head = next.view.slice(t, 0, 1, pairs);
      run_log_sum_product_plan(par, plan_log_sum_product({a, b}, {scratch_var_}, &cur.vars),
                               next.owned.data(), &head);
      if (steps % 2 == 1)
        copy_log_tensor(par, cur.slice(t, steps - 1, 1, 1), next.view.slice(t, pairs, 1, 1));
      c.levels.push_back(std::move(next));
    }
    const LogTensorView top = c.levels.back().view;
    const LogSumProductPlan close = plan_log_sum_product({top, minus_log_k()}, {t, lag, chain},
                                                         &at.plan.tensors[op.output].vars);
    run_log_sum_product_plan(par, close, tensors.allocate(par, at, op.output));
  }

  /// Chain operation `index` backward: μ of its input from μ of its output, down the tree.
  void backward(const Parallel& par, const MpisLayout& at, MpisContraction<Parallel>& tensors,
                std::size_t index) {
    const MpisOp& op = at.plan.ops[index];
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    Levels& c = chains_[index];
    // The closing step: μ(top) = top − log K + μ(out) − out.
    const LogTensorView top = c.levels.back().view;
    Tensor mu_next = contiguous_log_tensor(par, top.vars, top.extents);
    {
      const Tensor w =
          outside_weight(par, tensors.outside(op.output).view, tensors.view(op.output));
      outside_into(par, {top, minus_log_k(), w.view}, top, mu_next.view);
    }
    for (std::size_t l = c.levels.size() - 1; l-- > 0;) {
      const LogTensorView cur = c.levels[l].view;
      const LogTensorView next = c.levels[l + 1].view;
      const std::int64_t steps = cur.extent_of(t), pairs = steps / 2;
      Tensor mu_cur = contiguous_log_tensor(par, cur.vars, cur.extents);
      const Tensor w =
          outside_weight(par, mu_next.view.slice(t, 0, 1, pairs), next.slice(t, 0, 1, pairs));
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      outside_into(par, {a, b, w.view}, a,
                   mu_cur.view.slice(t, 0, 2, pairs).renamed(chain, scratch_var_));
      outside_into(par, {a, b, w.view}, b,
                   mu_cur.view.slice(t, 1, 2, pairs).renamed(lag, scratch_var_));
      if (steps % 2 == 1)
        copy_log_tensor(par, mu_next.view.slice(t, pairs, 1, 1),
                        mu_cur.view.slice(t, steps - 1, 1, 1));
      mu_next = std::move(mu_cur);
    }
    tensors.set_outside(op.inputs[0], std::move(mu_next));
  }

  /// Chain operation `index`'s posterior index draws into `draws`: the ends from the top
  /// matrix, then down the tree each level's pairs draw the value at their join.
  void sample(const Parallel& par, const MpisLayout& at, mpis_elements::RunStreams streams,
              MpisIndexDraws<Parallel>& draws, std::size_t index) const {
    const MpisOp& op = at.plan.ops[index];
    const PlatedStructure& s = at.structure;
    const int t = op.eliminate[0], lag = op.eliminate[1], chain = op.eliminate[2];
    const Levels& c = chains_[index];
    const std::int64_t steps = s.plate_decl(op.plate).size;
    const int outer_plate = s.plate_decl(op.plate).parent;
    const std::int64_t outer = at.window_instances(outer_plate);  // outer series in the window
    const std::int64_t series = draws.draws() * at.runs() * outer;
    PolicyArray<Parallel, std::int32_t> boundary =
        par.template allocate<std::int32_t>(series * (steps + 1));
    const std::uint32_t purpose = kMpisIndexPurpose + 64u * static_cast<std::uint32_t>(index);

    // The ends: (lag before step 0, chain at step T − 1) from the top matrix.
    {
      const LogTensorView top = c.levels.back().view;
      mpis_elements::IndexSampler sampler;
      const std::vector<int> kept = vars_but(top, lag, chain);
      sampler.element = plan_log_sum_product({top}, {lag, chain}, &kept).element;
      sampler.context = draws.context(at, {top}, op.plate, kept);
      sampler.out[0] = sampler.out[1] = boundary.data();
      sampler.out_instances = outer * (steps + 1);
      sampler.out_scale = steps + 1;
      sampler.out_offset[0] = 0;
      sampler.out_offset[1] = steps;
      sampler.element_base = at.window_base(outer_plate);  // the boundary array is the window's
      sampler.uniforms = {streams, purpose};
      par.for_each(draws.draws() * at.runs() * sampler.context.elements, sampler,
                   3 * sampler.element.elim_size);
    }
    // Down the tree: each level's pairs draw the value at their join.
    for (std::size_t l = c.levels.size() - 1; l-- > 0;) {
      const LogTensorView cur = c.levels[l].view;
      const std::int64_t pairs = cur.extent_of(t) / 2;
      const LogTensorView a = cur.slice(t, 0, 2, pairs).renamed(chain, scratch_var_);
      const LogTensorView b = cur.slice(t, 1, 2, pairs).renamed(lag, scratch_var_);
      mpis_elements::ChainMidpointSampler sampler;
      // Only the element's sweep over m is used; the ends enter through left/right strides.
      sampler.element = plan_log_sum_product({a, b}, {scratch_var_}).element;
      sampler.context = draws.context(at, {a, b}, op.plate, vars_but(cur, lag, chain));
      sampler.left_stride[0] = a.stride_of(lag);
      sampler.right_stride[1] = b.stride_of(chain);
      sampler.boundary = boundary.data();
      sampler.steps = steps;
      sampler.pairs = pairs;
      sampler.span = std::int64_t{2} << l;
      sampler.element_base = at.window_base(outer_plate) * pairs;
      sampler.uniforms = {streams, purpose + static_cast<std::uint32_t>(l) + 1u};
      par.for_each(draws.draws() * at.runs() * sampler.context.elements, sampler,
                   3 * sampler.element.elim_size);
    }
    mpis_elements::ChainIndicesFromBoundary unpack;
    unpack.boundary = boundary.data();
    unpack.chain = draws.data(chain);
    unpack.lag = draws.data(lag);
    unpack.steps = steps;
    unpack.window_outer = outer;
    unpack.outer_instances = s.instances(outer_plate);
    unpack.outer_base = at.window_base(outer_plate);
    par.for_each(series * steps, unpack);
  }

  /// Frees the levels of operations [first, last] (a chunked plate's window).
  void release(int first, int last) {
    for (int i = first; i <= last; ++i) chains_[static_cast<std::size_t>(i)] = Levels{};
  }

 private:
  struct Levels {
    std::vector<Tensor> levels;  ///< level 0 views the chain's input; level L is the top
  };

  LogTensorView minus_log_k() const { return LogTensorView{minus_log_k_.data(), {}, {}, {}}; }

  /// The variables of `v` other than the chain's two ends.
  static std::vector<int> vars_but(const LogTensorView& v, int lag, int chain) {
    std::vector<int> kept;
    for (int var : v.vars)
      if (var != lag && var != chain) kept.push_back(var);
    return kept;
  }

  std::vector<Levels> chains_;
  PolicyArray<Parallel, double> minus_log_k_;
  int scratch_var_ = 0;
};

}  // namespace myriad
