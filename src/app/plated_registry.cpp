// The built-in plated models for `myriad mpis` (mpis.md §7, §9). Each owns its data on the host
// and uploads it once when the run is on a GPU; models with a closed form report the exact log
// marginal likelihood and posterior.

#include <string>
#include <type_traits>
#include <vector>

#include "myriad/models/builtin_plated.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/run/mpis.hpp"

namespace myriad {

namespace {

/// Runs MP IS on the view of `data` that lives where the run does, and adds the exact answers
/// the data owner knows (the owner, not the view: a device view's data is not on the host).
template <class Data>
MpisResult mpis_owned(Data& data, const MpisConfig& config) {
  using Model = decltype(data.host_model());
  MpisConfig resolved = config;
  resolved.device = choose_mpis_device<Model>(config.device);
  MpisResult result = resolved.device == Device::cuda ? mpis(data.device_model(), resolved)
                                                      : mpis(data.host_model(), resolved);
  if constexpr (plated_has_exact_log_marginal<Data>)
    result.exact_log_marginal = data.exact_log_marginal();
  if constexpr (plated_has_exact_posterior<Data>) result.exact = data.exact_posterior();
  return result;
}

bool mixture_proposal(const ModelArguments& a) {
  return a.word("proposal", {"independent", "mixture"}) == "mixture";
}

ModelSpec hierarchical_gaussian_spec() {
  ModelSpec spec =
      model_spec(ModelKind::plated, "hierarchical_gaussian",
                 "mu ~ N(0, a^2), z[n] | mu ~ N(mu, b^2), x[n,m] | z[n] ~ N(z[n], s^2); data "
                 "from a seed; exact log p(x) and posterior",
                 {{"groups", "20", "groups N (plate of z)"},
                  {"per_group", "5", "observations M per group"},
                  {"mu_sd", "1", "prior sd a of mu"},
                  {"group_sd", "1", "sd b of z around mu"},
                  {"obs_sd", "1", "observation sd s"},
                  {"proposal", "independent",
                   "independent (z from its prior marginal) or mixture (z | mu: parent mixture)"},
                  {"data_seed", "1", "seed of the synthetic data"}});
  spec.mpis = [](const ModelArguments& a, const MpisConfig& config) {
    auto data = models::HierarchicalGaussianData::synthetic(
        a.integer("groups"), a.integer("per_group"), a.number("mu_sd"), a.number("group_sd"),
        a.number("obs_sd"), mixture_proposal(a), a.unsigned_integer("data_seed"));
    return mpis_owned(data, config);
  };
  return spec;
}

ModelSpec gaussian_chain_spec() {
  ModelSpec spec = model_spec(
      ModelKind::plated, "gaussian_chain",
      "z[0] ~ N(0, s0^2), z[t] | z[t-1] ~ N(rho z[t-1], q^2), x[t] ~ N(z[t], r^2): a timeseries "
      "plate; exact by Kalman filtering and smoothing",
      {{"steps", "50", "length T"},
       {"rho", "0.9", "autoregression rho"},
       {"process_sd", "0.5", "transition sd q"},
       {"obs_sd", "0.5", "observation sd r"},
       {"init_sd", "1", "sd s0 of z[0]"},
       {"proposal", "mixture",
        "mixture (the transition given z[t-1]'s particles) or independent (prior "
        "marginal of each z[t])"},
       {"data_seed", "1", "seed of the synthetic data"}});
  spec.mpis = [](const ModelArguments& a, const MpisConfig& config) {
    auto data = models::GaussianChainData::synthetic(
        a.integer("steps"), a.number("rho"), a.number("process_sd"), a.number("obs_sd"),
        a.number("init_sd"), mixture_proposal(a), a.unsigned_integer("data_seed"));
    return mpis_owned(data, config);
  };
  return spec;
}

/// One of the paper's four models (mpis.md §9.2, the reference code's versions) with synthetic
/// data at the paper's sizes.
template <class Data>
ModelSpec paper_model_spec(const std::string& name, const std::string& description) {
  ModelSpec spec = model_spec(ModelKind::plated, name, description,
                              {{"data_seed", "1", "seed of the synthetic data"}});
  spec.mpis = [](const ModelArguments& a, const MpisConfig& config) {
    auto data = Data::synthetic(a.unsigned_integer("data_seed"));
    return mpis_owned(data, config);
  };
  return spec;
}

}  // namespace

std::vector<ModelSpec> plated_model_specs() {
  return {
      hierarchical_gaussian_spec(),
      gaussian_chain_spec(),
      paper_model_spec<models::BusBreakdownData>(
          "bus_breakdown",
          "NYC school-bus delays, the MP IS paper's model: 3 years x 3 boroughs x 30 buses, "
          "Binomial(131) delays, 50 companies, 5 journey types; n = 20 index variables, clique 5"),
      paper_model_spec<models::ChimpanzeesData>(
          "chimpanzees",
          "chimpanzee prosociality, the MP IS paper's model: 7 actors x 6 blocks x 10 pulls, "
          "Bernoulli; n = 54, clique 6"),
      paper_model_spec<models::MovieLensData>(
          "movielens",
          "MovieLens-style ratings, the MP IS paper's model: 300 users x 5 films, 18 genre "
          "features, Bernoulli; n = 302, clique 3"),
      paper_model_spec<models::OccupancyData>(
          "occupancy",
          "bird occupancy, the MP IS paper's model: 12 species x 6 years x 200 sites x 5 "
          "replicates, discrete z with a parent-mixture proposal; n = 14514, clique 7")};
}

}  // namespace myriad
