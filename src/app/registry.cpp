// The table of built-in models for the CLI.

#include "myriad/app/registry.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "auxiliary_runner.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin.hpp"
#include "myriad/models/builtin_targets.hpp"
#include "myriad/run/ais.hpp"
#include "myriad/run/fitted_base.hpp"
#include "myriad/run/sample.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {

ModelSpec model_spec(ModelKind kind, std::string name, std::string description,
                     std::vector<ModelArgument> arguments) {
  ModelSpec spec;
  spec.kind = kind;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.arguments = std::move(arguments);
  return spec;
}

ModelArguments::ModelArguments(const ModelSpec& spec,
                               const std::vector<std::pair<std::string, std::string>>& given,
                               const std::string& data_path)
    : model_(spec.name), data_path_(data_path) {
  if (!data_path.empty() && spec.data == DataUse::none)
    throw invalid_argument("model " + spec.name + " takes no data (--data)");
  if (data_path.empty() && spec.data == DataUse::required)
    throw invalid_argument("model " + spec.name + " needs --data FILE.json (CmdStan's JSON) with " +
                           spec.data_variables);
  if (!data_path.empty()) data_ = std::make_shared<const StanData>(StanData::read(data_path));
  for (const auto& argument : spec.arguments)
    values_.emplace_back(argument.name, argument.default_value);
  for (const auto& [key, value] : given) {
    bool known = false;
    for (auto& entry : values_) {
      if (entry.first == key) {
        entry.second = value;
        known = true;
        given_.push_back(key);
      }
    }
    if (!known) {
      std::string names;
      for (const auto& argument : spec.arguments)
        names += (names.empty() ? "" : ", ") + argument.name;
      throw invalid_argument("unknown argument '" + key + "' for model " + spec.name +
                             (names.empty() ? " (it takes none)" : " (known: " + names + ")"));
    }
  }
}

const StanData& ModelArguments::required_data() const {
  if (!data_) throw invalid_argument("model " + model_ + " needs --data FILE.json");
  return *data_;
}

bool ModelArguments::given(const std::string& name) const {
  raw(name);  // an unknown name is a programming error, reported as such
  for (const auto& g : given_)
    if (g == name) return true;
  return false;
}

const std::string& ModelArguments::raw(const std::string& name) const {
  for (const auto& entry : values_)
    if (entry.first == name) return entry.second;
  throw invalid_argument(model_ + ": no argument named '" + name + "'");
}

double ModelArguments::number(const std::string& name) const {
  const std::string& text = raw(name);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw invalid_argument(model_ + ": argument " + name + "='" + text +
                           "' is not a finite number");
  return value;
}

int ModelArguments::integer(const std::string& name) const {
  const std::string& text = raw(name);
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    throw invalid_argument(model_ + ": argument " + name + "='" + text + "' is not an integer");
  if (errno == ERANGE || value < std::numeric_limits<int>::min() ||
      value > std::numeric_limits<int>::max())
    throw invalid_argument(model_ + ": argument " + name + "='" + text +
                           "' is out of range (at most " +
                           std::to_string(std::numeric_limits<int>::max()) + ")");
  return static_cast<int>(value);
}

const std::string& ModelArguments::word(const std::string& name,
                                        const std::vector<std::string>& allowed) const {
  const std::string& text = raw(name);
  std::string names;
  for (const auto& a : allowed) {
    if (text == a) return text;
    names += (names.empty() ? "" : ", ") + a;
  }
  throw invalid_argument(model_ + ": argument " + name + "='" + text + "' is not one of " + names);
}

std::uint64_t ModelArguments::unsigned_integer(const std::string& name) const {
  const std::string& text = raw(name);
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
    throw invalid_argument(model_ + ": argument " + name + "='" + text +
                           "' is not a non-negative integer");
  return value;
}

