#include "run_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace myriad::cli {

Json stats_json(const IterationStats& s) {
  Json v = Json::object();
  v["transitions"] = s.transitions;
  v["mean_accept_prob"] = s.mean_accept_prob();
  v["accept_rate"] = s.transitions ? double(s.accepted) / double(s.transitions) : 0.0;
  v["divergent"] = s.divergent;
  v["non_finite"] = s.non_finite;
  v["gradient_evaluations"] = s.gradient_evaluations;
  if (s.density_evaluations > 0) {  // the auxiliary-variable samplers
    v["density_evaluations"] = s.density_evaluations;
    v["slice_capped"] = s.slice_capped;
    if (s.auxiliary_updates > 0) {
      v["auxiliary_updates"] = s.auxiliary_updates;
      v["auxiliary_accepted"] = s.auxiliary_accepted;
    }
  }
  return v;
}

double lockstep_efficiency(const IterationStats& s) {
  return s.lockstep_gradient_evaluations > 0
             ? double(s.gradient_evaluations) / double(s.lockstep_gradient_evaluations)
             : 1.0;
}

DiagnosticExtremes diagnostic_extremes(const SampleResult& result) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  DiagnosticExtremes worst{nan, nan, nan, nan};
  // std::fmax/fmin return the other argument when one is NaN.
  for (const auto& row : result.summary) {
    worst.max_rhat = std::fmax(worst.max_rhat, row.rhat);
    worst.min_ess_bulk = std::fmin(worst.min_ess_bulk, row.ess_bulk);
    worst.min_ess_tail = std::fmin(worst.min_ess_tail, row.ess_tail);
  }
  for (double v : result.nested_rhat) worst.max_nested_rhat = std::fmax(worst.max_nested_rhat, v);
  return worst;
}

