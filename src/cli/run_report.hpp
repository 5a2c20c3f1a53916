#pragma once
// run.json: settings, device, timings, throughput, adaptation, failure counts and diagnostics
// of a run (DESIGN.md, "Outputs").

#include <string>
#include <utility>
#include <vector>

#include "json.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/run/sample_config.hpp"
#include "run_identity.hpp"

namespace myriad::cli {

struct RunDescription : RunIdentity {
  std::string precision;
  std::vector<ExactMoment> exact;
  std::string sampler = "hmc";
  Json extra = Json::object();  ///< sampler-specific members of run.json
  double total_seconds = 0;
};

/// NUTS: gradient evaluations / what a GPU's warps pay for them (IterationStats::
/// lockstep_gradient_evaluations); 1 when nothing was counted.
double lockstep_efficiency(const IterationStats& s);

/// The worst convergence diagnostics over all quantities (NaN values skipped; NaN if none).
struct DiagnosticExtremes {
  double max_rhat;
  double max_nested_rhat;
  double min_ess_bulk;
  double min_ess_tail;
};
DiagnosticExtremes diagnostic_extremes(const SampleResult& result);

/// Transition counts of one phase: transitions, mean acceptance probability, acceptance rate,
/// divergent, non-finite, gradient evaluations (run.json of every method).
Json stats_json(const IterationStats& stats);

/// The run.json document for a sampling run.
Json sample_report(const RunDescription& run, const SampleConfig& config,
                   const SampleResult& result);

}  // namespace myriad::cli
