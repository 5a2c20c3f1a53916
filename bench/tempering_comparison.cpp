// myriad_tempering_comparison — the thesis's Boltzmann-machine comparison (thesis §5.6.1;
// thesis-methods.md §9.6): the RMSE of log Z, E[x] and Var[x] against run time for AIS, simulated
// tempering, Gibbs CT and CT-HMC on Boltzmann-machine relaxations whose answers are exact (the
// 2^{D_B} states enumerated), every method from the same fitted base and log ζ (thesis §5.5).
// Prints a Markdown table (bench/results/tempering-comparison-cpu.md records one).
//
//   myriad_tempering_comparison [--units D_B] [--systems S] [--repeats R] [--chains C]
//                               [--iterations N,N,...] [--ais K,K,...] [--particles P]
//                               [--device cpu|cuda] [--lambda identity|sdp]
//   myriad_tempering_comparison --couplings UNITS:SEED:COUNT
//
// The second form prints the couplings W and biases b of COUNT systems from SEED on, one JSON
// object per line, for scripts/boltzmann-sdp-lambda (which solves their SDPs).
//
// System s is boltzmann_relaxation with seed 201702 + s, relaxed with Λ = cI or (--lambda sdp)
// the shipped SDP Λ (models/boltzmann_sdp_lambda.hpp). Repeat r of a method on a system runs with
// seed 1 + r. Settings as the thesis's: HMC δt = 0.5, L = 20 for every method; simulated tempering
// with 1000 sigmoidal temperatures; AIS with full momentum refresh (HMC transitions) on K sigmoidal
// temperatures, P particles per estimate. The tempering runs discard the first tenth of their
// transitions. RMSEs are over systems × repeats (and coordinates, for the moments); the
// variational fit's own RMSE (log ζ, the base's mean and variances) is the thesis's yardstick:
// "vs VI" is a method's RMSE over the fit's. Efficiency is 1 / (RMSE² × seconds): the precision
// a second of the method buys (constant as a run lengthens when its error falls as 1/√time); per
// gradient, 1 / (RMSE² × millions of target gradients), which sets aside how fast each backend
// evaluates them (the CPU's AIS runs particles in SIMD lanes, its tempering one chain at a time).
// Gradients per run: AIS P K L; Gibbs CT and simulated tempering C N (L + 1) (the transition's
// and the end densities'); CT-HMC C N L.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "myriad/estimate/variational_base.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/run/ais.hpp"
#include "myriad/run/temper.hpp"

namespace {

using myriad::models::BoltzmannRelaxationData;

struct Options {
  int units = 20;
  int systems = 3;
  int repeats = 5;
  int chains = 10;
  std::vector<int> iterations{1000, 4000};
  std::vector<int> ais_temperatures{1000, 5000};
  int particles = 100;
  myriad::Device device = myriad::Device::cpu;
  myriad::models::BoltzmannLambda lambda = myriad::models::BoltzmannLambda::identity;
  std::string couplings;  ///< UNITS:SEED:COUNT: print the systems' parameters instead
};

std::vector<int> parse_list(const char* text) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::atoi(item.c_str()));
  return values;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--units")
      o.units = std::atoi(value);
    else if (key == "--systems")
      o.systems = std::atoi(value);
    else if (key == "--repeats")
      o.repeats = std::atoi(value);
    else if (key == "--chains")
      o.chains = std::atoi(value);
    else if (key == "--iterations")
      o.iterations = parse_list(value);
    else if (key == "--ais")
      o.ais_temperatures = parse_list(value);
    else if (key == "--particles")
      o.particles = std::atoi(value);
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
  return o;
}

