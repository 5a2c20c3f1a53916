// Simulation-based calibration's bookkeeping (run/sbc.hpp): ranks of the true values among L
// posterior draws spread over each run, and the uniformity tests once every replication is in.

#include "myriad/run/sbc.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "myriad/core/random.hpp"

namespace myriad {

void add_sbc_replication(SbcResult& result, const SbcConfig& config, std::int64_t replication,
                         const SbcReplication& outcome) {
  const SampleResult& run = outcome.run;
  const auto quantities = static_cast<std::int64_t>(run.names.size());
  if (result.names.empty()) {
    result.names = run.names;
    result.posterior_draws = config.posterior_draws;
    result.replications = config.replications;
    result.ranks.assign(static_cast<std::size_t>(config.replications * quantities), 0);
  }
  MYRIAD_EXPECTS(run.names == result.names, "sbc: replication ", replication,
                 " recorded other quantities than the first");
  MYRIAD_EXPECTS(static_cast<std::int64_t>(outcome.truth.size()) == quantities, "sbc: replication ",
                 replication, " has ", outcome.truth.size(), " true values for ", quantities,
                 " quantities");
  const std::int64_t pooled = run.chains * run.kept_draws;
  MYRIAD_EXPECTS(static_cast<std::int64_t>(run.draws_data.size()) == pooled * quantities,
                 "sbc: replication ", replication, " kept no draws to rank against");
  MYRIAD_EXPECTS(pooled >= config.posterior_draws, "sbc: replication ", replication, " has ",
                 pooled, " draws, fewer than posterior_draws = ", config.posterior_draws);
  // L draws evenly spread over the pooled [chain][draw] sequence: draw ⌊(k + ½) n / L⌋.
  const int L = config.posterior_draws;
  std::vector<double> thinned(static_cast<std::size_t>(L));
  const RandomStream ties(config.seed, static_cast<std::uint64_t>(replication));
  for (std::int64_t q = 0; q < quantities; ++q) {
    for (int k = 0; k < L; ++k) {
      const auto i = static_cast<std::int64_t>((k + 0.5) * static_cast<double>(pooled) / L);
      thinned[k] = run.draws_data[static_cast<std::size_t>(i * quantities + q)];
    }
    const double u = ties.uniform<double>(0, Purpose::sbc_tie, static_cast<std::uint32_t>(q));
    result.ranks[static_cast<std::size_t>(replication * quantities + q)] =
        diag::sbc_rank(thinned.data(), L, 1, outcome.truth[q], u);
  }
  double min_ess = std::numeric_limits<double>::infinity(), max_rhat = 0;
  for (const auto& row : run.summary) {
    min_ess = std::min(min_ess, row.ess_bulk);
    max_rhat = std::max(max_rhat, row.rhat);
  }
  result.min_ess_bulk.push_back(min_ess);
  result.max_rhat.push_back(max_rhat);
  if (min_ess < L) ++result.replications_below_ess;
  result.divergences += run.sampling_stats.divergent;
  result.gradient_evaluations +=
      run.warmup_stats.gradient_evaluations + run.sampling_stats.gradient_evaluations;
  result.seconds += run.warmup_seconds + run.sampling_seconds + run.summary_seconds;
}

SampleResult sbc_block(const SampleResult& batch, std::int64_t replication,
                       const std::vector<std::string>& names) {
  const auto q = static_cast<std::int64_t>(names.size());
  const auto stacked = static_cast<std::int64_t>(batch.names.size());
  MYRIAD_EXPECTS(q > 0 && (replication + 1) * q <= stacked, "sbc: replication ", replication,
                 " is not in the batch's ", stacked, " quantities");
  SampleResult block;
  block.names = names;
  block.chains = batch.chains;
  block.draws = batch.draws;
  block.kept_draws = batch.kept_draws;
  const std::int64_t pooled = batch.chains * batch.kept_draws;
  MYRIAD_EXPECTS(static_cast<std::int64_t>(batch.draws_data.size()) == pooled * stacked,
                 "sbc: the batched run kept no draws to rank against");
  block.draws_data.resize(static_cast<std::size_t>(pooled * q));
  for (std::int64_t i = 0; i < pooled; ++i)
    for (std::int64_t k = 0; k < q; ++k)
      block.draws_data[static_cast<std::size_t>(i * q + k)] =
          batch.draws_data[static_cast<std::size_t>(i * stacked + replication * q + k)];
  if (static_cast<std::int64_t>(batch.summary.size()) == stacked)
    block.summary.assign(batch.summary.begin() + replication * q,
                         batch.summary.begin() + (replication + 1) * q);
  return block;
}

void add_sbc_batch(SbcResult& result, const SampleResult& batch) {
  result.divergences += batch.sampling_stats.divergent;
  // A gradient of the stacked model is one of every replication's model: counted as R, in the
  // units of a run per replication.
  result.gradient_evaluations +=
      (batch.warmup_stats.gradient_evaluations + batch.sampling_stats.gradient_evaluations) *
      result.replications;
  result.seconds += batch.warmup_seconds + batch.sampling_seconds + batch.summary_seconds;
}

void finish_sbc(SbcResult& result, const SbcConfig& config) {
  const auto quantities = static_cast<std::int64_t>(result.names.size());
  result.quantities.clear();
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(result.replications));
  for (std::int64_t q = 0; q < quantities; ++q) {
    for (std::int64_t r = 0; r < result.replications; ++r)
      ranks[r] = result.ranks[static_cast<std::size_t>(r * quantities + q)];
    SbcQuantity quantity;
    quantity.name = result.names[q];
    quantity.histogram = diag::rank_histogram(ranks, config.posterior_draws, config.bins);
    // γ depends on N, L and the points only: the same simulation (seed) for every quantity, so
    // that all are held to the same bands.
    quantity.bands = diag::ecdf_difference_bands(
        ranks, config.posterior_draws, config.alpha,
        static_cast<int>(std::min<std::int64_t>(config.posterior_draws + 1, result.replications)),
        config.seed);
    result.quantities.push_back(std::move(quantity));
  }
}

}  // namespace myriad
