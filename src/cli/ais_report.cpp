#include "ais_report.hpp"

#include <cmath>
#include <limits>

#include "base_options.hpp"
#include "exact_posterior_check.hpp"
#include "run_report.hpp"

namespace myriad::cli {

namespace {

Json pass_json(const AisPass& pass) {
  Json v = stats_json(pass.stats);
  v["seconds"] = pass.seconds;
  v["failed_starts"] = pass.failed_starts;
  return v;
}

/// Mean of the exact values, NaN if any is unknown (or none is given).
double mean_exact(const std::vector<double>& exact) {
  if (exact.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : exact) sum += v;
  return sum / static_cast<double>(exact.size());
}
}  // namespace

Json ais_report(const AisRunDescription& run, const AisConfig& config, const AisResult& result) {
  const char* method = config.transition == AisTransition::metropolis ? "ais-metropolis"
                       : result.refresh < 1.0                         ? "hais"
                                                                      : "ais-hmc";
  Json report = report_header(method, run);

  Json settings = Json::object();
  settings["particles"] = config.particles;
  settings["temperatures"] = result.temperatures;
  settings["schedule"] = run.schedule;
  settings["schedule_parameter"] = run.schedule_parameter;
  settings["transition"] = to_string(config.transition);
  settings["leapfrog_steps"] = config.steps;
  settings["step_size"] = config.step_size;
  settings["persistence"] = result.refresh;  // γ of the partial refresh
  settings["proposal_scale"] = config.proposal_scale;
  settings["reverse"] = config.reverse;
  settings["bootstrap_replicates"] = config.bootstrap_replicates;
  settings["seed"] = static_cast<std::int64_t>(config.seed);
  settings["device"] = run.requested_device;
  settings["particle_mapping"] = to_string(config.particle_mapping);
  settings["precision"] = run.precision;
  report["settings"] = settings;

  report["device"] = result.device;
  Json time = Json::object();
  time["forward_seconds"] = result.forward.seconds;
  time["reverse_seconds"] = result.has_reverse ? result.reverse.seconds : 0.0;
  time["summary_seconds"] = result.summary_seconds;
  time["total_seconds"] = run.total_seconds;
  report["wall_time"] = time;
  report["particle_temperatures_per_second"] = result.particle_temperatures_per_second();
  report["gradient_evaluations"] =
      result.forward.stats.gradient_evaluations +
      (result.has_reverse ? result.reverse.stats.gradient_evaluations : 0);
  report["dim"] = result.dim;
  report["problems"] = result.problems;
  report["log_z_base"] = result.log_z_base;
  report["base"] =
      base_json(result.fitted_base ? result.fitted_base->spec() : config.base, result.fitted_base);

  // Top level: one problem's estimate, or the average over problems (hais.md §3, §6).
  if (result.problems == 1) {
    const LogZEstimate& e = result.forward.estimates[0];
    report["log_z"] = e.log_z;
    report["log_z_se"] = e.se_delta;
    report["log_z_se_bootstrap"] = e.se_bootstrap;
    report["ess"] = e.ess;
  } else {
    report["log_z"] = result.average.mean;
    report["log_z_se"] = result.average.mc_error;
    report["log_z_data_error"] = result.average.data_error;
  }
  const double exact = mean_exact(result.exact_log_z);
  if (!std::isnan(exact)) report["log_z_exact"] = exact;
  // The weighted posterior against the exact one (one problem; summary[i] is names[i]).
  if (result.problems == 1) {
    const Json check = exact_posterior_check(result.exact, result.names, result.summary);
    if (!check.is_null()) report["exact_posterior_check"] = check;
  }
  if (result.has_reverse) {
    double upper = 0, upper_se_sq = 0;
    for (const auto& e : result.reverse.estimates) {
      upper += e.log_z / result.problems;
      upper_se_sq += e.se_delta * e.se_delta;
    }
    report["log_z_upper"] = upper;
    report["log_z_upper_se"] = std::sqrt(upper_se_sq) / result.problems;
  }

  Json problems = Json::array();
  for (int p = 0; p < result.problems; ++p) {
    const LogZEstimate& e = result.forward.estimates[p];
    Json entry = Json::object();
    entry["log_z"] = e.log_z;
    entry["log_z_se"] = e.se_delta;
    entry["log_z_se_bootstrap"] = e.se_bootstrap;
    entry["ess"] = e.ess;
    if (!result.exact_log_z.empty() && !std::isnan(result.exact_log_z[p]))
      entry["log_z_exact"] = result.exact_log_z[p];
    if (result.has_reverse) {
      entry["log_z_upper"] = result.reverse.estimates[p].log_z;
      entry["log_z_upper_se"] = result.reverse.estimates[p].se_delta;
      entry["ess_upper"] = result.reverse.estimates[p].ess;
    }
    problems.push_back(entry);
  }
  report["per_problem"] = problems;

  report["forward"] = pass_json(result.forward);
  if (result.has_reverse) report["reverse"] = pass_json(result.reverse);
  Json failures = Json::object();
  failures["failed_starts"] = result.forward.failed_starts;
  failures["divergent"] = result.forward.stats.divergent;
  failures["non_finite"] = result.forward.stats.non_finite;
  if (result.has_reverse) {
    failures["reverse_failed_starts"] = result.reverse.failed_starts;
    failures["reverse_divergent"] = result.reverse.stats.divergent;
    failures["reverse_non_finite"] = result.reverse.stats.non_finite;
  }
  report["failures"] = failures;
  // null with one temperature (plain importance sampling: no transitions to accept).
  report["acceptance"] = result.forward.stats.transitions > 0
                             ? Json(result.forward.stats.mean_accept_prob())
                             : Json(nullptr);
  return report;
}

std::vector<diag::VariableSummary> ais_summary_rows(const AisResult& result) {
  std::vector<diag::VariableSummary> rows;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t k = 0; k < result.summary.size(); ++k) {
    const int p = static_cast<int>(k / result.dim), i = static_cast<int>(k % result.dim);
    const WeightedMoments& m = result.summary[k];
    std::string name = result.names[i];
    if (result.problems > 1) name += "@" + std::to_string(p);
    rows.push_back({name, m.mean, m.sd, m.mcse_mean, m.q5, m.q50, m.q95, nan, m.ess, m.ess});
  }
  return rows;
}

}  // namespace myriad::cli
