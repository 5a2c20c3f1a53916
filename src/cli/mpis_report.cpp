#include "mpis_report.hpp"

#include <cmath>
#include <limits>

#include "exact_posterior_check.hpp"
#include "run_report.hpp"

namespace myriad::cli {

Json mpis_report(const MpisRunDescription& run, const MpisConfig& config,
                 const MpisResult& result) {
  Json report = report_header(result.method, run);

  Json settings = {{"k", config.k},
                   {"runs", config.runs},
                   {"samples", config.samples},
                   {"seed", static_cast<std::int64_t>(config.seed)},
                   {"device", run.requested_device},
                   {"moments", config.moments},
                   {"contraction", to_string(config.contraction)},
                   {"runs_per_batch", result.runs_per_batch}};
  if (!result.chunk_plate.empty()) {
    settings["chunk_plate"] = result.chunk_plate;
    settings["chunk_size"] = result.chunk_size;
  }
  // The budget in effect (null when unbounded: no limit given and the free memory unknown).
  settings["memory_budget_bytes"] = result.memory_budget;
  report["settings"] = settings;
  report["device"] = result.device;

  report["wall_time"] = {{"estimate_seconds", result.seconds_estimate},
                         {"moments_seconds", result.seconds_moments},
                         {"sampling_seconds", result.seconds_sampling},
                         {"total_seconds", run.total_seconds}};
  report["seconds_per_run"] = result.seconds_estimate / result.runs;

  report["log_marginal"] = {{"mean", result.log_marginal_mean},
                            {"se", result.log_marginal_se},
                            {"per_run", result.log_marginal}};
  if (!std::isnan(result.exact_log_marginal))
    report["log_marginal_exact"] = result.exact_log_marginal;

  report["plan"] = {{"index_variables", result.index_variables},
                    {"max_clique", result.max_clique},
                    {"forward_terms_per_run", result.forward_terms},
                    {"operations", result.operations}};
  report["memory"] = {{"estimated_bytes_per_batch", result.estimated_bytes},
                      {"peak_bytes", result.peak_bytes}};
  report["failures"] = {{"failed_runs", result.failed_runs},
                        {"nonfinite_entries", result.nonfinite_entries}};

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