namespace {

/// Runs `make<T>()`'s model in the requested precision.
template <class Make>
SampleResult sample_in(Precision precision, const SampleConfig& config, Make make) {
  if (precision == Precision::float32) return sample(make(float{}), config);
  return sample(make(double{}), config);
}

ModelSpec gaussian_spec() {
  ModelSpec spec;
  spec.name = "gaussian";
  spec.description =
      "equicorrelated normal N(mean, sd^2 [(1-rho) I + rho 11']); exact answer known";
  spec.arguments = {{"dim", "100", "dimension"},
                    {"rho", "0.5", "correlation between every pair of coordinates"},
                    {"mean", "0", "mean of every coordinate"},
                    {"sd", "1", "standard deviation of every coordinate"}};
  spec.sample = [](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    return sample_in(precision, config, [&](auto t) {
      using T = decltype(t);
      return models::Gaussian<T>::make(a.integer("dim"), a.number("rho"), a.number("mean"),
                                       a.number("sd"));
    });
  };
  // As an annealing target its log density is normalised: log Z = 0.
  spec.anneal = [](const ModelArguments& a, const AisConfig& config, Precision precision) {
    const auto run = [&](auto t) {
      using T = decltype(t);
      const auto target = models::Gaussian<T>::make(a.integer("dim"), a.number("rho"),
                                                    a.number("mean"), a.number("sd"));
      // The Gaussian owns no arrays: the host fits its base for a run on any device.
      return run_with_fitted_base(target, config,
                                  [&](const AisConfig& resolved) { return ais(target, resolved); });
    };
    return precision == Precision::float32 ? run(float{}) : run(double{});
  };
  spec.temper = [](const ModelArguments& a, const TemperConfig& config) {
    const auto target = models::Gaussian<double>::make(a.integer("dim"), a.number("rho"),
                                                       a.number("mean"), a.number("sd"));
    return run_with_fitted_base(
        target, config, [&](const TemperConfig& resolved) { return temper(target, resolved); });
  };
  spec.dim = [](const ModelArguments& a) { return static_cast<int>(a.integer("dim")); };
  spec.exact = [](const ModelArguments& a) {
    std::vector<ExactMoment> exact;
    const auto g = models::Gaussian<double>::make(a.integer("dim"), a.number("rho"),
                                                  a.number("mean"), a.number("sd"));
    for (int i = 0; i < g.dim(); ++i)
      exact.push_back({"x[" + std::to_string(i) + "]", g.mean, g.sd});
    return exact;
  };
  offer_auxiliary_samplers(spec, [](const ModelArguments& a) {
    return models::Gaussian<double>::make(a.integer("dim"), a.number("rho"), a.number("mean"),
                                          a.number("sd"));
  });
  return spec;
}

/// run_sbc_batched's run: R models stacked into one, sampled on `device`.
template <class Model>
auto stacked_sampler(Device device) {
  return [device](StackedModels<Model>& stacked, const SampleConfig& config) {
    SampleConfig resolved = config;
    resolved.device = device;
    return device == Device::cuda ? sample(stacked.device_model(), resolved)
                                  : sample(stacked.host_model(), resolved);
  };
}

/// SBC simulates the data: a data file would be ignored.
void refuse_with_sbc(const ModelArguments& a) {
  if (a.data() != nullptr)
    throw invalid_argument(
        "simulation-based calibration simulates the data: --data does not apply");
}

/// Refuses model arguments that --data replaces, which would otherwise be ignored.
void refuse_with_data(const ModelArguments& a, const std::vector<std::string>& replaced) {
  if (a.data() == nullptr) return;
  for (const auto& name : replaced)
    if (a.given(name))
      throw invalid_argument("model argument " + name + " does not apply with --data (the file " +
                             "gives the data)");
}

ModelSpec logistic_spec() {
  ModelSpec spec;
  spec.name = "logistic";
  spec.description =
      "Bayesian logistic regression, beta ~ N(0, prior_sd^2 I): on synthetic data (intercept + "
      "n x (d-1) N(0,1) covariates) drawn from data_seed, or on --data";
  spec.arguments = {{"n", "1000", "observations (synthetic data)"},
                    {"d", "10", "coefficients, intercept included (synthetic data)"},
                    {"prior_sd", "10", "prior standard deviation of each coefficient"},
                    {"data_seed", "1", "seed of the synthetic data"}};
  spec.data = DataUse::optional;
  spec.data_variables =
      "int<lower=1> N; int<lower=1> D; matrix[N, D] X (any intercept a column of ones); "
      "array[N] int<lower=0, upper=1> y";
  const auto make_data = [](const ModelArguments& a, auto t) {
    using T = decltype(t);
    refuse_with_data(a, {"n", "d", "data_seed"});
    const StanData* data = a.data();
    if (data == nullptr)
      return models::LogisticData<T>::synthetic(a.integer("n"), a.integer("d"),
                                                a.unsigned_integer("data_seed"));
    const int n = data->integer("N", 1, 1 << 30), d = data->integer("D", 1, 1 << 20);
    const std::vector<double> x = data->matrix("X", n, d);
    const std::vector<int> y = data->integers("y", n, 0, 1);
    return models::LogisticData<T>::from_arrays(std::vector<T>(x.begin(), x.end()),
                                                std::vector<T>(y.begin(), y.end()), n, d);
  };
  spec.sample = [make_data](const ModelArguments& a, const SampleConfig& config,
                            Precision precision) {
    const auto run = [&](auto t) {
      using T = decltype(t);
      auto data = make_data(a, t);
      SampleConfig resolved = config;
      resolved.device = choose_device<models::Logistic<T>>(config.device);
      const T prior_sd = T(a.number("prior_sd"));
      // The data live on the device the chains run on; uploaded once.
      const auto model =
          resolved.device == Device::cuda ? data.device_model(prior_sd) : data.host_model(prior_sd);
      return sample(model, resolved);
    };
    return precision == Precision::float32 ? run(float{}) : run(double{});
  };
  // Builds (and so checks) the data before the run starts.
  spec.dim = [make_data](const ModelArguments& a) {
    return make_data(a, double{}).host_model(1.0).dim();
  };
  // The auxiliary-variable samplers (slice; elliptical and reflective slice on the prior
  // N(0, prior_sd² I)): the data outlive the run, which views them.
  spec.auxiliary_check = [](AuxiliaryMethod method) {
    check_auxiliary_model<models::Logistic<double>>(method);
  };
  spec.auxiliary = [make_data](const ModelArguments& a, const AuxiliaryConfig& config,
                               AuxiliaryReport& report) {
    auto data = make_data(a, double{});
    AuxiliaryConfig resolved = config;
    resolved.device = choose_auxiliary_device<models::Logistic<double>>(config.device);
    const double prior_sd = a.number("prior_sd");
    return sample_auxiliary(
        resolved.device == Device::cuda ? data.device_model(prior_sd) : data.host_model(prior_sd),
        resolved, &report);
  };
  // SBC: the synthetic design, β from the prior N(0, prior_sd² I), labels from β.
  const auto simulate = [](const ModelArguments& a, std::uint64_t seed, std::int64_t r) {
    refuse_with_sbc(a);
    return models::LogisticData<double>::simulate(a.integer("n"), a.integer("d"),
                                                  a.number("prior_sd"),
                                                  a.unsigned_integer("data_seed"), seed, r);
  };
  spec.sbc_check = refuse_with_sbc;
  spec.sbc = [simulate](const ModelArguments& a, std::uint64_t seed, std::int64_t r,
                        const ChmcConfig& config) {
    auto data = simulate(a, seed, r);
    const double prior_sd = a.number("prior_sd");
    SampleConfig resolved = config;
    resolved.device = choose_device<models::Logistic<double>>(config.device);
    const auto model =
        resolved.device == Device::cuda ? data.device_model(prior_sd) : data.host_model(prior_sd);
    return SbcReplication{data.true_beta(), sample(model, resolved)};
  };
  spec.sbc_batch = [simulate](const ModelArguments& a, const SbcConfig& sbc,
                              const SampleConfig& config,
                              const std::function<void(std::int64_t)>& progress) {
    using Model = models::Logistic<double>;
    const double prior_sd = a.number("prior_sd");
    const Device device = choose_device<Stacked<Model>>(config.device);
    // The replications' data sets outlive the run: the models view them (on the device too).
    std::vector<models::LogisticData<double>> data;
    data.reserve(static_cast<std::size_t>(sbc.replications));
    return run_sbc_batched<Model>(
        sbc, config,
        [&](std::int64_t r) {
          auto& simulated = data.emplace_back(simulate(a, sbc.seed, r));
          return SbcSimulation<Model>{simulated.true_beta(), device == Device::cuda
                                                                 ? simulated.device_model(prior_sd)
                                                                 : simulated.host_model(prior_sd)};
        },
        stacked_sampler<Model>(device), progress);
  };
  return spec;
}

/// eight_schools with the standard data, or the data of --data (posteriordb's eight_schools
/// format); `required`: eight_schools_noncentered, posteriordb's name, which always reads it.
ModelSpec eight_schools_spec(bool posteriordb) {
  ModelSpec spec;
  spec.name = posteriordb ? "eight_schools_noncentered" : "eight_schools";
  spec.description =
      posteriordb ? "posteriordb's eight_schools-eight_schools_noncentered: eight_schools on the "
                    "data of --data"
                  : "eight schools (Rubin 1981), non-centred: mu ~ N(0,5), tau ~ half-Cauchy(0,5), "
                    "theta_j = mu + tau eta_j; the standard data, or --data";
  spec.data = posteriordb ? DataUse::required : DataUse::optional;
  spec.data_variables = "int<lower=0> J; array[J] real y; array[J] real<lower=0> sigma";
  const auto make = [](const ModelArguments& a, auto t) {
    using Model = models::EightSchools<decltype(t)>;
    const StanData* data = a.data();
    if (data == nullptr) return Model::make();
    const int J = data->integer("J", 1, Model::kMaxSchools);
    return Model::make(data->reals("y", J), data->reals("sigma", J));
  };
  spec.sample = [make](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    return sample_in(precision, config, [&](auto t) { return make(a, t); });
  };
  spec.dim = [make](const ModelArguments& a) { return make(a, double{}).dim(); };
  if (!posteriordb) {
    // SBC: θ̃ from the prior and ỹ from the model, with the standard errors σ_j of the data
    // (the standard data's, or those of --data).
    using Model = models::EightSchools<double>;
    const auto simulate = [make](const ModelArguments& a, std::uint64_t seed, std::int64_t r) {
      std::vector<double> z;
      const Model model = make(a, double{}).simulate(seed, r, z);
      std::vector<double> truth(static_cast<std::size_t>(model.num_quantities()));
      model.quantities(z.data(), truth);
      return SbcSimulation<Model>{std::move(truth), model};
    };
    spec.sbc = [simulate](const ModelArguments& a, std::uint64_t seed, std::int64_t r,
                          const ChmcConfig& config) {
      SbcSimulation<Model> simulation = simulate(a, seed, r);
      return SbcReplication{std::move(simulation.truth), sample(simulation.model, config)};
    };
    spec.sbc_batch = [simulate](const ModelArguments& a, const SbcConfig& sbc,
                                const SampleConfig& config,
                                const std::function<void(std::int64_t)>& progress) {
      const Device device = choose_device<Stacked<Model>>(config.device);
      return run_sbc_batched<Model>(
          sbc, config, [&](std::int64_t r) { return simulate(a, sbc.seed, r); },
          stacked_sampler<Model>(device), progress);
    };
  }
  return spec;
}

ModelSpec funnel_spec() {
  ModelSpec spec;
  spec.name = "funnel";
  spec.description =
      "Neal's funnel: v ~ N(0,3), x_i ~ N(0, exp(v/2)); divergences expected in the neck";
  spec.arguments = {{"dim", "10", "dimension (v and dim-1 coordinates)"}};
  spec.sample = [](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    return sample_in(precision, config,
                     [&](auto t) { return models::Funnel<decltype(t)>::make(a.integer("dim")); });
  };
  spec.dim = [](const ModelArguments& a) { return static_cast<int>(a.integer("dim")); };
  spec.exact = [](const ModelArguments& a) {
    models::Funnel<double>::make(a.integer("dim"));  // validates
    return std::vector<ExactMoment>{{"v", 0.0, 3.0}};
  };
  offer_auxiliary_samplers(
      spec, [](const ModelArguments& a) { return models::Funnel<double>::make(a.integer("dim")); });
  return spec;
}

ModelSpec banana_spec() {
  ModelSpec spec;
  spec.name = "banana";
  spec.description =
      "twisted Gaussian (Haario et al. 1999): x1 ~ N(0,a^2), x2 ~ N(b(x1^2-a^2),1), others "
      "N(0,1); curved, exact moments known";
  spec.arguments = {{"dim", "2", "dimension (x1, x2 and dim-2 standard normals)"},
                    {"a", "10", "standard deviation of x1"},
                    {"b", "0.1", "twist: curvature of the parabola"}};
  const auto make = [](const ModelArguments& a, auto t) {
    return models::Banana<decltype(t)>::make(a.integer("dim"), a.number("a"), a.number("b"));
  };
  spec.sample = [make](const ModelArguments& a, const SampleConfig& config, Precision precision) {
    return sample_in(precision, config, [&](auto t) { return make(a, t); });
  };
  spec.dim = [](const ModelArguments& a) { return static_cast<int>(a.integer("dim")); };
  spec.exact = [make](const ModelArguments& a) {
    const auto m = make(a, double{});
    std::vector<ExactMoment> exact{{"x[1]", 0.0, m.scale}, {"x[2]", 0.0, m.x2_sd()}};
    for (int i = 3; i <= m.dim(); ++i) exact.push_back({"x[" + std::to_string(i) + "]", 0.0, 1.0});
    return exact;
  };
  offer_auxiliary_samplers(spec, [make](const ModelArguments& a) { return make(a, double{}); });
  return spec;
}

}  // namespace

const std::vector<ModelSpec>& builtin_models() {
  static const std::vector<ModelSpec> models = [] {
    std::vector<ModelSpec> all = {gaussian_spec(), logistic_spec(), eight_schools_spec(false),
                                  funnel_spec(), banana_spec()};
    all.push_back(eight_schools_spec(true));
    for (auto& spec : auxiliary_model_specs()) all.push_back(std::move(spec));
    for (auto& spec : posteriordb_model_specs()) all.push_back(std::move(spec));
    for (auto& spec : generator_model_specs()) all.push_back(std::move(spec));
    for (auto& spec : annealing_target_specs()) all.push_back(std::move(spec));
    for (auto& spec : plated_model_specs()) all.push_back(std::move(spec));
    return all;
  }();
  return models;
}

const ModelSpec& find_model(const std::string& name) {
  std::string names;
  for (const auto& spec : builtin_models()) {
    if (spec.name == name) return spec;
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  throw invalid_argument("unknown model '" + name + "' (available: " + names +
                         "; see 'myriad models')");
}

}  // namespace myriad
