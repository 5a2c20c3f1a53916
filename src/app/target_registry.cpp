// The built-in annealing targets for `myriad ais` and `myriad temper` (hais.md §9;
// thesis-methods.md §9.6, §9.8). Each owns its parameters on the host and uploads them once when
// the run is on a GPU.

#include <string>
#include <vector>

#include "myriad/app/radon_data.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/models/builtin_targets.hpp"
#include "myriad/run/ais.hpp"
#include "myriad/run/fitted_base.hpp"
#include "myriad/run/sample.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {

namespace {

/// Builds the target's data in the requested precision (make(T{}) returns an owner with
/// host_model() / device_model()), fits the base on the host view when asked, and anneals the
/// view that lives where the run does.
template <class Make>
AisResult anneal_owned(Precision precision, const AisConfig& config, Make make) {
  const auto run = [&](auto t) {
    auto data = make(t);
    using Target = decltype(data.host_model());
    AisConfig resolved = config;
    resolved.device = choose_ais_device<Target>(config.device);
    return run_with_fitted_base(data.host_model(), resolved, [&](const AisConfig& fitted) {
      return fitted.device == Device::cuda ? ais(data.device_model(), fitted)
                                           : ais(data.host_model(), fitted);
    });
  };
  return precision == Precision::float32 ? run(float{}) : run(double{});
}

/// Tempers the target's double-precision data (make(double{}) as for anneal_owned) on the device
/// the run resolves to.
template <class Make>
TemperResult temper_owned(const TemperConfig& config, Make make) {
  auto data = make(double{});
  using Target = decltype(data.host_model());
  TemperConfig resolved = config;
  resolved.device = choose_tempering_device<Target>(config.device);
  return run_with_fitted_base(data.host_model(), resolved, [&](const TemperConfig& fitted) {
    return fitted.device == Device::cuda ? temper(data.device_model(), fitted)
                                         : temper(data.host_model(), fitted);
  });
}

/// Offers `myriad ais` and `myriad temper` on the target make(arguments, T{}) builds (an owner
/// with host_model() / device_model()), in the precision each asks for.
template <class Make>
void offer_annealing(ModelSpec& spec, Make make) {
  spec.anneal = [make](const ModelArguments& a, const AisConfig& config, Precision precision) {
    return anneal_owned(precision, config, [&](auto t) { return make(a, t); });
  };
  spec.temper = [make](const ModelArguments& a, const TemperConfig& config) {
    return temper_owned(config, [&](auto t) { return make(a, t); });
  };
}

ModelSpec poe_spec(models::ExpertKind kind) {
  const bool laplace = kind == models::ExpertKind::laplace;
  ModelSpec spec = model_spec(
      ModelKind::annealing, laplace ? "poe_laplace" : "poe_student_t",
      laplace ? "product of Laplace experts exp(-|Phi_l x|) (the HAIS paper's analysis model) "
                "with a random filter matrix Phi from a seed; exact log Z when experts = dim"
              : "product of Student-t experts (1 + (Phi_l x)^2)^-lambda_l (the HAIS paper's "
                "analysis model), Phi and lambda from a seed; exact log Z when experts = dim",
      {{"dim", "36", "dimension M"},
       {"experts", "36", "experts L >= dim (L = dim: complete, exact log Z)"}});
  if (!laplace) {
    spec.arguments.push_back({"lambda_min", "1.5", "smallest expert exponent (> 0.5)"});
    spec.arguments.push_back({"lambda_max", "3", "largest expert exponent"});
  }
  spec.arguments.push_back({"seed", "2011", "seed of the parameters"});
  offer_annealing(spec, [kind, laplace](const ModelArguments& a, auto t) {
    using T = decltype(t);
    return models::ProductOfExpertsData<T>::synthetic(
        kind, a.integer("dim"), a.integer("experts"), laplace ? 1.5 : a.number("lambda_min"),
        laplace ? 3.0 : a.number("lambda_max"), a.unsigned_integer("seed"));
  });
  return spec;
}

ModelSpec mcrbm_spec() {
  ModelSpec spec = model_spec(
      ModelKind::annealing, "mcrbm",
      "mean-covariance RBM marginal energy (the HAIS paper's) with parameters from a seed; no "
      "exact log Z",
      {{"dim", "36", "dimension M"},
       {"factors", "64", "factors L (rows of C)"},
       {"covariance_units", "64", "covariance hidden units K"},
       {"mean_units", "32", "mean hidden units J"},
       {"seed", "2011", "seed of the parameters"}});
  offer_annealing(spec, [](const ModelArguments& a, auto t) {
    using T = decltype(t);
    return models::McrbmData<T>::synthetic(a.integer("dim"), a.integer("factors"),
                                           a.integer("covariance_units"), a.integer("mean_units"),
                                           a.unsigned_integer("seed"));
  });
  return spec;
}

ModelSpec linear_generative_spec() {
  ModelSpec spec = model_spec(
      ModelKind::annealing, "linear_generative",
      "linear generative model x = Phi a + noise (the HAIS paper's generative model): one "
      "annealing run per data point, log Z = log p(x); exact for the Gaussian prior or "
      "phi_scale = 0",
      {{"dim", "36", "observed dimension M"},
       {"latents", "36", "latent dimension L"},
       {"points", "10", "data points (problems), drawn from the model"},
       {"prior", "gaussian", "prior of the latents: gaussian or laplace"},
       {"noise_sd", "0.1", "observation noise sigma_n"},
       {"phi_scale", "1", "scale of Phi's N(0, 1/L) entries; 0: the Phi = 0 check"},
       {"data_seed", "12051925", "seed of Phi and the data"}});
  offer_annealing(spec, [](const ModelArguments& a, auto t) {
    using T = decltype(t);
    const auto prior = a.word("prior", {"gaussian", "laplace"}) == "laplace"
                           ? models::LinearGenerativePrior::laplace
                           : models::LinearGenerativePrior::gaussian;
    return models::LinearGenerativeData<T>::synthetic(
        a.integer("dim"), a.integer("latents"), a.integer("points"), prior, a.number("noise_sd"),
        a.number("phi_scale"), a.unsigned_integer("data_seed"));
  });
  return spec;
}

ModelSpec boltzmann_spec() {
  ModelSpec spec = model_spec(
      ModelKind::annealing, "boltzmann_relaxation",
      "Gaussian relaxation of a Boltzmann machine (thesis App. E, 9.6) with random couplings; "
      "exact log Z and moments by enumerating the 2^units states",
      {{"units", "12", "binary units D_B (at most 30; exact draws for --reverse up to 24)"},
       {"seed", "201702", "seed of the couplings and biases"},
       {"lambda", "identity",
        "the relaxation: identity (Lambda = cI, D = D_B) or sdp (the thesis's SDP Lambda, "
        "D < D_B; shipped for units 12, 16, 20 and 30 with the seeds of "
        "data/boltzmann-sdp-lambda.json)"}});
  offer_annealing(spec, [](const ModelArguments& a, auto t) {
    using T = decltype(t);
    const auto lambda = a.word("lambda", {"identity", "sdp"}) == "sdp"
                            ? models::BoltzmannLambda::sdp
                            : models::BoltzmannLambda::identity;
    return models::BoltzmannRelaxationData<T>::synthetic(a.integer("units"),
                                                         a.unsigned_integer("seed"), lambda);
  });
  return spec;
}

/// The radon regression's data: --data's, or the Minnesota data compiled in.
template <class T>
models::RadonData<T> radon_data_of(const ModelArguments& a) {
  return radon_data<T>(a.data() != nullptr ? *a.data() : minnesota_radon());
}

ModelSpec radon_spec() {
  ModelSpec spec = model_spec(
      ModelKind::density, "radon",
      "Minnesota radon (Gelman & Hill): varying county intercepts, floor and log-uranium slopes, "
      "non-centred, half-Cauchy(2.5) scales in log coordinates (the thesis's CT experiment, 92 "
      "parameters); built-in data or --data",
      {});
  spec.data = DataUse::optional;
  spec.data_variables =
      "int<lower=1> N; int<lower=1> J; vector[N] log_radon; vector[N] floor_measure; vector[N] "
      "log_uppm; array[N] int<lower=1, upper=J> county_idx";
  spec.sample = [](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    const auto run = [&](auto t) {
      using T = decltype(t);
      auto data = radon_data_of<T>(a);
      SampleConfig resolved = config;
      resolved.device = choose_device<models::Radon<T>>(config.device);
      return resolved.device == Device::cuda ? sample(data.device_model(), resolved)
                                             : sample(data.host_model(), resolved);
    };
    return precision == Precision::float32 ? run(float{}) : run(double{});
  };
  // Builds (and so checks) the data before the run starts.
  spec.dim = [](const ModelArguments& a) { return radon_data_of<double>(a).host_model().dim(); };
  offer_annealing(spec,
                  [](const ModelArguments& a, auto t) { return radon_data_of<decltype(t)>(a); });
  return spec;
}

}  // namespace

std::vector<ModelSpec> annealing_target_specs() {
  return {poe_spec(models::ExpertKind::laplace),
          poe_spec(models::ExpertKind::student_t),
          mcrbm_spec(),
          linear_generative_spec(),
          boltzmann_spec(),
          radon_spec()};
}

}  // namespace myriad
