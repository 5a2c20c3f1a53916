#pragma once

#include <string>

namespace myriad::diag {

/// Posterior summary of one recorded quantity: moments, quantiles and convergence diagnostics
/// (split R-hat, bulk and tail ESS). One row of summary.csv.
struct VariableSummary {
  std::string name;
  double mean, sd, mcse_mean, q5, q50, q95, rhat, ess_bulk, ess_tail;
};

}  // namespace myriad::diag
