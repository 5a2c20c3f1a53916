#pragma once
// run.json and summary.csv rows of an annealed-importance-sampling run (`myriad ais`).

#include <string>
#include <utility>
#include <vector>

#include "json.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/run/ais_config.hpp"
#include "run_identity.hpp"

namespace myriad::cli {

struct AisRunDescription : RunIdentity {
  std::string precision;
  std::string schedule;
  double schedule_parameter = 0;
  double total_seconds = 0;
};

/// The run.json document: settings, device, timings, throughput, log Z with its standard errors
/// and weight ESS (top level: the problem's for one problem, the test-set average for several),
/// log_z_exact when known, the BDMC upper bound when run, and per-problem entries.
Json ais_report(const AisRunDescription& run, const AisConfig& config, const AisResult& result);

/// summary.csv rows of the weighted posterior sample: one per coordinate, suffixed "@p" with the
/// problem index when there are several. R-hat does not apply (NaN); both ESS columns hold the
/// Kish ESS of the weights.
std::vector<diag::VariableSummary> ais_summary_rows(const AisResult& result);

}  // namespace myriad::cli
