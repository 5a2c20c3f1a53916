#include "myriad/diag/summary.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "myriad/core/error.hpp"
#include "myriad/diag/ess.hpp"
#include "myriad/diag/rhat.hpp"

namespace myriad::diag {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Summary from a RankedDraws that already holds the quantity: every statistic reads its
// contiguous copies, so the strided input is read once.
VariableSummary summarize_ranked(const RankedDraws& ranked, std::string name) {
  VariableSummary s{std::move(name), kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  const std::vector<double>& values = ranked.values();
  const double count = static_cast<double>(values.size());
  if (!values.empty()) {
    double sum = 0.0;
    for (double x : values) sum += x;
    s.mean = sum / count;
    if (values.size() > 1) {
      double squares = 0.0;
      for (double x : values) squares += (x - s.mean) * (x - s.mean);
      s.sd = std::sqrt(squares / (count - 1.0));
    }
  }
  if (ranked.sorted_valid()) {
    s.q5 = ranked.quantile(0.05);
    s.q50 = ranked.quantile(0.5);
    s.q95 = ranked.quantile(0.95);
  }
  if (!ranked.valid()) return s;

  const double rhat_bulk = potential_scale_reduction(ranked.bulk());
  const double rhat_tail = potential_scale_reduction(ranked.folded());
  s.rhat = std::isnan(rhat_bulk) || std::isnan(rhat_tail) ? kNaN : std::max(rhat_bulk, rhat_tail);
  s.ess_bulk = effective_sample_size(ranked.bulk());
  // trimmed() splits into the same half chains as the input: ess_basic and ess_below on it
  // equal those on the original view.
  const double lower = ess_below(ranked.trimmed(), s.q5);
  const double upper = ess_below(ranked.trimmed(), s.q95);
  s.ess_tail = std::isnan(lower) || std::isnan(upper) ? kNaN : std::min(lower, upper);
  s.mcse_mean = s.sd / std::sqrt(ess_basic(ranked.trimmed()));
  return s;
}

}  // namespace

VariableSummary summarize(DrawsView draws, std::string name) {
  const RankedDraws ranked(draws);
  return summarize_ranked(ranked, std::move(name));
}

std::vector<VariableSummary> summarize_all(const double* draws, int64_t chains, int64_t num_draws,
                                           int64_t num_quantities,
                                           const std::vector<std::string>& names) {
  MYRIAD_EXPECTS(chains >= 0 && num_draws >= 0 && num_quantities >= 0,
                 "shape must be non-negative, got chains = ", chains, ", num_draws = ", num_draws,
                 ", num_quantities = ", num_quantities);
  MYRIAD_EXPECTS(names.empty() || static_cast<int64_t>(names.size()) == num_quantities,
                 "names has ", names.size(), " entries for ", num_quantities, " quantities");
  std::vector<VariableSummary> summaries(static_cast<size_t>(num_quantities));
  // An exception must not leave an OpenMP region: keep the first and rethrow it afterwards.
  std::exception_ptr failure;
#pragma omp parallel
  {
    RankedDraws ranked;  // per-thread workspace, reused across quantities
#pragma omp for schedule(dynamic)
    for (int64_t q = 0; q < num_quantities; ++q) {
      try {
        ranked.assign(quantity_view(draws, chains, num_draws, num_quantities, q));
        std::string name = names.empty() ? "q" + std::to_string(q) : names[q];
        summaries[q] = summarize_ranked(ranked, std::move(name));
      } catch (...) {
#pragma omp critical(myriad_diag_summary_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  return summaries;
}

}  // namespace myriad::diag
