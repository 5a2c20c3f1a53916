#include "mpis_report.hpp"

#include <cmath>
#include <limits>

#include "exact_posterior_check.hpp"
#include "run_report.hpp"

namespace myriad::cli {

Json mpis_report(const MpisRunDescription& run, const MpisConfig& config,
                 const MpisResult& result) {
  Json report = report_header(result.method, run);

  Json settings = Json::object();
  settings["k"] = config.k;
  settings["runs"] = config.runs;
  settings["samples"] = config.samples;
  settings["seed"] = static_cast<std::int64_t>(config.seed);
  settings["device"] = run.requested_device;
  settings["moments"] = config.moments;
  settings["contraction"] = to_string(config.contraction);
  settings["runs_per_batch"] = result.runs_per_batch;
  if (!result.chunk_plate.empty()) {
    settings["chunk_plate"] = result.chunk_plate;
    settings["chunk_size"] = result.chunk_size;
  }
  // The budget in effect (null when unbounded: no limit given and the free memory unknown).
  settings["memory_budget_bytes"] = result.memory_budget;
  report["settings"] = settings;
  report["device"] = result.device;

  Json time = Json::object();
  time["estimate_seconds"] = result.seconds_estimate;
  time["moments_seconds"] = result.seconds_moments;
  time["sampling_seconds"] = result.seconds_sampling;
  time["total_seconds"] = run.total_seconds;
  report["wall_time"] = time;
  report["seconds_per_run"] = result.seconds_estimate / result.runs;

  Json log_marginal = Json::object();
  log_marginal["mean"] = result.log_marginal_mean;
  log_marginal["se"] = result.log_marginal_se;
  Json per_run = Json::array();
  for (double v : result.log_marginal) per_run.push_back(v);
  log_marginal["per_run"] = per_run;
  report["log_marginal"] = log_marginal;
  if (!std::isnan(result.exact_log_marginal))
    report["log_marginal_exact"] = result.exact_log_marginal;

  Json plan = Json::object();
  plan["index_variables"] = result.index_variables;
  plan["max_clique"] = result.max_clique;
  plan["forward_terms_per_run"] = result.forward_terms;
  Json operations = Json::array();
  for (const auto& line : result.operations) operations.push_back(line);
  plan["operations"] = operations;
  report["plan"] = plan;
  Json memory = Json::object();
  memory["estimated_bytes_per_batch"] = result.estimated_bytes;
  memory["peak_bytes"] = result.peak_bytes;
  report["memory"] = memory;

  Json failures = Json::object();
  failures["failed_runs"] = result.failed_runs;
  failures["nonfinite_entries"] = result.nonfinite_entries;
  report["failures"] = failures;

  // Against the exact posterior (conjugate models).
  const Json check = exact_posterior_check(result.exact, result.names, result.summary);
  if (!check.is_null()) report["exact_posterior_check"] = check;
  return report;
}

std::vector<diag::VariableSummary> mpis_summary_rows(const MpisResult& result) {
  std::vector<diag::VariableSummary> rows;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t q = 0; q < result.summary.size(); ++q) {
    const WeightedMoments& m = result.summary[q];
    rows.push_back(
        {result.names[q], m.mean, m.sd, m.mcse_mean, m.q5, m.q50, m.q95, nan, m.ess, m.ess});
  }
  return rows;
}

}  // namespace myriad::cli
