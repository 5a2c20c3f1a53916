// The built-in generator models for the CLI: conditioned exactly on their data by constrained
// HMC (--sampler chmc), or approximately by the ABC baselines (abc-reject, abc-mcmc, and hmc on
// the Gaussian-kernel ABC target). Every generator takes `noise=ε`: with ε > 0 it is wrapped in
// the noisy generator g_y(u, n) = g_x(u) + εn, whose exact conditioning equals Gaussian-kernel
// ABC with tolerance ε (constrained-hmc.md §9).

#include <cmath>
#include <utility>

#include "myriad/app/registry.hpp"
#include "myriad/models/builtin_generators.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"
#include "myriad/run/sample_abc.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {

namespace {

/// A generator without data, in the shape of the data-owning problem classes.
template <class Generator>
struct PlainProblem {
  Generator generator;
  Generator host_model() const { return generator; }
  Generator device_model() const { return generator; }
};

/// Runs `run(generator)` on `model`, wrapped as a noisy generator when the `noise` argument is
/// positive.
template <class Model, class Run>
auto with_noise(const ModelArguments& a, const Model& model, Run run) {
  const double noise = a.number("noise");
  if (noise < 0) throw invalid_argument("noise must be >= 0, got " + std::to_string(noise));
  if (noise > 0) return run(models::Noisy<Model>::make(model, noise));
  return run(model);
}

/// The runners of a generator whose problem object is built by make(arguments). Constrained
/// HMC runs where sample_chmc would (the data are uploaded when that is a GPU); the ABC
/// baselines run on the host's copy.
template <class Make>
GeneratorRunners runners(Make make) {
  GeneratorRunners r;
  r.chmc = [make](const ModelArguments& a, const ChmcConfig& config) {
    auto problem = make(a);
    using Model = decltype(problem.host_model());
    ChmcConfig resolved = config;
    const bool noisy = a.number("noise") > 0;
    resolved.device = noisy ? choose_chmc_device<models::Noisy<Model>>(config.device)
                            : choose_chmc_device<Model>(config.device);
    const Model model =
        resolved.device == Device::cuda ? problem.device_model() : problem.host_model();
    return with_noise(a, model, [&](const auto& g) { return sample_chmc(g, resolved); });
  };
  r.abc_rejection = [make](const ModelArguments& a, const AbcConfig& config,
                           AbcRejectionSummary& summary) {
    const auto problem = make(a);
    return with_noise(a, problem.host_model(),
                      [&](const auto& g) { return sample_abc_rejection(g, config, summary); });
  };
  r.abc_mcmc = [make](const ModelArguments& a, const AbcConfig& config) {
    const auto problem = make(a);
    return with_noise(a, problem.host_model(),
                      [&](const auto& g) { return sample_abc_mcmc(g, config); });
  };
  r.abc_hmc = [make](const ModelArguments& a, double epsilon, const SampleConfig& config) {
    const auto problem = make(a);
    return with_noise(a, problem.host_model(),
                      [&](const auto& g) { return sample_abc_hmc(g, epsilon, config); });
  };
  r.abc_auxiliary = [make](const ModelArguments& a, const AuxiliaryConfig& config, AbcKernel kernel,
                           double epsilon, AuxiliaryReport& report) {
    const auto problem = make(a);
    return with_noise(a, problem.host_model(), [&](const auto& g) {
      return sample_abc_auxiliary(g, kernel, epsilon, config, &report);
    });
  };
  r.has_parameters = [](const ModelArguments& a) {
    using Model = decltype(std::declval<Make&>()(a).host_model());
    return a.number("noise") > 0 ? generator_has_parameters<models::Noisy<Model>>
                                 : generator_has_parameters<Model>;
  };
  r.gram_structure = [](const ModelArguments& a) {
    using Model = decltype(std::declval<Make&>()(a).host_model());
    return a.number("noise") > 0 ? generator_gram_structure<models::Noisy<Model>>
                                 : generator_gram_structure<Model>;
  };
  return r;
}

const ModelArgument kNoiseArgument{"noise", "0",
                                   "epsilon > 0: condition the noisy generator g(u) + epsilon n"};

ModelSpec sphere_spec() {
  ModelSpec spec =
      model_spec(ModelKind::generator, "sphere",
                 "g(u) = |u|^2 = radius^2, u ~ N(0, I): uniform on the sphere (exact moments)",
                 {{"dim", "3", "inputs N"}, {"radius", "1", "radius r"}, kNoiseArgument});
  spec.generator = runners([](const ModelArguments& a) {
    return PlainProblem<models::Sphere>{models::Sphere::make(a.integer("dim"), a.number("radius"))};
  });
  spec.exact = [](const ModelArguments& a) {
    const auto s = models::Sphere::make(a.integer("dim"), a.number("radius"));
    std::vector<ExactMoment> exact;
    if (a.number("noise") > 0) return exact;  // the noisy posterior has no closed form here
    for (int i = 0; i < s.input_dim(); ++i)
      exact.push_back({s.quantity_name(i), 0.0, s.radius / std::sqrt(double(s.input_dim()))});
    return exact;
  };
  return spec;
}

ModelSpec linear_gaussian_spec() {
  ModelSpec spec =
      model_spec(ModelKind::generator, "linear_gaussian",
                 "g(u) = A u with random A (M x N) from data_seed, u ~ N(0, I): exact Gaussian "
                 "conditional",
                 {{"outputs", "3", "M"},
                  {"inputs", "6", "N"},
                  {"data_seed", "1", "seed of A and of the data"},
                  kNoiseArgument});
  const auto make = [](const ModelArguments& a) {
    return models::LinearGaussianProblem::make(a.integer("outputs"), a.integer("inputs"),
                                               a.unsigned_integer("data_seed"));
  };
  spec.generator = runners(make);
  // SBC: A from data_seed, u* from the prior N(0, I), x̄ = A u*; constrained HMC on A u = x̄.
  spec.sbc_check = [](const ModelArguments& a) {
    if (a.number("noise") > 0)
      throw invalid_argument(
          "linear_gaussian: simulation-based calibration conditions the "
          "noiseless generator (noise=0)");
  };
  spec.sbc = [check = spec.sbc_check](const ModelArguments& a, std::uint64_t seed, std::int64_t r,
                                      const ChmcConfig& config) {
    check(a);
    auto problem = models::LinearGaussianProblem::simulate(
        a.integer("outputs"), a.integer("inputs"), a.unsigned_integer("data_seed"), seed, r);
    ChmcConfig resolved = config;
    resolved.device = choose_chmc_device<models::LinearGaussian>(config.device);
    const models::LinearGaussian model =
        resolved.device == Device::cuda ? problem.device_model() : problem.host_model();
    return SbcReplication{problem.true_inputs(), sample_chmc(model, resolved)};
  };
  spec.exact = [make](const ModelArguments& a) {
    std::vector<ExactMoment> exact;
    if (a.number("noise") > 0) return exact;
    const auto problem = make(a);
    const auto mean = problem.exact_mean();
    const auto covariance = problem.exact_covariance();
    const auto g = problem.host_model();
    const int n = g.input_dim();
    for (int i = 0; i < n; ++i)
      exact.push_back({g.quantity_name(i), mean[i], std::sqrt(std::max(0.0, covariance[i * n + i]))});
    return exact;
  };
  return spec;
}

ModelSpec gld_spec() {
  ModelSpec spec = model_spec(
      ModelKind::generator, "gld",
      "generalised lambda distribution, 250 observations at z = (5, 1, 0.4, -0.1); "
      "diagonal + rank-4 Gram",
      {{"data_seed", std::to_string(models::GldProblem::kDefaultSeed), "seed of the observations"},
       kNoiseArgument});
  spec.generator = runners([](const ModelArguments& a) {
    return models::GldProblem::make(a.unsigned_integer("data_seed"));
  });
  return spec;
}

ModelSpec lotka_volterra_spec(bool summaries) {
  ModelSpec spec = model_spec(
      ModelKind::generator, summaries ? "lotka_volterra_summaries" : "lotka_volterra",
      summaries ? "Lotka-Volterra SDE conditioned on 9 summary statistics of its 50-step "
                  "series (dense Gram)"
                : "stochastic Lotka-Volterra, 50 Euler-Maruyama steps, z = (0.4, 0.005, 0.05, "
                  "0.001), LogNormal(-2, 1) priors; triangular + rank-4 Gram",
      {{"data_seed", std::to_string(models::LotkaVolterraProblem::kDefaultSeed),
        "seed of the simulated data"},
       {"series", "paper",
        "paper: the paper's 50 steps from (100, 100); short: 10 steps from (1, 1) at "
        "z = (0.3, 0.1, 0.2, 0.1), the benchmarks' series (M = 20)"},
       kNoiseArgument});
  const auto make_problem = [](const ModelArguments& a) {
    const bool short_series = a.word("series", {"paper", "short"}) == "short";
    return models::LotkaVolterraProblem::make(
        a.unsigned_integer("data_seed"),
        short_series ? models::LotkaVolterraSettings::short_series()
                     : models::LotkaVolterraSettings{});
  };
  if (summaries) {
    // A problem-shaped adapter whose models are the summary-statistic generator.
    struct Summaries {
      models::LotkaVolterraProblem problem;
      models::LotkaVolterraSummaries host_model() const { return problem.host_summaries_model(); }
      models::LotkaVolterraSummaries device_model() { return problem.device_summaries_model(); }
    };
    spec.generator = runners([make_problem](const ModelArguments& a) {
      return Summaries{make_problem(a)};
    });
  } else {
    spec.generator = runners(make_problem);
  }
  return spec;
}

}  // namespace

std::vector<ModelSpec> generator_model_specs() {
  return {sphere_spec(), linear_gaussian_spec(), gld_spec(), lotka_volterra_spec(false),
          lotka_volterra_spec(true)};
}

}  // namespace myriad
