// The built-in models made for the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp):
// the thesis's Gaussian latent variable model, a density and an estimator with an exact
// posterior; the standard logistic, the slice samplers' check of tails (both also run under
// HMC); and the thesis's Gaussian-process probit classification, an estimator only.

#include <cmath>
#include <string>
#include <vector>

#include "auxiliary_runner.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/models/breast_cancer_wisconsin.hpp"
#include "myriad/models/gaussian_latent_variable.hpp"
#include "myriad/models/gp_probit.hpp"
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

ModelSpec gp_probit_spec() {
  ModelSpec spec;
  spec.name = "gp_probit";
  spec.description =
      "thesis §3.6.2: Gaussian-process probit classification of the Wisconsin breast cancer "
      "data (683 complete rows, 9 standardised features), SE-ARD covariance, x = [log s; log "
      "ell] with the thesis's gamma prior; a Laplace importance-sampling estimator of the "
      "marginal likelihood with N samples, for pm-mh and apm-*";
  spec.arguments = {{"rows", "0", "complete data rows used, evenly spaced (0: all 683)"},
                    {"samples", "50", "N, importance samples per estimate"},
                    {"max_newton", "100", "cap on the Laplace fit's Newton steps"}};
  const auto make_data = [](const ModelArguments& a) {
    const models::BreastCancerRows rows = models::breast_cancer_wisconsin(a.integer("rows"));
    return models::GpProbitData<double>::from_arrays(rows.rows, models::BreastCancerRows::kFeatures,
                                                     rows.features, rows.labels);
  };
  // The model views the data where the run happens (the device copy uploaded once).
  const auto make = [](const ModelArguments& a, models::GpProbitData<double>& data, Device device) {
    const int samples = a.integer("samples");
    models::GpProbit<double> model =
        device == Device::cuda ? data.device_model(samples) : data.host_model(samples);
    const int max_newton = a.integer("max_newton");
    MYRIAD_EXPECTS(max_newton >= 1, "gp_probit: max_newton must be positive, got ", max_newton);
    model.max_newton = max_newton;
    return model;
  };
  // Builds (and so checks) the data and the model before the run starts.
  spec.dim = [make_data, make](const ModelArguments& a) {
    models::GpProbitData<double> data = make_data(a);
    return make(a, data, Device::cpu).dim();
  };
  spec.auxiliary_check = [](AuxiliaryMethod method) {
    check_auxiliary_model<models::GpProbit<double>>(method);
  };
  spec.auxiliary = [make_data, make](const ModelArguments& a, const AuxiliaryConfig& config,
                                     AuxiliaryReport& report) {
    models::GpProbitData<double> data = make_data(a);
    AuxiliaryConfig resolved = config;
    resolved.device = choose_auxiliary_device<models::GpProbit<double>>(config.device);
    return sample_auxiliary(make(a, data, resolved.device), resolved, &report);
  };
  return spec;
}

}  // namespace

std::vector<ModelSpec> auxiliary_model_specs() {
  return {gaussian_latent_variable_spec(), standard_logistic_spec(), gp_probit_spec()};
}

}  // namespace myriad
