// myriad_tempering_comparison — the thesis's comparisons of continuous tempering with AIS
// (thesis §5.6; thesis-methods.md §9.6, §9.8): the RMSE of log Z, E[x] and Var[x] against run time
// for AIS, simulated tempering, Gibbs CT and CT-HMC, every method from the same fitted base and
// log ζ (thesis §5.5). Prints a Markdown table (bench/results/tempering-cpu.md records them).
//
//   myriad_tempering_comparison [--target boltzmann|radon] [--repeats R] [--chains C]
//                               [--iterations N,N,...] [--methods st,gibbs-ct,ct-hmc]
//                               [--step-size E] [--leapfrog-steps L] [--metric unit|base]
//                               [--ais K,K,...] [--particles P] [--ais-step-size E]
//                               [--ais-steps L] [--device cpu|cuda]
//     boltzmann: [--units D_B] [--systems S] [--lambda identity|sdp]
//     radon:     [--reference-particles P] [--reference-temperatures K]
//   myriad_tempering_comparison --couplings UNITS:SEED:COUNT
//
// The second form prints the couplings W and biases b of COUNT systems from SEED on, one JSON
// object per line, for scripts/boltzmann-sdp-lambda (which solves their SDPs).
//
// Targets and their answers:
//   boltzmann  (§9.6) system s is boltzmann_relaxation with seed 201702 + s, relaxed with Λ = cI
//              or (--lambda sdp) the shipped SDP Λ (models/boltzmann_sdp_lambda.hpp); exact log Z,
//              E[x] and Var[x] by enumerating the 2^{D_B} states (on the GPU with --device
//              cuda).
//   radon      (§9.8) the Minnesota radon regression (models/radon.hpp), one system; no exact
//              answer: the reference is, as the thesis's, one long AIS run (default 1000
//              particles × 10 000 sigmoidal temperatures, HMC with --ais-step-size and
//              --ais-steps; seed 1000, apart from the repeats'), for log Z; for the moments,
//              HMC (myriad::sample's defaults, 64 chains × 4000 draws). Their own errors are in
//              the RMSEs (printed with the references: small beside the rows').
// Repeat r of a method runs with seed 1 + r. Defaults are the thesis's Boltzmann settings: HMC
// δt = 0.5, L = 20 for every method, the unit metric; simulated tempering with 1000 sigmoidal
// temperatures; AIS with full momentum refresh (HMC transitions) on K sigmoidal temperatures, P
// particles per estimate. The tempering runs discard the first tenth of their transitions. RMSEs
// are over systems × repeats (and coordinates, for the moments); the variational fit's own RMSE
// (log ζ, the base's mean and variances) is the thesis's yardstick: "vs VI" is a method's RMSE
// over the fit's. Efficiency is 1 / (RMSE² × seconds): the precision a second of the method buys
// (constant as a run lengthens when its error falls as 1/√time); per gradient, 1 / (RMSE² ×
// millions of target gradients), which sets aside how fast each backend evaluates them (the
// CPU's AIS runs particles in SIMD lanes, its tempering one chain at a time). Gradients per run:
// AIS P K L; Gibbs CT and simulated tempering C N (L + 1) (the transition's and the end
// densities'); CT-HMC C N L.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "myriad/app/option_names.hpp"
#include "myriad/app/radon_data.hpp"
#include "myriad/estimate/variational_base.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/run/ais.hpp"
#include "myriad/run/sample.hpp"
#include "myriad/run/temper.hpp"

