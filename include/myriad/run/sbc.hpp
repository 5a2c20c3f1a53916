#pragma once
// myriad::run_sbc — simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman
// 2018, "Validating Bayesian inference algorithms with simulation-based calibration"): for
// replications r = 1 … R, draw parameters θ̃_r from the prior and data ỹ_r from the model given
// them, run the sampler on the posterior given ỹ_r, and record for every recorded quantity the
// rank of its true value among L posterior draws. If the sampler draws from the posterior, each
// rank is uniform on {0, …, L} (Talts et al., Theorem 1): the rank histograms are flat and the
// ECDF of the fractional ranks stays inside its simultaneous bands (Säilynoja, Bürkner & Vehtari
// 2022); diag/sbc.hpp computes both tests.
//
// The model states how to simulate its data: `replicate(r, config)` draws θ̃_r and ỹ_r from
// streams keyed by r (so replications are independent and reproducible), runs the sampler with
// `config` and returns the true values of the recorded quantities with the run. The L draws are
// spread evenly over the run's pooled draws (chains × kept draws, chain-major): ranks among
// dependent draws are still uniform in expectation, but the tests' independence assumption wants
// L no larger than the effective sample size, which SbcResult::replications_below_ess counts.
//
// Two ways to run the replications:
// - run_sbc_batched: all of them as one batch of chains (model/stacked.hpp): every chain samples
//   the product of the R posteriors, one block of coordinates each, so one launch advances every
//   replication; the metric adapts per coordinate (per replication), the step size and the
//   trajectory length are shared. `myriad sbc --batch on`, the density models' default on a GPU.
// - run_sbc: each replication an ensemble of config.chains chains with its own adaptation, one
//   after another on a GPU and several at once on the CPU's threads: `--batch off` (the default
//   on the CPU, where chains in SIMD lanes measured faster), and always for constrained HMC
//   (stacking R constraint sets makes one Gram matrix of R·M rows).

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/diag/sbc.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/stacked.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

struct SbcConfig {
  std::int64_t replications = 100;  ///< R
  int posterior_draws = 99;         ///< L: each rank is among L draws, so it lies in 0 … L
  int bins = 20;                    ///< rank histogram bins; must divide L + 1
  double alpha = 0.05;              ///< 1 − α simultaneous ECDF bands
  std::uint64_t seed = 1;           ///< of the prior draws, the simulated data and tie-breaks

  /// Throws myriad::invalid_argument naming the first bad setting.
  void validate() const {
    MYRIAD_EXPECTS(replications >= 2, "sbc: replications must be >= 2, got ", replications);
    MYRIAD_EXPECTS(posterior_draws >= 1, "sbc: posterior_draws must be >= 1, got ",
                   posterior_draws);
    MYRIAD_EXPECTS(bins >= 2 && (posterior_draws + 1) % bins == 0,
                   "sbc: bins must be >= 2 and divide posterior_draws + 1 = ", posterior_draws + 1,
                   " (equal bins of ranks), got ", bins);
    MYRIAD_EXPECTS(alpha > 0 && alpha < 1, "sbc: alpha must lie in (0, 1), got ", alpha);
  }
};

/// One replication: the true values of the run's recorded quantities, in its order, and the run
/// on the data simulated from them.
struct SbcReplication {
  std::vector<double> truth;
  SampleResult run;
};

/// The calibration of one recorded quantity.
struct SbcQuantity {
  std::string name;
  diag::RankHistogram histogram;
  diag::EcdfBands bands;
};

struct SbcResult {
  std::int64_t replications = 0;
  int posterior_draws = 0;  ///< L
  std::vector<std::string> names;
  std::vector<std::int64_t> ranks;  ///< [replication][quantity], each in 0 … L
  std::vector<SbcQuantity> quantities;
  std::vector<double> min_ess_bulk;         ///< per replication: the smallest bulk ESS of its run
  std::vector<double> max_rhat;             ///< per replication: the largest R-hat of its run
  std::int64_t replications_below_ess = 0;  ///< runs whose smallest bulk ESS is below L
  std::int64_t divergences = 0;             ///< sampling-phase divergences over all runs
  std::int64_t gradient_evaluations = 0;    ///< over all runs, warm-up included
  double seconds = 0;
};

/// Records replication r's ranks into `result` (first call: its names and sizes). Host code,
/// src/run/sbc.cpp.
void add_sbc_replication(SbcResult& result, const SbcConfig& config, std::int64_t replication,
                         const SbcReplication& outcome);
/// The rank histograms and ECDF bands of every quantity, once every replication is in.
void finish_sbc(SbcResult& result, const SbcConfig& config);

/// The sampler's seed in replication r: the run's seed and r mixed (a Weyl step by the golden
/// ratio's 64-bit fraction), so that no two replications share their Philox streams.
inline std::uint64_t sbc_replication_seed(std::uint64_t seed, std::int64_t replication) {
  return seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(replication + 1);
}

