// `myriad ais`: annealed importance sampling (HAIS by default) of a built-in target, writing
// run.json (log Z with its standard errors), summary.csv (the weighted posterior sample),
// log_weights.npy and particles.npy into a staged output directory that appears only when
// complete.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ais_report.hpp"
#include "base_options.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/summary_csv.hpp"
#include "option_settings.hpp"
#include "run_session.hpp"
#include "schedule_file.hpp"

namespace myriad::cli {

namespace {

/// Where `ais` puts what it reads beyond its AisConfig.
struct AisCommandExtras {
  Precision precision = Precision::float64;
  double base_scale = 1;
};

/// The options of `ais`, the ones every run reads bound to `config` and `own`.
std::vector<OptionSpec> ais_options(AisConfig& config, AisCommandExtras& own) {
  std::vector<OptionSpec> options = run_command_options(
      "built-in target (see 'myriad models')",
      "output directory (run.json, summary.csv, log_weights.npy, "
      "particles.npy)",
      {
          data_option(),
          {"particles", "P", "200", "particles (independent annealing runs) per problem",
           integer_setting(config.particles, 1, 0x7FFFFFFFll)},
          {"temperatures", "T", "1000", "intermediate distributions N (the path has N+1 betas)",
           integer_setting(config.temperatures, 1, 100000000)},
          {"schedule", "linear|geometric|sigmoid", "linear", "inverse-temperature schedule"},
          {"schedule-parameter", "X", "", "beta_min (geometric, 1e-4) or scale s (sigmoid, 4)"},
          {"schedule-file", "PATH", "",
           "a user-given schedule: whitespace-separated betas from 0 to 1 "
           "(instead of --schedule, --schedule-parameter and --temperatures)"},
          {"transition", "hamiltonian|metropolis", "hamiltonian",
           "HAIS / HMC transitions, or the random-walk Metropolis baseline",
           choice_setting(config.transition, parse_ais_transition)},
          {"leapfrog-steps", "L", "1", "leapfrog (or random-walk) steps per temperature",
           integer_setting(config.steps, 1, 1 << 20)},
          {"step-size", "E", "0.2", "leapfrog step size", number_setting(config.step_size)},
          {"persistence", "G", "",
           "momentum refresh gamma: v <- sqrt(1-G) v + sqrt(G) r; "
           "1 = full refresh (plain AIS); default 1 - 0.5^E",
           when_given(number_setting(config.refresh))},
          {"proposal-scale", "S", "0.1", "random-walk proposal standard deviation (metropolis)",
           number_setting(config.proposal_scale)},
          {"base-scale", "S", "1", "standard deviation of the Gaussian base distribution",
           number_setting(own.base_scale)},
          {"reverse", "", "",
           "also run reverse (BDMC) runs from exact posterior draws: an upper "
           "bound on log Z",
           flag_setting(config.reverse)},
          {"bootstrap", "R", "1000", "bootstrap replicates for log_z_se_bootstrap (0: none)",
           integer_setting(config.bootstrap_replicates, 0, 1000000)},
          {"precision", "double|float", "double", "floating-point precision of the particles",
           choice_setting(own.precision, parse_precision)},
          {"particle-mapping", "auto|thread|warp", "auto",
           "CUDA: one thread per particle (many particles) or one warp per particle (few "
           "particles, costly target); auto picks warp for targets with a team gradient when "
           "the warps fit one wave",
           choice_setting(config.particle_mapping,
                          [](const std::string& name) {
                            return parse_team_mapping(name, "particle mapping");
                          })},
          {"no-simd", "", "",
           "CPU: Hamiltonian transitions one particle at a time instead of in SIMD lanes (the "
           "same log weights to rounding, slower)",
           unless_flag_setting(config.cpu_simd_lanes)},
      },
      {config.seed, config.device});
  // The base options after --base-scale, before the common tail (--seed …).
  const auto at = std::find_if(options.begin(), options.end(),
                               [](const OptionSpec& o) { return o.name == "base-scale"; });
  const std::vector<OptionSpec> base = base_fit_options();
  options.insert(at + 1, base.begin(), base.end());
  return options;
}

}  // namespace

int ais_command(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  AisConfig config;
  AisCommandExtras own;
  CommandLine line("ais", ais_options(config, own));
  if (parse_run_command(line, argc, argv)) return 0;  // --help

  const ScheduleOptions schedule = read_schedule_options(line);
  config.schedule = schedule.kind;
  config.schedule_parameter = schedule.parameter;
  config.beta = schedule.beta;
  const Precision precision = own.precision;
  config.validate();
  const double base_scale = own.base_scale;
  if (!(base_scale > 0)) throw UsageError{"--base-scale must be positive"};
  config.fit_base = parse_base_fit(line, {"base-scale"});

  const auto [spec, arguments] = chosen_model(
      line, [](const ModelSpec& s) { return bool(s.anneal); }, "an annealing target");
  AisRunDescription run;
  static_cast<RunIdentity&>(run) = run_identity(spec, arguments, config.device);
  run.precision = to_string(precision);
  run.schedule = schedule.name();
  // The parameter in effect (null in run.json for the linear schedule, which has none).
  run.schedule_parameter = schedule.parameter_in_effect();

  RunSession session(line, config.device, start);
  config.progress = session.phase_progress();
  config.base.isotropic_scale = base_scale;
  const AisResult result = spec.anneal(arguments, config, precision);
  session.progress().finish();

  io::write_summary_csv(session.path("summary.csv"), ais_summary_rows(result));
  io::write_npy(session.path("log_weights.npy"), result.forward.log_weights.data(),
                {result.problems, result.particles});
  if (result.has_reverse)
    io::write_npy(session.path("reverse_log_ratios.npy"), result.reverse.log_weights.data(),
                  {result.problems, result.particles});
  io::write_npy(session.path("particles.npy"), result.positions.data(),
                {result.problems, result.particles, result.dim});
  run.total_seconds = session.seconds();
  session.commit(ais_report(run, config, result));

  if (!session.quiet()) {
    std::printf("%s: %d problem(s) x %lld particles x %d temperatures on %s\n", spec.name.c_str(),
                result.problems, static_cast<long long>(result.particles), result.temperatures,
                result.device.c_str());
    // One temperature is plain importance sampling: no transitions, so no acceptance.
    char acceptance[32] = "none (no transitions)";
    if (result.forward.stats.transitions > 0)
      std::snprintf(acceptance, sizeof acceptance, "%.3f", result.forward.stats.mean_accept_prob());
    std::printf(
        "  %.3g particle-temperatures/s (%.2f s), acceptance %s, failed starts %lld, "
        "divergent %lld\n",
        result.particle_temperatures_per_second(), result.forward.seconds, acceptance,
        static_cast<long long>(result.forward.failed_starts),
        static_cast<long long>(result.forward.stats.divergent));
    const double log_z =
        result.problems == 1 ? result.forward.estimates[0].log_z : result.average.mean;
    const double se =
        result.problems == 1 ? result.forward.estimates[0].se_delta : result.average.mc_error;
    std::printf("  log Z = %.6f +- %.6f (se)", log_z, se);
    if (result.problems == 1) std::printf(", weight ESS %.1f", result.forward.estimates[0].ess);
    if (result.problems > 1) std::printf(" (data error %.4f)", result.average.data_error);
    std::printf("\n");
    if (!result.exact_log_z.empty()) {
      double exact = 0;
      for (double v : result.exact_log_z) exact += v / result.problems;
      if (!std::isnan(exact)) std::printf("  exact log Z = %.6f\n", exact);
    }
    if (result.has_reverse) {
      double upper = 0;
      for (const auto& e : result.reverse.estimates) upper += e.log_z / result.problems;
      std::printf("  upper bound (reverse) = %.6f\n", upper);
    }
    std::printf("  wrote %s/{run.json,summary.csv,log_weights.npy,%sparticles.npy}\n",
                session.final_path().c_str(), result.has_reverse ? "reverse_log_ratios.npy," : "");
  }
  return 0;
}

}  // namespace myriad::cli
