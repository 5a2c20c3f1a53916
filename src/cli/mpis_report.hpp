#pragma once
// run.json and summary.csv rows of a massively-parallel-importance-sampling run (`myriad mpis`).

#include <string>
#include <utility>
#include <vector>

#include "json.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/run/mpis_config.hpp"
#include "run_identity.hpp"

namespace myriad::cli {

struct MpisRunDescription : RunIdentity {
  double total_seconds = 0;
};

/// The run.json document: settings, device, timings, log_marginal {mean, se, per_run} and
/// log_marginal_exact when known, the contraction plan (index variables, largest clique,
/// operations), memory (plan estimate and measured peak), failures, and the largest error of
/// the posterior means against the exact posterior when the model knows it.
Json mpis_report(const MpisRunDescription& run, const MpisConfig& config, const MpisResult& result);

/// summary.csv rows: one per quantity (MpisResult::summary). R-hat does not apply (NaN); both
/// ESS columns hold the Kish ESS of the marginal weights summed over runs.
std::vector<diag::VariableSummary> mpis_summary_rows(const MpisResult& result);

}  // namespace myriad::cli