/// Runs SBC: `replicate(r, sample_config)` → SbcReplication for r = 0 … R − 1 (see the file
/// comment), each run's seed sbc_replication_seed(sampling.seed, r). `progress(r)` is called
/// after each replication, in order.
///
/// `concurrent` > 1 runs that many replications at once, one per OpenMP thread (the CPU's way:
/// an ensemble of a few chains is too small to keep threads busy, and its many short parallel
/// regions per iteration stall when another process shares the cores, so the replications, which
/// are independent, are the unit of parallel work; the runs' own parallel loops are then nested
/// and execute on their thread). Replications go in windows of 2 × `concurrent`, added in order,
/// so the result is the same for every `concurrent` and at most one window of runs is held.
/// `replicate` must then be safe to call from several threads; an exception in any replication
/// is rethrown (the first in replication order) after its window.
template <class Replicate, class Progress>
SbcResult run_sbc(const SbcConfig& config, const SampleConfig& sampling, Replicate replicate,
                  Progress progress, int concurrent = 1) {
  config.validate();
  sampling.validate();
  MYRIAD_EXPECTS(concurrent >= 1, "sbc: concurrent replications must be >= 1, got ", concurrent);
  const auto run_one = [&](std::int64_t r) {
    SampleConfig run = sampling;
    run.seed = sbc_replication_seed(sampling.seed, r);
    return replicate(r, static_cast<const SampleConfig&>(run));
  };
  SbcResult result;
  const std::int64_t window = concurrent == 1 ? 1 : 2 * static_cast<std::int64_t>(concurrent);
  std::vector<SbcReplication> outcomes(static_cast<std::size_t>(window));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(window));
  for (std::int64_t first = 0; first < config.replications; first += window) {
    const std::int64_t n = std::min(window, config.replications - first);
#pragma omp parallel for schedule(dynamic, 1) num_threads(concurrent) if (n > 1)
    for (std::int64_t i = 0; i < n; ++i) {
      try {
        outcomes[static_cast<std::size_t>(i)] = run_one(first + i);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    }
    for (std::int64_t i = 0; i < n; ++i) {
      if (errors[static_cast<std::size_t>(i)])
        std::rethrow_exception(errors[static_cast<std::size_t>(i)]);
      add_sbc_replication(result, config, first + i, outcomes[static_cast<std::size_t>(i)]);
      outcomes[static_cast<std::size_t>(i)] = SbcReplication{};
      progress(first + i);
    }
  }
  finish_sbc(result, config);
  return result;
}

template <class Replicate>
SbcResult run_sbc(const SbcConfig& config, const SampleConfig& sampling, Replicate replicate) {
  return run_sbc(config, sampling, std::move(replicate), [](std::int64_t) {});
}

/// One replication of a batched run: the true values of the model's recorded quantities and the
/// model conditioned on the data simulated from them.
template <class Model>
struct SbcSimulation {
  std::vector<double> truth;
  Model model;
};

/// Replication r's share of a batched run on Stacked models: its block of the draws
/// ([chain][draw][quantity] of `names`), its rows of the summary, no totals (add_sbc_batch adds
/// the run's once).
SampleResult sbc_block(const SampleResult& batch, std::int64_t replication,
                       const std::vector<std::string>& names);
/// Adds a batched run's totals (divergences, gradient evaluations of the replications' models,
/// time) to `result`, after its replications.
void add_sbc_batch(SbcResult& result, const SampleResult& batch);

/// Runs SBC with every replication in one batch of chains (see the file comment):
/// `simulate(r)` → SbcSimulation<Model> for r = 0 … R − 1, then one run,
/// `run(StackedModels<Model>&, sampling)` → SampleResult on their Stacked<Model> (the caller
/// picks the host or the device model), and each replication's ranks from its block of the
/// draws. `progress(r)` is called as replications are simulated and ranked.
template <class Model, class Simulate, class Run, class Progress>
SbcResult run_sbc_batched(const SbcConfig& config, const SampleConfig& sampling, Simulate simulate,
                          Run run, Progress progress) {
  config.validate();
  sampling.validate();
  MYRIAD_EXPECTS(sampling.keep_draws && sampling.draws_path.empty(),
                 "sbc: the batched run ranks its draws in memory (keep_draws, no draws_path)");
  std::vector<std::vector<double>> truths;
  std::vector<Model> models;
  for (std::int64_t r = 0; r < config.replications; ++r) {
    SbcSimulation<Model> simulation = simulate(r);
    truths.push_back(std::move(simulation.truth));
    models.push_back(simulation.model);
  }
  StackedModels<Model> stacked(std::move(models));
  const SampleResult batch = run(stacked, sampling);
  const std::vector<std::string> names = recorded_quantity_names(stacked.model(0));
  SbcResult result;
  for (std::int64_t r = 0; r < config.replications; ++r) {
    add_sbc_replication(result, config, r,
                        SbcReplication{std::move(truths[r]), sbc_block(batch, r, names)});
    progress(r);
  }
  add_sbc_batch(result, batch);
  finish_sbc(result, config);
  return result;
}

}  // namespace myriad
