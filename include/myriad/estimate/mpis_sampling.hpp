#pragma once
// Exact posterior index sampling of massively parallel importance sampling (mpis.md §6): index
// tuples drawn from P_z(k) by walking the forward steps in reverse elimination order, each step
// drawing its eliminated K-dims jointly given every K-dim drawn before. MpisIndexDraws owns the
// draws (one array per K-dim, [draw][run][instance]) and samples the eliminate operations; a
// timeseries chain's draws come from estimate/mpis_timeseries.hpp through the same context.

#include <cstdint>
#include <vector>

#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/mpis_contraction.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

template <class Parallel>
class MpisIndexDraws {
 public:
  /// Frees earlier draws and allocates `draws` draws of every K-dim of the plan.
  void start(const Parallel& par, const MpisLayout& at, std::int64_t draws) {
    draws_ = draws;
    index_.clear();
    index_.resize(at.plan.var_extent.size());
    for (std::size_t v = 0; v < at.plan.var_extent.size(); ++v)
      if (at.plan.is_k_var(static_cast<int>(v)))
        index_[v] = par.template allocate<std::int32_t>(
            draws * at.runs() * at.structure.instances(at.plan.var_plate[v]));
  }

  /// Draws per run; 0 before start().
  std::int64_t draws() const { return draws_; }
  /// The draws of K-dim `var`, [draw][run][instance]; −1 in a run whose log P̂ is −inf.
  const PolicyArray<Parallel, std::int32_t>& of(int var) const { return index_[var]; }
  std::int32_t* data(int var) { return index_[var].data(); }

  /// The batch axes (run, then the plates of `plate`'s path) and the already-sampled K-dims
  /// among `kept` of a sampling step over `inputs`.
  mpis_elements::SampledContext context(const MpisLayout& at,
                                        const std::vector<LogTensorView>& inputs, int plate,
                                        const std::vector<int>& kept) const {
    const PlatedStructure& s = at.structure;
    mpis_elements::SampledContext context;
    context.runs = at.runs();
    std::vector<int> batch{MpisPlan::kRunVar};
    for (int p : s.path(plate)) batch.push_back(at.plan.plate_var[p]);
    context.batch_axes = static_cast<int>(batch.size());
    for (std::size_t a = 0; a < batch.size(); ++a) {
      context.batch_extent[a] = inputs_extent(inputs, batch[a]);
      for (std::size_t j = 0; j < inputs.size(); ++j)
        context.batch_stride[j][a] = inputs[j].stride_of(batch[a]);
      if (a > 0) context.elements *= context.batch_extent[a];
    }
    for (int v : kept) {
      if (!at.plan.is_k_var(v)) continue;
      const int c = context.conditioned++;
      const int home = at.plan.var_plate[v];
      context.index[c] = index_[v].data();
      context.instances[c] = s.instances(home);
      context.base[c] = at.window_base(home);
      context.divisor[c] = context.elements / at.window_instances(home);
      for (std::size_t j = 0; j < inputs.size(); ++j) context.stride[j][c] = inputs[j].stride_of(v);
    }
    return context;
  }

  /// Draws the eliminated K-dims of eliminate operation `i` (one with something to eliminate)
  /// from the step's conditional given the K-dims its output keeps.
  void sample_elimination(const Parallel& par, const MpisLayout& at,
                          const MpisContraction<Parallel>& tensors,
                          mpis_elements::RunStreams streams, std::size_t i) {
    const MpisOp& op = at.plan.ops[i];
    std::vector<LogTensorView> inputs;
    for (int id : op.inputs) inputs.push_back(tensors.view(id));
    const std::vector<int>& kept = at.plan.tensors[op.output].vars;
    mpis_elements::IndexSampler sampler;
    sampler.element = plan_log_sum_product(inputs, op.eliminate, &kept).element;
    sampler.context = context(at, inputs, op.plate, kept);
    for (std::size_t a = 0; a < op.eliminate.size(); ++a)
      sampler.out[a] = index_[op.eliminate[a]].data();
    sampler.out_instances = at.structure.instances(op.plate);
    sampler.element_base = at.window_base(op.plate);
    sampler.out_element_base = sampler.element_base;
    sampler.uniforms = {streams, kMpisIndexPurpose + 64u * static_cast<std::uint32_t>(i)};
    par.for_each(draws_ * at.runs() * sampler.context.elements, sampler,
                 3 * sampler.element.elim_size);
  }

 private:
  static std::int64_t inputs_extent(const std::vector<LogTensorView>& inputs, int var) {
    for (const LogTensorView& t : inputs)
      if (t.has_var(var)) return t.extent_of(var);
    return 1;
  }

  std::int64_t draws_ = 0;
  std::vector<PolicyArray<Parallel, std::int32_t>> index_;
};

}  // namespace myriad
