// Host log-space sum-product (mpis.md §3.2–§3.4) and elimination orders (§3.3).

#include "myriad/estimate/log_contract.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>

namespace myriad {

namespace {

bool contains(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

LogSumProductPlan plan_log_sum_product(const std::vector<LogTensorView>& inputs,
                                       const std::vector<int>& eliminate,
                                       const std::vector<int>* out_vars) {
  MYRIAD_EXPECTS(!inputs.empty(), "log_sum_product: no input tensors");
  MYRIAD_EXPECTS(inputs.size() <= static_cast<std::size_t>(kMaxStepInputs),
                 "log_sum_product: ", inputs.size(), " inputs in one step (at most ",
                 kMaxStepInputs, ")");

  // The union D of the inputs' variables, in order of first appearance, with one extent each.
  std::vector<int> vars;
  std::vector<std::int64_t> extents;
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    const LogTensorView& t = inputs[j];
    MYRIAD_EXPECTS(t.vars.size() == t.extents.size() && t.vars.size() == t.strides.size(),
                   "log_sum_product: input ", j, " has inconsistent axes");
    for (int a = 0; a < t.rank(); ++a) {
      const auto it = std::find(vars.begin(), vars.end(), t.vars[a]);
      if (it == vars.end()) {
        vars.push_back(t.vars[a]);
        extents.push_back(t.extents[a]);
      } else {
        const std::int64_t extent = extents[static_cast<std::size_t>(it - vars.begin())];
        MYRIAD_EXPECTS(extent == t.extents[a], "log_sum_product: variable ", t.vars[a],
                       " has extent ", t.extents[a], " in input ", j, " but ", extent,
                       " in an earlier input");
      }
    }
  }
  for (std::size_t b = 0; b < eliminate.size(); ++b) {
    MYRIAD_EXPECTS(contains(vars, eliminate[b]), "log_sum_product: variable ", eliminate[b],
                   " to eliminate is carried by no input");
    MYRIAD_EXPECTS(std::count(eliminate.begin(), eliminate.end(), eliminate[b]) == 1,
                   "log_sum_product: variable ", eliminate[b], " is listed twice to eliminate");
  }
  const auto extent_of = [&](int var) {
    return extents[static_cast<std::size_t>(std::find(vars.begin(), vars.end(), var) -
                                            vars.begin())];
  };

  LogSumProductPlan plan;
  if (out_vars) {
    for (int v : *out_vars) {
      MYRIAD_EXPECTS(contains(vars, v) && !contains(eliminate, v),
                     "log_sum_product: output variable ", v,
                     " is carried by no input or is eliminated");
      MYRIAD_EXPECTS(std::count(out_vars->begin(), out_vars->end(), v) == 1,
                     "log_sum_product: output variable ", v, " is listed twice");
    }
    MYRIAD_EXPECTS(out_vars->size() + eliminate.size() == vars.size(),
                   "log_sum_product: the output variables leave some input variable neither kept "
                   "nor eliminated");
    plan.out_vars = *out_vars;
  } else {
    for (int v : vars)
      if (!contains(eliminate, v)) plan.out_vars.push_back(v);
  }
  MYRIAD_EXPECTS(plan.out_vars.size() <= static_cast<std::size_t>(kMaxStepAxes) &&
                     eliminate.size() <= static_cast<std::size_t>(kMaxStepAxes),
                 "log_sum_product: ", plan.out_vars.size(), " kept and ", eliminate.size(),
                 " eliminated axes (at most ", kMaxStepAxes, " each)");
  std::vector<std::int64_t> elim_extents;
  for (int v : plan.out_vars) plan.out_extents.push_back(extent_of(v));
  for (int v : eliminate) elim_extents.push_back(extent_of(v));
  plan.out_size = checked_index_space_size(plan.out_extents, "log_sum_product (output)");

  LogSumProductElement& k = plan.element;
  k.inputs = static_cast<int>(inputs.size());
  k.out_axes = static_cast<int>(plan.out_vars.size());
  k.elim_axes = static_cast<int>(eliminate.size());
  k.elim_size = checked_index_space_size(elim_extents, "log_sum_product (eliminated variables)");
  for (int a = 0; a < k.out_axes; ++a) k.out_extent[a] = plan.out_extents[a];
  for (int b = 0; b < k.elim_axes; ++b) k.elim_extent[b] = elim_extents[b];
  for (int j = 0; j < k.inputs; ++j) {
    k.data[j] = inputs[j].data;
    bool varies = false;
    for (int a = 0; a < k.out_axes; ++a) k.out_stride[j][a] = inputs[j].stride_of(plan.out_vars[a]);
    for (int b = 0; b < k.elim_axes; ++b) {
      k.elim_stride[j][b] = inputs[j].stride_of(eliminate[b]);
      varies = varies || (k.elim_stride[j][b] != 0 && k.elim_extent[b] > 1);
    }
    if (varies)
      k.varying_input[k.varying++] = j;
    else
      k.constant_input[k.constants++] = j;
  }
  return plan;
}

LogTensor log_sum_product(const std::vector<const LogTensor*>& inputs,
                          const std::vector<int>& eliminate, const std::vector<int>* out_vars) {
  MYRIAD_EXPECTS(!inputs.empty(), "log_sum_product: no input tensors");
  std::vector<LogTensorView> views;
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    MYRIAD_EXPECTS(inputs[j] != nullptr, "log_sum_product: input ", j, " is null");
    const LogTensor& t = *inputs[j];
    // +inf or NaN would make the max shift meaningless; −inf is a zero weight.
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double x = t.data()[i];
      MYRIAD_EXPECTS(!std::isnan(x) && x != INFINITY, "log_sum_product: input ", j, " holds ", x,
                     " at element ", i, " (log values must be finite or -inf)");
    }
    views.push_back(t.view());
  }
  const LogSumProductPlan plan = plan_log_sum_product(views, eliminate, out_vars);
  LogTensor out(plan.out_vars, plan.out_extents);
  const LogSumProductInto step{plan.element, out.data()};
  const std::int64_t n_out = plan.out_size;
#pragma omp parallel for schedule(static) if (n_out * plan.element.elim_size >= \
                                              (std::int64_t{1} << 15))
  for (std::int64_t o = 0; o < n_out; ++o) step(o);
  return out;
}

