// The built-in models made for the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp):
// the thesis's Gaussian latent variable model, a density and an estimator with an exact
// posterior, and the standard logistic, the slice samplers' check of tails. Both also run under
// HMC.

#include <cmath>
#include <string>
#include <vector>

#include "auxiliary_runner.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/models/gaussian_latent_variable.hpp"
#include "myriad/models/standard_logistic.hpp"
#include "myriad/run/sample.hpp"

namespace myriad {

namespace {

template <class T>
using NormalLvm = models::GaussianLatentVariable<T, AuxiliaryLaw::normal>;
template <class T>
using UniformLvm = models::GaussianLatentVariable<T, AuxiliaryLaw::uniform>;

ModelSpec gaussian_latent_variable_spec() {
  ModelSpec spec;
  spec.name = "gaussian_latent_variable";
  spec.description =
      "thesis §3.6.1: x ~ N(0,I), z_m ~ N(x, sigma^2 I), y_m ~ N(z_m, epsilon^2 I) on data "
      "simulated from data_seed; an importance-sampling estimator with N samples for pm-mh and "
      "apm-*, the exact marginal density for HMC and slice samplers; exact answer known";
  spec.arguments = {{"dim", "10", "D, the dimension of x (at most 16)"},
                    {"observations", "10", "M, the observations y_m (at most 16)"},
                    {"samples", "1", "N, importance samples per estimate (pm-mh, apm-*)"},
                    {"sigma", "1", "sd of z_m given x"},
                    {"epsilon", "2", "sd of y_m given z_m"},
                    {"variates", "normal", "the estimator's auxiliary variates: normal or uniform"},
                    {"data_seed", "20170401", "seed of the simulated data"}};
  const auto make = [](const ModelArguments& a, auto t, auto law) {
    using Model = models::GaussianLatentVariable<decltype(t), decltype(law)::value>;
    return Model::make(a.integer("dim"), a.integer("observations"), a.integer("samples"),
                       a.number("sigma"), a.number("epsilon"), a.unsigned_integer("data_seed"));
  };
  using Normal = std::integral_constant<AuxiliaryLaw, AuxiliaryLaw::normal>;
  using Uniform = std::integral_constant<AuxiliaryLaw, AuxiliaryLaw::uniform>;
  const auto uniform = [](const ModelArguments& a) {
    return a.word("variates", {"normal", "uniform"}) == "uniform";
  };
  spec.sample = [make](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    if (precision == Precision::float32) return sample(make(a, float{}, Normal{}), config);
    return sample(make(a, double{}, Normal{}), config);
  };
  spec.dim = [](const ModelArguments& a) { return a.integer("dim"); };
  spec.exact = [make, uniform](const ModelArguments& a) {
    uniform(a);  // validates
    const auto model = make(a, double{}, Normal{});
    std::vector<ExactMoment> exact;
    for (int d = 0; d < model.dim(); ++d)
      exact.push_back({"x[" + std::to_string(d) + "]", model.exact_mean(d), model.exact_sd()});
    return exact;
  };
  // The model type, and so its checks, depends on the variates' law: both laws take the same
  // methods.
  spec.auxiliary_check = [](AuxiliaryMethod method) {
    check_auxiliary_model<NormalLvm<double>>(method);
  };
  spec.auxiliary = [make, uniform](const ModelArguments& a, const AuxiliaryConfig& config,
                                   AuxiliaryReport& report) {
    if (uniform(a)) return sample_auxiliary(make(a, double{}, Uniform{}), config, &report);
    return sample_auxiliary(make(a, double{}, Normal{}), config, &report);
  };
  return spec;
}

ModelSpec standard_logistic_spec() {
  ModelSpec spec;
  spec.name = "standard_logistic";
  spec.description =
      "dim independent standard logistic variables (variance pi^2/3, P(|x| > 2) = 0.2384): "
      "the slice samplers' tail check";
  spec.arguments = {{"dim", "1", "dimension"}};
  const auto make = [](const ModelArguments& a, auto t) {
    return models::StandardLogistic<decltype(t)>::make(a.integer("dim"));
  };
  spec.sample = [make](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    if (precision == Precision::float32) return sample(make(a, float{}), config);
    return sample(make(a, double{}), config);
  };
  spec.dim = [](const ModelArguments& a) { return a.integer("dim"); };
  spec.exact = [make](const ModelArguments& a) {
    const auto model = make(a, double{});
    std::vector<ExactMoment> exact;
    for (int d = 0; d < model.dim(); ++d)
      exact.push_back({"x[" + std::to_string(d) + "]", 0.0, models::StandardLogistic<double>::kSd});
    return exact;
  };
  offer_auxiliary_samplers(spec, [make](const ModelArguments& a) { return make(a, double{}); });
  return spec;
}

}  // namespace

std::vector<ModelSpec> auxiliary_model_specs() {
  return {gaussian_latent_variable_spec(), standard_logistic_spec()};
}

}  // namespace myriad
