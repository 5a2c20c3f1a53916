// plan_mpis: compiling a plated structure into log-factor tensors and contraction operations
// (mpis.md §3.1–§3.6).

#include "myriad/estimate/mpis_plan.hpp"

#include <algorithm>
#include <functional>
#include <sstream>

namespace myriad {

namespace {

void add_unique(std::vector<int>& list, int v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

bool contains(const std::vector<int>& list, int v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

std::int64_t MpisTensor::size() const {
  std::int64_t n = 1;
  for (std::int64_t e : extents) n *= e;
  return n;
}

double MpisPlan::forward_terms() const {
  double terms = 0;
  for (const MpisOp& op : ops) {
    double eliminated = 1;
    for (int v : op.eliminate) eliminated *= static_cast<double>(var_extent[v]);
    const double out = static_cast<double>(tensors[op.output].size());
    // A chain of T log-matrix products costs about T·K³ terms; the closing LSE K² per batch.
    terms +=
        op.kind == MpisOpKind::chain ? out * eliminated * static_cast<double>(k) : out * eliminated;
  }
  return terms;
}

double MpisPlan::forward_bytes() const {
  double elements = 0;
  for (const MpisTensor& t : tensors) elements += static_cast<double>(t.size());
  for (const MpisOp& op : ops)
    if (op.kind == MpisOpKind::chain) elements += chain_level_elements(op);
  return 8.0 * elements;
}

double MpisPlan::chain_level_elements(const MpisOp& op) const {
  const MpisTensor& input = tensors[static_cast<std::size_t>(op.inputs[0])];
  const std::int64_t steps = var_extent[static_cast<std::size_t>(op.eliminate[0])];
  const double per_step = static_cast<double>(input.size()) / static_cast<double>(steps);
  double matrices = 0;
  for (std::int64_t level = steps; level > 1; level = (level + 1) / 2) matrices += (level + 1) / 2;
  return per_step * matrices;
}

MpisPlan plan_mpis(const PlatedStructure& s, std::int64_t k, int runs,
                   EliminationOrderConfig order_config) {
  s.validate();
  MYRIAD_EXPECTS(k >= 1, "MP IS: K must be at least 1, got ", k);
  MYRIAD_EXPECTS(runs >= 1, "MP IS: runs must be at least 1, got ", runs);
  MpisPlan plan;
  plan.k = k;
  plan.runs = runs;

  // Variables: the run, the plates, then the K-dims (a chain latent's lag just before it).
  plan.var_extent.push_back(runs);
  plan.var_plate.push_back(kRootPlate);
  plan.var_latent.push_back(-1);
  for (int p = 0; p < s.plate_count(); ++p) {
    plan.plate_var.push_back(static_cast<int>(plan.var_extent.size()));
    plan.var_extent.push_back(s.plate_decl(p).size);
    plan.var_plate.push_back(p);
    plan.var_latent.push_back(-1);
  }
  for (int g = 0; g < s.latent_count(); ++g) {
    const LatentDecl& decl = s.latent_decl(g);
    int lag = -1;
    if (contains(decl.parents, kPreviousStep)) {
      lag = static_cast<int>(plan.var_extent.size());
      plan.var_extent.push_back(k);
      plan.var_plate.push_back(decl.plate);
      plan.var_latent.push_back(g);
    }
    plan.lag_var.push_back(lag);
    plan.latent_var.push_back(static_cast<int>(plan.var_extent.size()));
    plan.var_extent.push_back(k);
    plan.var_plate.push_back(decl.plate);
    plan.var_latent.push_back(g);
  }

  auto make_tensor = [&](std::vector<int> vars, int plate) {
    std::sort(vars.begin(), vars.end());
    MpisTensor t;
    t.vars = vars;
    double elements = 1;
    for (int v : vars) {
      t.extents.push_back(plan.var_extent[v]);
      elements *= static_cast<double>(plan.var_extent[v]);
    }
    t.plate = plate;
    // Sizes must fit 64-bit indices; what may be allocated (kMaxLogTensorSize, after plate
    // chunking) is checked by the scheduler and at allocation.
    MYRIAD_EXPECTS(elements <= 0x1p62, "MP IS at K = ", k, " with ", runs,
                   " run(s): a tensor in plate ",
                   plate == kRootPlate ? std::string("(root)") : s.plate_decl(plate).name,
                   " would hold ", elements, " elements: lower K");
    plan.tensors.push_back(t);
    return static_cast<int>(plan.tensors.size()) - 1;
  };
  auto plate_vars_of = [&](int plate) {
    std::vector<int> vars{MpisPlan::kRunVar};
    for (int p : s.path(plate)) vars.push_back(plan.plate_var[p]);
    return vars;
  };

  // Log-factors ℓ_g and λ_o (mpis.md §3.1).
  for (int g = 0; g < s.latent_count(); ++g) {
    const LatentDecl& decl = s.latent_decl(g);
    std::vector<int> vars = plate_vars_of(decl.plate);
    for (int p : decl.parents)
      vars.push_back(p == kPreviousStep ? plan.lag_var[g] : plan.latent_var[p]);
    vars.push_back(plan.latent_var[g]);
    plan.latent_factor.push_back(make_tensor(vars, decl.plate));
  }
  for (int o = 0; o < s.observed_count(); ++o) {
    const ObservedDecl& decl = s.observed_decl(o);
    int home = kRootPlate;  // the deepest parent plate; deeper data-only plates are summed in
    for (int p : decl.parents) {
      const int plate = s.latent_decl(p).plate;
      if (s.path(plate).size() > s.path(home).size()) home = plate;
    }
    std::vector<int> vars = plate_vars_of(home);
    for (int p : decl.parents) vars.push_back(plan.latent_var[p]);
    plan.observed_home.push_back(home);
    plan.observed_factor.push_back(make_tensor(vars, home));
  }

  // LOGPQ (mpis.md §3.2): contract each plate after its children.
  std::function<int(int)> contract = [&](int plate) -> int {
    std::vector<int> live;
    for (int c = 0; c < s.plate_count(); ++c)
      if (s.plate_decl(c).parent == plate) {
        const int r = contract(c);
        if (r >= 0) live.push_back(r);
      }
    for (int g = 0; g < s.latent_count(); ++g)
      if (s.latent_decl(g).plate == plate) live.push_back(plan.latent_factor[g]);
    for (int o = 0; o < s.observed_count(); ++o)
      if (plan.observed_home[o] == plate) live.push_back(plan.observed_factor[o]);
    if (live.empty()) return -1;

    const int chain = plate == kRootPlate ? -1 : s.chain_latent(plate);
    std::vector<int> local;
    for (int g = 0; g < s.latent_count(); ++g)
      if (s.latent_decl(g).plate == plate && g != chain) local.push_back(plan.latent_var[g]);

    // The order is chosen on K-dims only: plate dims and the run are batch dims of every step.
    std::vector<std::vector<int>> scopes;
    for (int t : live) {
      std::vector<int> scope;
      for (int v : plan.tensors[t].vars)
        if (plan.is_k_var(v)) scope.push_back(v);
      scopes.push_back(scope);
    }
    const EliminationOrder order = choose_elimination_order(scopes, local, order_config);
    std::vector<int> ids = live;  // order's tensor ids → plan tensor ids
    int result = live.size() == 1 ? live[0] : -1;
    for (const EliminationStep& step : order.steps) {
      MpisOp op;
      op.kind = MpisOpKind::eliminate;
      op.plate = plate;
      op.eliminate = step.eliminate;
      op.clique = step.clique;
      std::vector<int> vars;
      for (int id : step.inputs) {
        op.inputs.push_back(ids[id]);
        for (int v : plan.tensors[ids[id]].vars) add_unique(vars, v);
      }
      MYRIAD_EXPECTS(op.inputs.size() <= static_cast<std::size_t>(kMaxStepInputs),
                     "MP IS: a step in plate ",
                     plate == kRootPlate ? std::string("(root)") : s.plate_decl(plate).name,
                     " merges ", op.inputs.size(), " tensors (at most ", kMaxStepInputs, ")");
      MYRIAD_EXPECTS(vars.size() <= static_cast<std::size_t>(kMaxStepAxes), "MP IS: a step has ",
                     vars.size(), " axes (at most ", kMaxStepAxes, ")");
      std::vector<int> out_vars;
      for (int v : vars)
        if (!contains(step.eliminate, v)) out_vars.push_back(v);
      op.output = make_tensor(out_vars, plate);
      ids.push_back(op.output);
      result = op.output;
      plan.max_clique = std::max(plan.max_clique, op.clique);
      plan.ops.push_back(op);
    }
    if (plate == kRootPlate) return result;

    const int plate_var = plan.plate_var[plate];
    MpisOp op;
    op.plate = plate;
    op.inputs = {result};
    std::vector<int> out_vars = plan.tensors[result].vars;
    if (chain >= 0) {
      op.kind = MpisOpKind::chain;
      op.eliminate = {plate_var, plan.lag_var[chain], plan.latent_var[chain]};
      op.clique = 3;
      plan.max_clique = std::max(plan.max_clique, op.clique);
    } else {
      op.kind = MpisOpKind::plate_sum;
      op.eliminate = {plate_var};
    }
    for (int v : op.eliminate) {
      MYRIAD_EXPECTS(contains(out_vars, v), "MP IS: internal error: plate ",
                     s.plate_decl(plate).name, " result lacks variable ", v);
      out_vars.erase(std::find(out_vars.begin(), out_vars.end(), v));
    }
    op.output = make_tensor(out_vars, s.plate_decl(plate).parent);
    plan.ops.push_back(op);
    return op.output;
  };
  plan.result = contract(kRootPlate);
  MYRIAD_EXPECTS(
      plan.result >= 0 && plan.tensors[plan.result].vars == std::vector<int>{MpisPlan::kRunVar},
      "MP IS: internal error: the contraction does not end in one value per run");
  return plan;
}

void validate_chunking(const PlatedStructure& s, const MpisChunking& chunking) {
  if (!chunking.active()) return;
  MYRIAD_EXPECTS(chunking.plate >= 0 && chunking.plate < s.plate_count(),
                 "MP IS: the plate to chunk does not exist (", chunking.plate, ")");
  const PlateDecl& decl = s.plate_decl(chunking.plate);
  MYRIAD_EXPECTS(decl.parent == kRootPlate, "MP IS: only a top-level plate can be chunked, not '",
                 decl.name, "'");
  MYRIAD_EXPECTS(!decl.timeseries, "MP IS: a timeseries plate cannot be chunked ('", decl.name,
                 "': its steps depend on each other)");
  MYRIAD_EXPECTS(chunking.size >= 1, "MP IS: the chunk size must be at least 1, got ",
                 chunking.size);
  MYRIAD_EXPECTS(chunking.size <= decl.size, "MP IS: a chunk of ", chunking.size,
                 " elements of plate '", decl.name, "', which has ", decl.size);
}

bool in_chunk(const MpisPlan& plan, const MpisChunking& chunking, int id) {
  if (!chunking.active()) return false;
  const auto& vars = plan.tensors[static_cast<std::size_t>(id)].vars;
  return std::find(vars.begin(), vars.end(), plan.plate_var[chunking.plate]) != vars.end();
}

double largest_tensor_elements(const MpisPlan& plan, const MpisChunking& chunking,
                               const PlatedStructure& s) {
  double largest = 0;
  for (std::size_t id = 0; id < plan.tensors.size(); ++id) {
    double elements = static_cast<double>(plan.tensors[id].size());
    if (in_chunk(plan, chunking, static_cast<int>(id)))
      elements *= static_cast<double>(std::min(chunking.size, s.plate_decl(chunking.plate).size)) /
                  static_cast<double>(s.plate_decl(chunking.plate).size);
    largest = std::max(largest, elements);
  }
  return largest;
}

std::vector<std::string> describe_plan(const MpisPlan& plan, const PlatedStructure& s) {
  auto var_name = [&](int v) -> std::string {
    if (v == MpisPlan::kRunVar) return "run";
    if (!plan.is_k_var(v)) return s.plate_decl(plan.var_plate[v]).name;
    const int g = plan.var_latent[v];
    return plan.lag_var[g] == v ? s.latent_decl(g).name + "[t-1]" : s.latent_decl(g).name;
  };
  std::vector<std::string> lines;
  for (const MpisOp& op : plan.ops) {
    std::ostringstream line;
    line << (op.kind == MpisOpKind::eliminate   ? "eliminate"
             : op.kind == MpisOpKind::plate_sum ? "plate_sum"
                                                : "chain")
         << " in " << (op.plate == kRootPlate ? std::string("(root)") : s.plate_decl(op.plate).name)
         << ":";
    for (int v : op.eliminate) line << " " << var_name(v);
    if (op.kind != MpisOpKind::plate_sum) line << " (clique " << op.clique << ")";
    const auto elements = plan.tensors[op.output].size();
    line << " -> " << elements << (elements == 1 ? " element" : " elements");
    lines.push_back(line.str());
  }
  return lines;
}

}  // namespace myriad