/// One system's exact answers and fitted base.
struct System {
  BoltzmannRelaxationData<double> data;
  double log_z = 0;
  std::vector<double> mean, variance;
  myriad::VariationalBase base;
};

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

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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
  std::vector<System> systems;
  Errors vi;
  const myriad::VariationalBaseConfig fit;
  vi.gradients = static_cast<double>(fit.restarts) *
                 (static_cast<double>(fit.iterations) * fit.samples + fit.elbo_samples);
  for (int s = 0; s < o.systems; ++s) {
    System system{
        BoltzmannRelaxationData<double>::synthetic(o.units, 201702 + s, o.lambda), 0, {}, {}, {}};
    const auto host = system.data.host_model();
    system.log_z = host.exact_log_z(0);
    system.mean = system.data.mean_x();
    const int d = host.dim();
    for (int i = 0; i < d; ++i)
      system.variance.push_back(system.data.covariance_x()[static_cast<std::size_t>(i) * d + i]);
    system.base = myriad::fit_variational_base(host, fit);
    std::vector<double> base_variance;
    for (double sd : system.base.scale) base_variance.push_back(sd * sd);
    vi.add(system, system.base.log_zeta, system.base.mean, base_variance, system.base.seconds);
    std::fprintf(stderr, "system %d: log Z %.4f, fitted log zeta %.4f from %zu fits\n", s,
                 system.log_z, system.base.log_zeta, system.base.components.size());
    systems.push_back(std::move(system));
  }

  std::printf(
      "| method | setting | seconds per run | RMSE log Z (vs VI) | RMSE E[x] (vs VI) | "
      "RMSE Var[x] (vs VI) | efficiency 1/(RMSE² s) | per gradient 1/(RMSE² Mgrad) |\n"
      "|---|---|---|---|---|---|---|---|\n");
  print_row("variational fit", "32 restarts × 2000 steps", vi, vi);

  for (int k : o.ais_temperatures) {
    Errors e;
    e.gradients = static_cast<double>(o.particles) * k * 20;
    for (System& s : systems) {
      for (int r = 0; r < o.repeats; ++r) {
        myriad::AisConfig config;
        config.particles = o.particles;
        config.temperatures = k;
        config.schedule = myriad::ScheduleKind::sigmoid;
        config.steps = 20;
        config.step_size = 0.5;
        config.refresh = 1.0;
        config.seed = 1 + static_cast<std::uint64_t>(r);
        config.bootstrap_replicates = 0;
        config.device = o.device;
        config.base = s.base.spec();
        const auto start = std::chrono::steady_clock::now();
        const myriad::AisResult result = o.device == myriad::Device::cuda
                                             ? myriad::ais(s.data.device_model(), config)
                                             : myriad::ais(s.data.host_model(), config);
        const double seconds = seconds_since(start);
        std::vector<double> mean, variance;
        for (const auto& m : result.summary) {
          mean.push_back(m.mean);
          variance.push_back(m.sd * m.sd);
        }
        e.add(s, result.forward.estimates[0].log_z, mean, variance, seconds);
      }
    }
    print_row("AIS", "K = " + std::to_string(k) + ", " + std::to_string(o.particles) + " particles",
              e, vi);
  }

  for (const myriad::TemperMethod method :
       {myriad::TemperMethod::simulated_tempering, myriad::TemperMethod::gibbs_ct,
        myriad::TemperMethod::ct_hmc}) {
    for (int n : o.iterations) {
      Errors e;
      const int per_transition = method == myriad::TemperMethod::ct_hmc ? 20 : 21;
      e.gradients = static_cast<double>(o.chains) * n * per_transition;
      for (System& s : systems) {
        for (int r = 0; r < o.repeats; ++r) {
          myriad::TemperConfig config;
          config.method = method;
          config.chains = o.chains;
          config.warmup = n / 10;
          config.draws = n - n / 10;
          config.seed = 1 + static_cast<std::uint64_t>(r);
          config.base = s.base.spec();
          config.log_zeta = s.base.log_zeta;
          config.device = o.device;
          const auto start = std::chrono::steady_clock::now();
          const myriad::TemperResult result = o.device == myriad::Device::cuda
                                                  ? myriad::temper(s.data.device_model(), config)
                                                  : myriad::temper(s.data.host_model(), config);
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
