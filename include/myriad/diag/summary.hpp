#pragma once
// Per-quantity posterior summary with convergence diagnostics, the table Stan, posterior and
// ArviZ print: mean, sd, MCSE of the mean, 5/50/95% quantiles, rank-normalised R̂, bulk and
// tail ESS.

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/diag/draws_view.hpp"

namespace myriad::diag {

/// Summary of one scalar quantity over all chains and draws.
struct VariableSummary {
  std::string name;
  double mean;       ///< mean of all draws pooled
  double sd;         ///< standard deviation of all draws pooled, divisor S − 1
  double mcse_mean;  ///< sd / sqrt(ess_basic), see ess.hpp
  double q5;         ///< type-7 quantiles of all draws pooled (numpy's default)
  double q50;
  double q95;
  double rhat;      ///< rank-normalised split R̂, see rhat.hpp
  double ess_bulk;  ///< see ess.hpp
  double ess_tail;  ///< see ess.hpp
};

/// Summary of one quantity: the same numbers as mean, rhat(), ess_bulk(), ess_tail() and
/// mcse_mean() computed separately, but with one copy and one sort of the draws. Non-finite
/// draws make every field NaN except mean and sd, which follow IEEE arithmetic; fewer than 4
/// draws per chain make the diagnostics NaN.
VariableSummary summarize(DrawsView draws, std::string name);

/// Summaries of all quantities of a C-order array [chain][draw][quantity], in parallel over
/// quantities (OpenMP, one reusable workspace per thread). `names` has one entry per quantity,
/// or is empty, in which case the names are "q0", "q1", …; throws myriad::invalid_argument
/// for any other length or a negative shape.
std::vector<VariableSummary> summarize_all(const double* draws, int64_t chains, int64_t num_draws,
                                           int64_t num_quantities,
                                           const std::vector<std::string>& names);

}  // namespace myriad::diag