LogTensor log_sum_product(const std::vector<LogTensor>& inputs, const std::vector<int>& eliminate,
                          const std::vector<int>* out_vars) {
  std::vector<const LogTensor*> pointers;
  for (const LogTensor& t : inputs) pointers.push_back(&t);
  return log_sum_product(pointers, eliminate, out_vars);
}

namespace {

/// The live tensors and the variables still to eliminate while an order is being built.
struct EliminationState {
  std::vector<int> ids;                  // live tensor ids
  std::vector<std::vector<int>> scopes;  // their scopes, ascending
  std::vector<int> remaining;            // variables still to eliminate, ascending
  int next_id = 0;                       // id of the next step's output
};

/// The step that eliminates `var` from `state` (mpis.md §3.2): merge every live tensor that
/// carries it and also sum out each remaining variable that no other live tensor carries.
EliminationStep step_for(const EliminationState& state, int var) {
  EliminationStep step;
  std::vector<int> merged;  // D_t
  std::vector<bool> is_input(state.ids.size(), false);
  for (std::size_t t = 0; t < state.ids.size(); ++t) {
    if (!contains(state.scopes[t], var)) continue;
    is_input[t] = true;
    step.inputs.push_back(state.ids[t]);
    merged.insert(merged.end(), state.scopes[t].begin(), state.scopes[t].end());
  }
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  for (int v : merged) {
    bool carried_elsewhere = false;
    for (std::size_t t = 0; t < state.ids.size() && !carried_elsewhere; ++t)
      carried_elsewhere = !is_input[t] && contains(state.scopes[t], v);
    if (contains(state.remaining, v) && !carried_elsewhere)
      step.eliminate.push_back(v);
    else
      step.output_vars.push_back(v);
  }
  std::sort(step.inputs.begin(), step.inputs.end());
  step.clique = static_cast<int>(merged.size());
  return step;
}

void apply_step(EliminationState& state, const EliminationStep& step) {
  for (std::size_t t = state.ids.size(); t-- > 0;) {
    if (!contains(step.inputs, state.ids[t])) continue;
    state.ids.erase(state.ids.begin() + static_cast<std::ptrdiff_t>(t));
    state.scopes.erase(state.scopes.begin() + static_cast<std::ptrdiff_t>(t));
  }
  state.ids.push_back(state.next_id++);
  state.scopes.push_back(step.output_vars);
  for (int v : step.eliminate)
    state.remaining.erase(std::find(state.remaining.begin(), state.remaining.end(), v));
}

/// Candidate steps from `state`, smallest clique first (then smaller output, then variable id).
std::vector<EliminationStep> candidate_steps(const EliminationState& state) {
  std::vector<EliminationStep> steps;
  for (int v : state.remaining) steps.push_back(step_for(state, v));
  std::stable_sort(steps.begin(), steps.end(),
                   [](const EliminationStep& a, const EliminationStep& b) {
                     if (a.clique != b.clique) return a.clique < b.clique;
                     return a.output_vars.size() < b.output_vars.size();
                   });
  return steps;
}

}  // namespace

