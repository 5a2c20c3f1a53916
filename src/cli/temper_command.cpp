// `myriad temper`: Gibbs continuous tempering, CT-HMC or simulated tempering of a built-in
// annealing target (docs/tempering.md), writing run.json (log Z with its standard error, the
// base check, R-hat of β), summary.csv (the target's weighted moments) and beta.npy (every
// chain's β per kept transition) into a staged output directory that appears only when complete.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "base_options.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/summary_csv.hpp"
#include "option_settings.hpp"
#include "run_session.hpp"
#include "schedule_file.hpp"
#include "temper_report.hpp"

namespace myriad::cli {

namespace {

/// The options of `temper`, the ones every run reads bound to `config`.
std::vector<OptionSpec> temper_options(TemperConfig& config) {
  std::vector<OptionSpec> own{
      data_option(),
      {"method", "gibbs-ct|ct-hmc|st", "gibbs-ct",
       "Gibbs continuous tempering, HMC on (x, u) with beta = sigmoid(u/s), or simulated "
       "tempering",
       choice_setting(config.method, parse_temper_method)},
      {"chains", "C", "64", "independent chains (the standard errors are over chains)",
       integer_setting(config.chains, 2, 0x7FFFFFFFll)},
      {"warmup", "N", "500", "transitions discarded per chain",
       integer_setting(config.warmup, 0, 100000000)},
      {"draws", "N", "2000", "transitions kept per chain, every one used by the estimators",
       integer_setting(config.draws, 2, 100000000)},
      {"step-size", "E", "0.5", "leapfrog step size", number_setting(config.step_size)},
      {"leapfrog-steps", "L", "20", "leapfrog steps per transition",
       integer_setting(config.leapfrog_steps, 1, 1 << 20)},
      {"metric", "unit|base", "unit",
       "HMC's mass matrix: unit, or the base's scales (the step size then in the base's units; "
       "for a fitted base on a target whose coordinates differ in scale)",
       choice_setting(config.metric, parse_tempering_metric)},
      {"log-zeta", "Z", "0", "log zeta, a guess of log Z: the closer, the flatter beta's mix",
       number_setting(config.log_zeta)},
      {"base-mean", "M", "0", "mean of every coordinate of the Gaussian base",
       number_setting(config.base.isotropic_mean)},
      {"base-scale", "S", "1", "standard deviation of every coordinate of the Gaussian base",
       number_setting(config.base.isotropic_scale)},
      {"temperatures", "K", "1000", "st: inverse temperatures 0 = beta_0 < ... < beta_K-1 = 1",
       integer_setting(config.temperatures, 2, 100000000)},
      {"schedule", "linear|geometric|sigmoid", "sigmoid",
       "st: spacing of the inverse temperatures (sigmoid: the thesis's (5.53))"},
      {"schedule-parameter", "X", "", "st: beta_min (geometric, 1e-4) or scale s (sigmoid, 4)"},
      {"schedule-file", "PATH", "",
       "st: a user-given ladder, whitespace-separated betas from 0 to 1 (instead of "
       "--schedule, --schedule-parameter and --temperatures)"},
      {"u-scale", "S", "1", "ct-hmc: beta = sigmoid(u / S)", number_setting(config.u_scale)},
      {"initial-u", "U", "-10", "ct-hmc: u at the start (beta near 0: the base)",
       number_setting(config.initial_u)},
  };
  for (OptionSpec& option : base_fit_options()) own.push_back(std::move(option));
  return run_command_options("built-in target (see 'myriad models')",
                             "output directory (run.json, summary.csv, beta.npy)", std::move(own),
                             {config.seed, config.device});
}

/// Refuses an option that `method` does not use, naming the method it belongs to.
void require_method(const CommandLine& line, TemperMethod method, TemperMethod owner,
                    std::initializer_list<const char*> options) {
  if (method == owner) return;
  for (const char* option : options)
    if (line.has(option))
      throw UsageError{std::string("--") + option + " applies to --method " + to_string(owner)};
}

}  // namespace

int temper_command(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  TemperConfig config;
  CommandLine line("temper", temper_options(config));
  if (parse_run_command(line, argc, argv)) return 0;  // --help

  require_method(line, config.method, TemperMethod::simulated_tempering,
                 {"temperatures", "schedule", "schedule-parameter", "schedule-file"});
  require_method(line, config.method, TemperMethod::ct_hmc, {"u-scale", "initial-u"});
  const ScheduleOptions schedule = read_schedule_options(line);
  config.schedule = schedule.kind;
  config.schedule_parameter = schedule.parameter;
  config.beta = schedule.beta;
  if (!(config.base.isotropic_scale > 0)) throw UsageError{"--base-scale must be positive"};
  config.fit_base = parse_base_fit(line, {"log-zeta", "base-mean", "base-scale"});
  config.validate();

  const auto [spec, arguments] = chosen_model(
      line, [](const ModelSpec& s) { return bool(s.temper); }, "an annealing target");
  TemperRunDescription run;
  static_cast<RunIdentity&>(run) = run_identity(spec, arguments, config.device);
  if (config.method == TemperMethod::simulated_tempering) {
    run.schedule = schedule.name();
    run.schedule_parameter = schedule.parameter_in_effect();
  }

  RunSession session(line, config.device, start);
  config.progress = session.phase_progress();
  const TemperResult result = spec.temper(arguments, config);
  session.progress().finish();

  io::write_summary_csv(session.path("summary.csv"), temper_summary_rows(result));
  io::write_npy(session.path("beta.npy"), result.beta_trace.data(),
                {static_cast<std::int64_t>(result.draws), result.chains});
  run.total_seconds = session.seconds();
  session.commit(temper_report(run, config, result));

  if (!session.quiet()) {
    std::printf("%s: %s, %lld chains x %d draws (after %d warm-up) on %s\n", spec.name.c_str(),
                result.method.c_str(), static_cast<long long>(result.chains), result.draws,
                result.warmup, result.device.c_str());
    std::printf(
        "  %.3g chain-iterations/s (%.2f s), acceptance %.3f, divergent %lld, dropped %lld\n",
        result.chain_iterations_per_second(), result.seconds, result.mean_accept_prob(),
        static_cast<long long>(result.stats.divergent), static_cast<long long>(result.dropped));
    if (result.fitted_base)
      std::printf("  fitted base: %zu distinct fits of %d, log zeta %.4f (%.2f s)\n",
                  result.fitted_base->components.size(), result.fitted_base->restarts,
                  result.fitted_base->log_zeta, result.fitted_base->seconds);
    std::printf("  log Z = %.6f +- %.6f (se)\n", result.log_z.value, result.log_z.se);
    if (!std::isnan(result.log_z_exact)) std::printf("  exact log Z = %.6f\n", result.log_z_exact);
    std::printf("  base check: max |error| %.2f se; beta R-hat %.4f, mean beta %.3f\n",
                result.max_base_error_in_se, result.beta_rhat, result.mean_beta);
    std::printf("  wrote %s/{run.json,summary.csv,beta.npy}\n", session.final_path().c_str());
  }
  return 0;
}

}  // namespace myriad::cli