namespace {

using myriad::models::BoltzmannRelaxationData;

struct Options {
  std::string target = "boltzmann";
  int units = 20;
  int systems = 3;
  int repeats = 5;
  int chains = 10;
  std::vector<int> iterations{1000, 4000};
  std::vector<myriad::TemperMethod> methods{myriad::TemperMethod::simulated_tempering,
                                            myriad::TemperMethod::gibbs_ct,
                                            myriad::TemperMethod::ct_hmc};
  double step_size = 0.5;
  int leapfrog_steps = 20;
  myriad::TemperingMetric metric = myriad::TemperingMetric::unit;
  std::vector<int> ais_temperatures{1000, 5000};
  int particles = 100;
  double ais_step_size = 0.5;
  int ais_steps = 20;
  int reference_particles = 1000;
  int reference_temperatures = 10000;
  myriad::Device device = myriad::Device::cpu;
  myriad::models::BoltzmannLambda lambda = myriad::models::BoltzmannLambda::identity;
  std::string couplings;  ///< UNITS:SEED:COUNT: print the systems' parameters instead
};

std::vector<std::string> parse_words(const char* text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) words.push_back(item);
  return words;
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> values;
  for (const auto& word : parse_words(text)) values.push_back(std::atoi(word.c_str()));
  return values;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--target")
      o.target = value;
    else if (key == "--units")
      o.units = std::atoi(value);
    else if (key == "--systems")
      o.systems = std::atoi(value);
    else if (key == "--repeats")
      o.repeats = std::atoi(value);
    else if (key == "--chains")
      o.chains = std::atoi(value);
    else if (key == "--iterations")
      o.iterations = parse_list(value);
    else if (key == "--methods") {
      o.methods.clear();
      for (const auto& word : parse_words(value))
        o.methods.push_back(myriad::parse_temper_method(word));
    } else if (key == "--step-size")
      o.step_size = std::atof(value);
    else if (key == "--leapfrog-steps")
      o.leapfrog_steps = std::atoi(value);
    else if (key == "--metric")
      o.metric = myriad::parse_tempering_metric(value);
    else if (key == "--ais")
      o.ais_temperatures = parse_list(value);
    else if (key == "--particles")
      o.particles = std::atoi(value);
    else if (key == "--ais-step-size")
      o.ais_step_size = std::atof(value);
    else if (key == "--ais-steps")
      o.ais_steps = std::atoi(value);
    else if (key == "--reference-particles")
      o.reference_particles = std::atoi(value);
    else if (key == "--reference-temperatures")
      o.reference_temperatures = std::atoi(value);
    else if (key == "--device")
      o.device = std::strcmp(value, "cuda") == 0 ? myriad::Device::cuda : myriad::Device::cpu;
    else if (key == "--lambda")
      o.lambda = std::strcmp(value, "sdp") == 0 ? myriad::models::BoltzmannLambda::sdp
                                                : myriad::models::BoltzmannLambda::identity;
    else if (key == "--couplings")
      o.couplings = value;
    else {
      std::fprintf(stderr, "myriad_tempering_comparison: unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  if (o.target != "boltzmann" && o.target != "radon") {
    std::fprintf(stderr, "myriad_tempering_comparison: --target is boltzmann or radon\n");
    std::exit(2);
  }
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// One target with its reference answers and fitted base, and the two runs on it (on the device
/// the options ask for; the runs share the target's data, uploaded once).
struct System {
  std::function<myriad::AisResult(const myriad::AisConfig&)> ais;
  std::function<myriad::TemperResult(const myriad::TemperConfig&)> temper;
  double log_z = 0;
  std::vector<double> mean, variance;  ///< empty: no reference moments
  myriad::VariationalBase base;
};

/// A System on `data` (an owner with host_model() / device_model()), its base fitted on the host.
template <class Data>
System make_system(std::shared_ptr<Data> data, myriad::Device device) {
  System s;
  s.ais = [data, device](const myriad::AisConfig& config) {
    return device == myriad::Device::cuda ? myriad::ais(data->device_model(), config)
                                          : myriad::ais(data->host_model(), config);
  };
  s.temper = [data, device](const myriad::TemperConfig& config) {
    return device == myriad::Device::cuda ? myriad::temper(data->device_model(), config)
                                          : myriad::temper(data->host_model(), config);
  };
  s.base = myriad::fit_variational_base(data->host_model(), myriad::VariationalBaseConfig{});
  return s;
}

/// The weighted posterior means and variances of an AIS run's particles.
void ais_moments(const myriad::AisResult& result, std::vector<double>& mean,
                 std::vector<double>& variance) {
  mean.clear();
  variance.clear();
  for (const auto& m : result.summary) {
    mean.push_back(m.mean);
    variance.push_back(m.sd * m.sd);
  }
}

/// AIS with the options' transition on K sigmoidal temperatures from the system's fitted base.
myriad::AisConfig ais_config(const Options& o, const System& s, int particles, int temperatures,
                             std::uint64_t seed) {
  myriad::AisConfig config;
  config.particles = particles;
  config.temperatures = temperatures;
  config.schedule = myriad::ScheduleKind::sigmoid;
  config.steps = o.ais_steps;
  config.step_size = o.ais_step_size;
  config.refresh = 1.0;
  config.seed = seed;
  config.bootstrap_replicates = 0;
  config.device = o.device;
  config.base = s.base.spec();
  return config;
}

std::vector<System> boltzmann_systems(const Options& o) {
  std::vector<System> systems;
  for (int k = 0; k < o.systems; ++k) {
    auto data = std::make_shared<BoltzmannRelaxationData<double>>(
        BoltzmannRelaxationData<double>::synthetic(o.units, 201702 + k, o.lambda,
                                                   o.device == myriad::Device::cuda
                                                       ? myriad::models::EnumerationDevice::cuda
                                                       : myriad::models::EnumerationDevice::cpu));
    const auto host = data->host_model();
    System s = make_system(data, o.device);
    s.log_z = host.exact_log_z(0);
    s.mean = data->mean_x();
    const int d = host.dim();
    for (int i = 0; i < d; ++i)
      s.variance.push_back(data->covariance_x()[static_cast<std::size_t>(i) * d + i]);
    std::fprintf(stderr, "system %d: log Z %.4f, fitted log zeta %.4f from %zu fits\n", k, s.log_z,
                 s.base.log_zeta, s.base.components.size());
    systems.push_back(std::move(s));
  }
  return systems;
}

std::vector<System> radon_systems(const Options& o) {
  auto data = std::make_shared<myriad::models::RadonData<double>>(
      myriad::radon_data<double>(myriad::minnesota_radon()));
  System s = make_system(data, o.device);
  auto start = std::chrono::steady_clock::now();
  const myriad::AisResult reference =
      s.ais(ais_config(o, s, o.reference_particles, o.reference_temperatures, 1000));
  s.log_z = reference.forward.estimates[0].log_z;
  std::fprintf(stderr,
               "radon: reference log Z %.4f +- %.4f (AIS, %d particles x %d temperatures, weight "
               "ESS %.1f, %.1f s); fitted log zeta %.4f from %zu fits\n",
               s.log_z, reference.forward.estimates[0].se_delta, o.reference_particles,
               o.reference_temperatures, reference.forward.estimates[0].ess, seconds_since(start),
               s.base.log_zeta, s.base.components.size());
  // The moments' reference: HMC (myriad::sample, its defaults) with 64 chains × 4000 draws, whose
  // Monte Carlo errors are a tenth of the AIS reference's weighted moments'.
  start = std::chrono::steady_clock::now();
  myriad::SampleConfig hmc;
  hmc.chains = 64;
  hmc.draws = 4000;
  hmc.seed = 1000;
  hmc.device = o.device;
  const myriad::SampleResult moments = o.device == myriad::Device::cuda
                                           ? myriad::sample(data->device_model(), hmc)
                                           : myriad::sample(data->host_model(), hmc);
  double worst_mcse = 0;
  for (const auto& v : moments.summary) {
    s.mean.push_back(v.mean);
    s.variance.push_back(v.sd * v.sd);
    worst_mcse = std::max(worst_mcse, v.mcse_mean);
  }
  std::fprintf(stderr, "radon: reference moments from HMC, 64 chains x 4000 draws (max MCSE %.4f, %.1f s)\n",
               worst_mcse, seconds_since(start));
  return {s};
}

/// Squared errors summed over estimates, for RMSEs.
struct Errors {
  double log_z = 0, mean = 0, variance = 0;
  int runs = 0, coordinates = 0;
  double seconds = 0;
  double gradients = 0;  ///< target gradients per run
  void add(const System& s, double log_z_estimate, const std::vector<double>& mean_estimate,
           const std::vector<double>& variance_estimate, double run_seconds) {
    log_z += std::pow(log_z_estimate - s.log_z, 2);
    for (std::size_t i = 0; i < s.mean.size(); ++i) {
      mean += std::pow(mean_estimate[i] - s.mean[i], 2);
      variance += std::pow(variance_estimate[i] - s.variance[i], 2);
    }
    ++runs;
    coordinates += static_cast<int>(s.mean.size());
    seconds += run_seconds;
  }
  double rmse_log_z() const { return std::sqrt(log_z / runs); }
  double rmse_mean() const { return std::sqrt(mean / coordinates); }
  double rmse_variance() const { return std::sqrt(variance / coordinates); }
  double mean_seconds() const { return seconds / runs; }
  double efficiency() const { return 1.0 / (rmse_log_z() * rmse_log_z() * mean_seconds()); }
  double efficiency_per_gradient() const {
    return 1.0 / (rmse_log_z() * rmse_log_z() * gradients * 1e-6);
  }
};

void print_row(const char* method, const std::string& setting, const Errors& e, const Errors& vi) {
  std::printf("| %s | %s | %.3f | %.4f (%.2f) | %.4f (%.2f) | %.4f (%.2f) | %.3g | %.3g |\n",
              method, setting.c_str(), e.mean_seconds(), e.rmse_log_z(),
              e.rmse_log_z() / vi.rmse_log_z(), e.rmse_mean(), e.rmse_mean() / vi.rmse_mean(),
              e.rmse_variance(), e.rmse_variance() / vi.rmse_variance(), e.efficiency(),
              e.gradients > 0 ? e.efficiency_per_gradient() : 0.0);
  std::fflush(stdout);
}

}  // namespace

/// Prints W and b of the systems `spec` (UNITS:SEED:COUNT) names, one JSON object per line.
int print_couplings(const std::string& spec) {
  int units = 0, count = 0;
  unsigned long long seed = 0;
  if (std::sscanf(spec.c_str(), "%d:%llu:%d", &units, &seed, &count) != 3 || count < 1) {
    std::fprintf(stderr, "myriad_tempering_comparison: --couplings takes UNITS:SEED:COUNT\n");
    return 2;
  }
  for (int s = 0; s < count; ++s) {
    const auto [w, b] = BoltzmannRelaxationData<double>::random_parameters(units, seed + s);
    std::printf("{\"units\": %d, \"seed\": %llu, \"w\": [", units, seed + s);
    for (std::size_t i = 0; i < w.size(); ++i) std::printf("%s%.17g", i ? ", " : "", w[i]);
    std::printf("], \"b\": [");
    for (std::size_t i = 0; i < b.size(); ++i) std::printf("%s%.17g", i ? ", " : "", b[i]);
    std::printf("]}\n");
  }
  return 0;
}

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!o.couplings.empty()) return print_couplings(o.couplings);
  std::vector<System> systems = o.target == "radon" ? radon_systems(o) : boltzmann_systems(o);
  Errors vi;
  const myriad::VariationalBaseConfig fit;
  vi.gradients = static_cast<double>(fit.restarts) *
                 (static_cast<double>(fit.iterations) * fit.samples + fit.elbo_samples);
  for (const System& s : systems) {
    std::vector<double> base_variance;
    for (double sd : s.base.scale) base_variance.push_back(sd * sd);
    vi.add(s, s.base.log_zeta, s.base.mean, base_variance, s.base.seconds);
  }

  std::printf(
      "| method | setting | seconds per run | RMSE log Z (vs VI) | RMSE E[x] (vs VI) | "
      "RMSE Var[x] (vs VI) | efficiency 1/(RMSE² s) | per gradient 1/(RMSE² Mgrad) |\n"
      "|---|---|---|---|---|---|---|---|\n");
  print_row("variational fit", "32 restarts × 2000 steps", vi, vi);

  for (int k : o.ais_temperatures) {
    Errors e;
    e.gradients = static_cast<double>(o.particles) * k * o.ais_steps;
    for (const System& s : systems) {
      for (int r = 0; r < o.repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const myriad::AisResult result =
            s.ais(ais_config(o, s, o.particles, k, 1 + static_cast<std::uint64_t>(r)));
        const double seconds = seconds_since(start);
        std::vector<double> mean, variance;
        ais_moments(result, mean, variance);
        e.add(s, result.forward.estimates[0].log_z, mean, variance, seconds);
      }
    }
    print_row("AIS", "K = " + std::to_string(k) + ", " + std::to_string(o.particles) + " particles",
              e, vi);
  }

  for (const myriad::TemperMethod method : o.methods) {
    for (int n : o.iterations) {
      Errors e;
      const int per_transition =
          method == myriad::TemperMethod::ct_hmc ? o.leapfrog_steps : o.leapfrog_steps + 1;
      e.gradients = static_cast<double>(o.chains) * n * per_transition;
      for (const System& s : systems) {
        for (int r = 0; r < o.repeats; ++r) {
          myriad::TemperConfig config;
          config.method = method;
          config.chains = o.chains;
          config.warmup = n / 10;
          config.draws = n - n / 10;
          config.seed = 1 + static_cast<std::uint64_t>(r);
          config.step_size = o.step_size;
          config.leapfrog_steps = o.leapfrog_steps;
          config.metric = o.metric;
          config.base = s.base.spec();
          config.log_zeta = s.base.log_zeta;
          config.device = o.device;
          const auto start = std::chrono::steady_clock::now();
          const myriad::TemperResult result = s.temper(config);
          const double seconds = seconds_since(start);
          std::vector<double> variance;
          for (double sd : result.target_sd) variance.push_back(sd * sd);
          std::vector<double> mean;
          for (const auto& m : result.target_mean) mean.push_back(m.value);
          e.add(s, result.log_z.value, mean, variance, seconds);
        }
      }
      print_row(myriad::to_string(method),
                std::to_string(o.chains) + " chains × " + std::to_string(n) + " iterations", e, vi);
    }
  }
  return 0;
}