EliminationOrder choose_elimination_order(const std::vector<std::vector<int>>& scopes,
                                          const std::vector<int>& eliminate,
                                          EliminationOrderConfig config) {
  MYRIAD_EXPECTS(!scopes.empty(), "choose_elimination_order: no tensors");
  EliminationState start;
  for (std::size_t t = 0; t < scopes.size(); ++t) {
    std::vector<int> scope = scopes[t];
    std::sort(scope.begin(), scope.end());
    MYRIAD_EXPECTS(std::adjacent_find(scope.begin(), scope.end()) == scope.end(),
                   "choose_elimination_order: tensor ", t, " lists a variable twice");
    start.ids.push_back(static_cast<int>(t));
    start.scopes.push_back(scope);
  }
  start.next_id = static_cast<int>(scopes.size());
  for (int v : eliminate) {
    MYRIAD_EXPECTS(std::count(eliminate.begin(), eliminate.end(), v) == 1,
                   "choose_elimination_order: variable ", v, " is listed twice to eliminate");
    bool carried = false;
    for (const auto& scope : start.scopes) carried = carried || contains(scope, v);
    MYRIAD_EXPECTS(carried, "choose_elimination_order: variable ", v,
                   " to eliminate is carried by no tensor");
    start.remaining.push_back(v);
  }
  std::sort(start.remaining.begin(), start.remaining.end());

  // Greedy: always take the step with the smallest clique (mpis.md §3.3).
  EliminationOrder best;
  EliminationState state = start;
  while (!state.remaining.empty()) {
    const EliminationStep step = candidate_steps(state).front();
    best.max_clique = std::max(best.max_clique, step.clique);
    best.steps.push_back(step);
    apply_step(state, step);
  }

  // Exhaustive: depth-first over every order, greedy choices first, keeping only strictly
  // better orders, so the greedy order stands when it is already optimal.
  if (static_cast<int>(start.remaining.size()) <= config.exhaustive_max_vars) {
    std::vector<EliminationStep> path;
    std::function<void(const EliminationState&, int)> search = [&](const EliminationState& s,
                                                                   int path_max) {
      if (s.remaining.empty()) {
        best.steps = path;
        best.max_clique = path_max;
        return;
      }
      for (const EliminationStep& step : candidate_steps(s)) {
        if (std::max(path_max, step.clique) >= best.max_clique) continue;
        EliminationState next = s;
        apply_step(next, step);
        path.push_back(step);
        search(next, std::max(path_max, step.clique));
        path.pop_back();
      }
    };
    search(start, 0);
    best.exhaustive = true;
  }

  // Merge what is left into one tensor; its scope is the same for every order.
  state = start;
  for (const EliminationStep& step : best.steps) apply_step(state, step);
  if (state.ids.size() > 1) {
    EliminationStep last;
    last.inputs = state.ids;
    std::sort(last.inputs.begin(), last.inputs.end());
    for (const auto& scope : state.scopes)
      last.output_vars.insert(last.output_vars.end(), scope.begin(), scope.end());
    std::sort(last.output_vars.begin(), last.output_vars.end());
    last.output_vars.erase(std::unique(last.output_vars.begin(), last.output_vars.end()),
                           last.output_vars.end());
    last.clique = static_cast<int>(last.output_vars.size());
    best.max_clique = std::max(best.max_clique, last.clique);
    best.steps.push_back(last);
  }
  return best;
}