Json sample_report(const RunDescription& run, const SampleConfig& config,
                   const SampleResult& result) {
  Json report = report_header(run.sampler, run);

  Json settings = Json::object();
  // Only the settings the sampler used (ABC's own are under "abc").
  const bool adaptive_length = run.sampler == "chees" || run.sampler == "snaper";
  const bool nuts = run.sampler == "nuts";
  const bool hmc = run.sampler == "hmc" || adaptive_length || nuts;
  const bool adapted = hmc || run.sampler == "chmc";
  settings["chains"] = config.chains;
  if (run.sampler != "abc-reject") settings["warmup"] = config.warmup;
  settings["draws"] = config.draws;
  if (run.sampler != "abc-reject") settings["thin"] = config.thin;
  settings["seed"] = static_cast<std::int64_t>(config.seed);
  settings["device"] = run.requested_device;
  settings["precision"] = run.precision;
  if (adapted) {
    settings["target_accept"] = config.target_accept;
    settings["initial_step_size"] = config.initial_step_size;  // 0: found automatically
    settings["restart_stranded"] = config.restart_stranded;
  }
  if (adaptive_length) {
    settings["max_leapfrog_steps"] = config.max_leapfrog_steps;
  } else if (nuts) {
    settings["max_tree_depth"] = config.max_tree_depth;
  } else if (hmc) {
    settings["leapfrog_steps"] = config.leapfrog_steps;
    settings["jitter"] = config.jitter;
  }
  if (hmc) {
    settings["metric"] = to_string(config.metric);
    settings["initial_points"] = config.initial_positions.empty() ? "drawn" : "given (--init)";
  }
  settings["superchains"] = result.superchains;
  report["settings"] = settings;

  report["device"] = result.device;
  report["wall_time"] = {{"warmup_seconds", result.warmup_seconds},
                         {"sampling_seconds", result.sampling_seconds},
                         {"diagnostics_seconds", result.summary_seconds},
                         {"total_seconds", run.total_seconds}};

  const std::int64_t evaluations =
      result.warmup_stats.gradient_evaluations + result.sampling_stats.gradient_evaluations;
  report["gradient_evaluations"] = evaluations;
  report["gradient_evaluations_per_second"] = result.gradient_evaluations_per_second();
  report["step_size"] = result.step_size;
  if (hmc) report["metric"] = to_string(result.metric);  // settings.metric may say "auto"
  report["inverse_metric"] = result.inverse_metric;
  report["acceptance"] = result.sampling_stats.mean_accept_prob();
  // What ChEES, SNAPER and NUTS steer their step size by (fixed-length HMC: the arithmetic mean).
  if (hmc) report["acceptance_harmonic"] = result.sampling_stats.harmonic_accept_prob();
  report["divergences"] = result.sampling_stats.divergent;
  Json failures = {{"divergent", result.sampling_stats.divergent},
                   {"non_finite", result.sampling_stats.non_finite},
                   {"warmup_divergent", result.warmup_stats.divergent},
                   {"warmup_non_finite", result.warmup_stats.non_finite}};
  report["failures"] = failures;
  if (run.sampler == "chmc") {
    failures["not_converged"] = result.sampling_stats.not_converged;
    failures["not_reversible"] = result.sampling_stats.not_reversible;
    failures["cholesky_failures"] = result.sampling_stats.cholesky_failures;
    failures["warmup_not_converged"] = result.warmup_stats.not_converged;
    failures["warmup_not_reversible"] = result.warmup_stats.not_reversible;
    failures["warmup_cholesky_failures"] = result.warmup_stats.cholesky_failures;
    report["failures"] = failures;
    report["newton_iterations"] =
        result.warmup_stats.newton_iterations + result.sampling_stats.newton_iterations;
  }
  for (const auto& [key, value] : run.extra.items()) report[key] = value;
  report["warmup"] = stats_json(result.warmup_stats);
  if (run.sampler == "chmc") {
    report["warmup"]["backed_off_chains"] = result.warmup_backed_off_chains;
    report["warmup"]["max_step_halvings"] = result.warmup_max_step_halvings;
  }
  if (result.sampling_stuck_chains >= 0) {  // HMC, constrained HMC: mcmc/chain_restarts.hpp
    report["warmup"]["restarts"] = result.warmup_restarts;
    report["warmup"]["restarted_chains"] = result.warmup_restarted_chains;
    report["warmup"]["stuck_checks"] = result.warmup_stuck_checks;
  }
  if (adaptive_length) {
    // mcmc/trajectory_length_adaptation.hpp: the adapted length, the sampling phase's step count
    // (each iteration takes a quasi-random fraction of it) and the adaptation's trace.
    Json trajectory = Json::object();
    trajectory["criterion"] = run.sampler;
    trajectory["length"] = result.trajectory_length;
    trajectory["max_leapfrog_steps"] = result.leapfrog_steps;
    trajectory["mean_leapfrog_steps"] = result.sampling_stats.transitions > 0
                                            ? double(result.sampling_stats.gradient_evaluations) /
                                                  double(result.sampling_stats.transitions)
                                            : 0.0;
    if (run.sampler == "snaper") trajectory["principal_variance"] = result.principal_variance;
    trajectory["length_trace"] = result.trajectory_length_trace;
    trajectory["criterion_trace"] = result.criterion_trace;
    report["warmup"]["trajectory"] = trajectory;
  }
  report["sampling"] = stats_json(result.sampling_stats);
  if (nuts) {
    // mcmc/nuts.hpp: tree depths of each phase; the lockstep count of the sampling phase (the
    // warm-up's also holds the step-size search's one-step HMC probes, which it does not count).
    const auto tree_json = [&](const IterationStats& s) {
      Json tree = Json::object();
      tree["max_tree_depth"] = result.max_tree_depth;
      tree["mean_depth"] = s.mean_tree_depth();
      tree["max_depth"] = s.tree_depth_max;
      tree["depth_cap_hits"] = s.tree_depth_capped;
      tree["mean_leapfrog_steps"] =
          s.transitions > 0 ? double(s.gradient_evaluations) / double(s.transitions) : 0.0;
      return tree;
    };
    report["warmup"]["tree"] = tree_json(result.warmup_stats);
    Json tree = tree_json(result.sampling_stats);
    tree["lockstep_gradient_evaluations"] = result.sampling_stats.lockstep_gradient_evaluations;
    tree["lockstep_efficiency"] = lockstep_efficiency(result.sampling_stats);
    report["sampling"]["tree"] = tree;
  }
  if (result.sampling_stuck_chains >= 0)
    report["sampling"]["stuck_chains"] = result.sampling_stuck_chains;

  Json diagnostics = Json::object();
  const DiagnosticExtremes worst = diagnostic_extremes(result);
  diagnostics["max_rhat"] = worst.max_rhat;  // NaN (no finite value) is written as null
  diagnostics["max_nested_rhat"] = worst.max_nested_rhat;
  diagnostics["min_ess_bulk"] = worst.min_ess_bulk;
  diagnostics["min_ess_tail"] = worst.min_ess_tail;
  Json nested = Json::object();
  for (std::size_t q = 0; q < result.nested_rhat.size() && q < result.names.size(); ++q)
    nested[result.names[q]] = result.nested_rhat[q];
  diagnostics["nested_rhat"] = nested;
  // All chains, unless one quantity of the whole trace would not fit in the memory limit
  // (run/host_memory.hpp): then the first chains that do.
  diagnostics["chains"] = result.diagnosed_chains;
  report["diagnostics"] = diagnostics;
  if (config.checkpoint.enabled()) {
    // wall_time's warm-up and sampling seconds add up every process's share of the run;
    // total_seconds is the last process's.
    Json checkpoint = Json::object();
    checkpoint["every"] = config.checkpoint.every;
    checkpoint["written"] = result.checkpoints_written;
    checkpoint["resumed_at_iteration"] =
        result.resumed_at_iteration >= 0 ? Json(result.resumed_at_iteration) : Json(nullptr);
    report["checkpoint"] = checkpoint;
  }
  if (config.memory_limit > 0) report["settings"]["memory_limit_bytes"] = config.memory_limit;

  if (!run.exact.empty()) {
    Json exact = Json::object();
    for (const auto& m : run.exact) {
      Json entry = Json::object();
      entry["mean"] = m.mean;
      entry["sd"] = m.sd;
      exact[m.name] = entry;
    }
    report["exact"] = exact;
  }
  return report;
}

}  // namespace myriad::cli
