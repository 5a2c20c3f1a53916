#pragma once
// Factor evaluation of massively parallel importance sampling: the log-factor tensors ℓ_g and
// λ_o of MP IS (mpis.md §3.1), filled from the proposals' particles into the contraction's
// tensors, and the per-sample log weights of the global importance-sampling baseline
// (mpis.md §1). A NaN or +inf log-factor entry becomes −inf (zero weight) and is counted.

#include <cmath>
#include <cstdint>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/mpis_contraction.hpp"
#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/estimate/mpis_proposals.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

/// The axis geometry of log-factor `id` of latent g (−1 for an observation) whose declared
/// parents are `parents`: what each axis indexes, and the window a chunked plate's axis holds.
inline mpis_elements::FactorAxes factor_axes(const MpisLayout& at, int id, int g,
                                             const std::vector<int>& parents) {
  const MpisPlan& plan = at.plan;
  const MpisTensor& t = plan.tensors[id];
  const std::vector<std::int64_t> extents = at.extents_of(id);
  mpis_elements::FactorAxes axes;
  axes.axes = static_cast<int>(t.vars.size());
  for (int a = 0; a < axes.axes; ++a) {
    const int v = t.vars[a];
    axes.extent[a] = extents[a];
    axes.full_extent[a] = t.extents[a];
    if (at.windows.active() && v == at.window_var()) axes.offset[a] = at.windows.offset();
    if (v == MpisPlan::kRunVar) {
      axes.role[a] = mpis_elements::kAxisRun;
    } else if (!plan.is_k_var(v)) {
      axes.role[a] = mpis_elements::kAxisPlate;
    } else if (g >= 0 && v == plan.latent_var[g]) {
      axes.role[a] = mpis_elements::kAxisSelf;
    } else if (g >= 0 && v == plan.lag_var[g]) {
      axes.role[a] = mpis_elements::kAxisLag;
    } else {
      axes.role[a] = -100;
      for (std::size_t slot = 0; slot < parents.size(); ++slot)
        if (parents[slot] >= 0 && plan.latent_var[parents[slot]] == v)
          axes.role[a] = static_cast<int>(slot);
      MYRIAD_EXPECTS(axes.role[a] >= 0, "MpisEngine: internal error: axis of variable ", v,
                     " of tensor ", id, " has no role");
    }
  }
  return axes;
}

/// log P(z_g | parents) − log Q(z_g) of latent g's particles as the proposals hold them.
template <class Model, class Parallel>
mpis_elements::LatentLogWeight<Model> latent_log_weight(
    const Model& model, const PlatedStructure& s, const MpisProposals<Model, Parallel>& proposals,
    int g) {
  const LatentDecl& decl = s.latent_decl(g);
  return {model, g, proposals.group_view(s, g),
          proposals.group_parents(s, g, decl.parents, decl.plate), proposals.log_q(g)};
}

/// Fills ℓ_g[run, plates, parents, lag, k] = log P(z_g^k | parents) − log Q_MP(z_g^k) − log K
/// (mpis.md §2.2–§2.3, §3.1) into a new tensor of `tensors`; returns the entries scrubbed.
template <class Model, class Parallel>
std::int64_t evaluate_latent_factor(const Parallel& par, const Model& model, const MpisLayout& at,
                                    const MpisProposals<Model, Parallel>& proposals,
                                    MpisContraction<Parallel>& tensors, int g) {
  const int id = at.plan.latent_factor[g];
  mpis_elements::LatentFactor<Model> factor;
  factor.weight = latent_log_weight(model, at.structure, proposals, g);
  factor.axes = factor_axes(at, id, g, at.structure.latent_decl(g).parents);
  factor.log_k = std::log(static_cast<double>(at.plan.k));
  factor.out = tensors.allocate(par, at, id);
  const std::int64_t n = tensors.value(id).owned.size();
  par.for_each(n, factor, mpis_elements::kDensityWork);
  return par.count_if(n, mpis_elements::ScrubNonFinite{factor.out});
}

/// Fills λ_o[run, home plates, parents] (mpis.md §3.1, the data-only plates summed in) into a
/// new tensor of `tensors`; returns the entries scrubbed.
template <class Model, class Parallel>
std::int64_t evaluate_observed_factor(const Parallel& par, const Model& model, const MpisLayout& at,
                                      const MpisProposals<Model, Parallel>& proposals,
                                      MpisContraction<Parallel>& tensors, int o) {
  const PlatedStructure& s = at.structure;
  const int id = at.plan.observed_factor[o];
  const ObservedDecl& decl = s.observed_decl(o);
  const int home = at.plan.observed_home[o];
  mpis_elements::LikelihoodFactor<Model> factor;
  factor.model = model;
  factor.observed = o;
  factor.parents = proposals.group_parents(s, -1, decl.parents, home);
  factor.axes = factor_axes(at, id, -1, decl.parents);
  const std::vector<int> home_path = s.path(home), obs_path = s.path(decl.plate);
  factor.home_depth = static_cast<int>(home_path.size());
  for (int d = 0; d < factor.home_depth; ++d) factor.home_size[d] = s.plate_decl(home_path[d]).size;
  factor.extra_depth = static_cast<int>(obs_path.size() - home_path.size());
  for (int d = 0; d < factor.extra_depth; ++d) {
    factor.extra_size[d] = s.plate_decl(obs_path[home_path.size() + d]).size;
    factor.extra_instances *= factor.extra_size[d];
  }
  factor.out = tensors.allocate(par, at, id);
  const std::int64_t n = tensors.value(id).owned.size();
  par.for_each(n, factor, mpis_elements::kDensityWork * factor.extra_instances);
  return par.count_if(n, mpis_elements::ScrubNonFinite{factor.out});
}

/// Global importance sampling (mpis.md §1): log r_k = log P(x, z^k) − log Q(z^k) of the `count`
/// joint samples the proposals hold (MpisProposals::draw_joint), [run][particle], on the policy.
template <class Model, class Parallel>
PolicyArray<Parallel, double> global_log_weights(const Parallel& par, const Model& model,
                                                 const PlatedStructure& s,
                                                 const MpisProposals<Model, Parallel>& proposals,
                                                 std::int64_t runs, std::int64_t count) {
  auto log_r = par.template allocate<double>(runs * count);
  std::vector<double> zeros(static_cast<std::size_t>(runs * count), 0.0);
  par.upload(log_r, zeros.data(), runs * count);
  for (int g = 0; g < s.latent_count(); ++g) {
    const mpis_elements::GlobalLatentTerm<Model> term{latent_log_weight(model, s, proposals, g),
                                                      log_r.data()};
    par.for_each(runs * count, term, mpis_elements::kDensityWork * term.weight.self.instances);
  }
  for (int o = 0; o < s.observed_count(); ++o) {
    const ObservedDecl& decl = s.observed_decl(o);
    mpis_elements::GlobalObservedTerm<Model> term;
    term.model = model;
    term.observed = o;
    term.parents = proposals.group_parents(s, -1, decl.parents, decl.plate);
    const std::vector<int> path = s.path(decl.plate);
    term.depth = static_cast<int>(path.size());
    for (int d = 0; d < term.depth; ++d) term.plate_size[d] = s.plate_decl(path[d]).size;
    term.instances = s.instances(decl.plate);
    term.k = count;
    term.log_r = log_r.data();
    par.for_each(runs * count, term, mpis_elements::kDensityWork * term.instances);
  }
  return log_r;
}

}  // namespace myriad