std::vector<LogTensor> run_elimination(const std::vector<LogTensor>& tensors,
                                       const EliminationOrder& order) {
  MYRIAD_EXPECTS(!tensors.empty(), "run_elimination: no tensors");
  if (order.steps.empty()) {
    MYRIAD_EXPECTS(tensors.size() == 1, "run_elimination: an order with no steps leaves ",
                   tensors.size(), " tensors, not one");
    return {tensors.front()};
  }
  std::vector<LogTensor> messages;
  messages.reserve(order.steps.size());  // keeps pointers into it valid
  std::vector<const LogTensor*> pool;
  for (const LogTensor& t : tensors) pool.push_back(&t);
  std::vector<bool> consumed(tensors.size() + order.steps.size(), false);
  for (std::size_t s = 0; s < order.steps.size(); ++s) {
    std::vector<const LogTensor*> inputs;
    for (int id : order.steps[s].inputs) {
      MYRIAD_EXPECTS(id >= 0 && id < static_cast<int>(pool.size()) && !consumed[id],
                     "run_elimination: step ", s, " uses tensor ", id,
                     ", which does not exist yet or was consumed already");
      consumed[id] = true;
      inputs.push_back(pool[id]);
    }
    messages.push_back(log_sum_product(inputs, order.steps[s].eliminate));
    pool.push_back(&messages.back());
  }
  const std::size_t unconsumed =
      static_cast<std::size_t>(std::count(consumed.begin(), consumed.end() - 1, false));
  MYRIAD_EXPECTS(unconsumed == 0, "run_elimination: the order leaves ", unconsumed,
                 " tensors besides its result unconsumed (was it chosen for these tensors?)");
  return messages;
}

LogTensor contract_all(const std::vector<LogTensor>& tensors, const std::vector<int>& keep,
                       EliminationOrderConfig config) {
  MYRIAD_EXPECTS(!tensors.empty(), "contract_all: no tensors");
  for (int v : keep)
    MYRIAD_EXPECTS(std::count(keep.begin(), keep.end(), v) == 1, "contract_all: variable ", v,
                   " is listed twice in keep");
  std::vector<std::vector<int>> scopes;
  std::vector<int> eliminate;
  for (const LogTensor& t : tensors) {
    scopes.push_back(t.vars());
    for (int v : t.vars())
      if (!contains(keep, v) && !contains(eliminate, v)) eliminate.push_back(v);
  }
  const EliminationOrder order = choose_elimination_order(scopes, eliminate, config);
  LogTensor result = std::move(run_elimination(tensors, order).back());
  std::vector<int> kept;
  for (int v : keep)
    if (result.has_var(v)) kept.push_back(v);
  return result.permuted(kept);
}

}  // namespace myriad
