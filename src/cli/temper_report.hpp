#pragma once
// run.json and summary.csv rows of a tempering run (`myriad temper`), with the fields `myriad
// ais` writes for the same quantities (log_z, log_z_se, log_z_exact, exact_posterior_check,
// failures, acceptance), so the two compare side by side.

#include <string>
#include <utility>
#include <vector>

#include "json.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/run/temper_config.hpp"
#include "run_identity.hpp"

namespace myriad::cli {

struct TemperRunDescription : RunIdentity {
  std::string schedule;  ///< simulated tempering's: linear, geometric, sigmoid or user; else empty
  double schedule_parameter = 0;  ///< its parameter in effect (NaN: none)
  double total_seconds = 0;
};

/// The run.json document: settings, device, timings, throughput, log Z with its standard error,
/// log_z_exact when known, the target's weighted moments against the exact ones, the base check,
/// R-hat of β and the counters.
Json temper_report(const TemperRunDescription& run, const TemperConfig& config,
                   const TemperResult& result);

/// summary.csv rows of the target's w₁-weighted moments: mean, sd, the mean's standard error
/// over chains; quantiles and R-hat do not apply (NaN); both ESS columns hold (sd / se)², the
/// number of independent draws that standard error stands for.
std::vector<diag::VariableSummary> temper_summary_rows(const TemperResult& result);

}  // namespace myriad::cli
