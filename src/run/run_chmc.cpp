// The host scheduler for many-chain constrained HMC: initialise on the manifold → warm-up
// (ensemble step size by dual averaging on the pooled acceptance, each chain backing off its own
// step while it cannot move, mcmc/step_back_off.hpp; identity mass matrix, as in the papers) →
// sample at the ensemble's step → diagnose.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint_file.hpp"
#include "checkpoint_schedule.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/mcmc/step_size_search.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/sample_constrained.hpp"
#include "stranded_chains.hpp"
#include "trace.hpp"

namespace myriad {

void ChmcConfig::validate_constrained() const {
  validate();
  MYRIAD_EXPECTS(inner_steps >= 1, "inner_steps must be >= 1, got ", inner_steps);
  MYRIAD_EXPECTS(min_steps >= 1 && max_steps >= min_steps,
                 "trajectory steps need 1 <= min_steps <= max_steps, got ", min_steps, " and ",
                 max_steps);
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"constraint_tol", constraint_tol},
        {"position_tol", position_tol},
        {"reverse_tol", reverse_tol},
        {"divergence_tol", divergence_tol}}) {
    MYRIAD_EXPECTS(std::isfinite(value) && value > 0, name, " must be positive, got ", value);
  }
  MYRIAD_EXPECTS(max_iterations >= 1, "max_iterations must be >= 1, got ", max_iterations);
  MYRIAD_EXPECTS(sampler == HmcSampler::hmc, "sampler ", to_string(sampler),
                 " applies to HMC on a density model, not to constrained HMC");
  MYRIAD_EXPECTS(metric != MetricKind::dense,
                 "a dense metric applies to HMC on a density model, not to constrained HMC");
  MYRIAD_EXPECTS(initial_positions.empty() && init_radius == 0,
                 "initial_positions and init_radius apply to HMC: constrained HMC starts each "
                 "chain on the manifold with the generator's initialize()");
}

namespace {

/// The settings that decide a constrained run's draws, as bytes (run_hmc.cpp's run_fingerprint
/// for constrained HMC): the chains' state is the backend's own layout, so its kind (the device
/// name's first word) and chain mapping are part of it.
template <class T>
std::string chmc_fingerprint(const ChmcBackend<T>& backend, const ChmcConfig& config) {
  const std::string device = backend.device_name();
  return detail::fingerprint_of(
      std::string("chmc"), std::uint32_t(sizeof(T)), device.substr(0, device.find(' ')),
      backend.input_dim(), backend.quantity_names(), config.chains, config.warmup, config.draws,
      config.seed, config.target_accept, config.initial_step_size, config.init_tries,
      config.adapt_step_size, config.restart_stranded, config.superchains, config.cpu_simd_lanes,
      config.thin, config.keep_draws, !config.draws_path.empty(), config.inner_steps,
      config.min_steps, config.max_steps, config.constraint_tol, config.position_tol,
      config.reverse_tol, config.divergence_tol, config.max_iterations, int(config.chain_mapping),
      int(config.gram_factorization), config.step_back_off);
}

/// One constrained HMC run as a sequence of iterations with explicit state (serialize), as
/// run_hmc.cpp's HmcRun: a checkpoint writes it with the backend's chain state, a resumed run
/// reads both and goes on.
template <class T>
class ChmcRun {
 public:
  ChmcRun(ChmcBackend<T>& backend, const ChmcConfig& config)
      : backend_(backend),
        config_(config),
        quantities_(backend.num_quantities()),
        result_(new_sample_result(config, backend.device_name(), backend.quantity_names())),
        adapter_(1.0, DualAveraging::Options{config.target_accept}),
        checkpoints_(config.checkpoint, config.warmup, config.draws) {
    result_.leapfrog_steps = config.max_steps;
    result_.inverse_metric.assign(backend.input_dim(), 1.0);
    settings_.seed = config.seed;
    settings_.min_steps = config.min_steps;
    settings_.max_steps = config.max_steps;
    settings_.step.inner_steps = config.inner_steps;
    settings_.step.constraint_tol = T(config.constraint_tol);
    settings_.step.position_tol = T(config.position_tol);
    settings_.step.reverse_tol = T(config.reverse_tol);
    settings_.step.divergence_tol = T(config.divergence_tol);
    settings_.step.max_iterations = config.max_iterations;
  }

  SampleResult run() {
    // The trace's share of host memory: a run over --memory-limit is refused here, before it
    // starts, and a streamed trace is diagnosed in blocks that fit.
    memory_ = plan_host_memory(config_, 0, quantities_, sizeof(T), false);
    if (config_.checkpoint.resume) {
      resume();
    } else {
      start();
    }
    // Stranded chains (docs/tuning.md) are checked for up to 90% of warm-up, so that a
    // restarted chain has the rest of it to part from its source; the step back-off frees the
    // chains a smaller step can move, the restarts those it cannot.
    const int restarts_until = config_.warmup * 9 / 10;
    const int progress_every = std::max(1, config_.warmup / 100);
    const auto warmup_start = Clock::now();
    settings_.step_back_off = config_.step_back_off;
    while (warmup_done_ < config_.warmup) {
      const int w = warmup_done_;
      settings_.step.step_size = T(config_.adapt_step_size ? adapter_.step_size() : step_);
      const IterationStats s = backend_.run(settings_, iteration_++, 1, nullptr, 0, 0);
      result_.warmup_stats += s;
      if (config_.adapt_step_size) adapter_.update(s.mean_accept_prob());
      if (config_.restart_stranded && (w + 1) % kRestartCheckIterations == 0 &&
          w + 1 < restarts_until)
        restarts_->check(w);
      ++warmup_done_;
      if (config_.progress && warmup_done_ % progress_every == 0)
        config_.progress({"warmup", warmup_done_, config_.warmup});
      between_iterations(warmup_start, result_.warmup_seconds);
    }
    result_.warmup_seconds += seconds_since(warmup_start);
    if (!sampling_prepared_) prepare_sampling();
    sample();
    return std::move(result_);
  }

 private:
  void start() {
    const auto warmup_start = Clock::now();
    const std::int64_t failed =
        backend_.initialize(config_.seed, config_.init_tries,
                            chains_per_initial_point(config_.chains, result_.superchains));
    if (failed > 0) {
      throw invalid_argument(detail::concat("could not place ", failed, " of ", config_.chains,
                                            " chains on the manifold after ", config_.init_tries,
                                            " attempts (the generator's initialize() failed)"));
    }
    step_ = config_.initial_step_size;
    if (step_ == 0) {
      // One outer step per probe; failures count as zero acceptance.
      ChmcSettings<T> probe = settings_;
      probe.min_steps = probe.max_steps = 1;
      step_ = find_reasonable_step_size([&](double eps) {
        probe.step.step_size = T(eps);
        const IterationStats s = backend_.run(probe, iteration_++, 1, nullptr, 0, 0);
        result_.warmup_stats += s;
        return s.mean_accept_prob();
      });
    }
    adapter_ = DualAveraging(step_, DualAveraging::Options{config_.target_accept});
    restarts_.emplace(backend_, config_.seed, result_);
    result_.warmup_seconds += seconds_since(warmup_start);
  }

  /// The end of warm-up: the final step for every chain, each chain's back-off recorded.
  void prepare_sampling() {
    if (config_.adapt_step_size && config_.warmup > 0) step_ = adapter_.final_step_size();
    result_.step_size = step_;
    for (const std::uint8_t halvings : backend_.step_halvings()) {
      result_.warmup_backed_off_chains += halvings > 0;
      result_.warmup_max_step_halvings = std::max<int>(result_.warmup_max_step_halvings, halvings);
    }
    sampling_start_density_ = backend_.log_densities();
    sampling_prepared_ = true;
  }

  void sample() {
    const auto sampling_start = Clock::now();
    settings_.step_back_off = false;
    settings_.step.step_size = T(step_);
    // A run resumed in its sampling phase writes on the draws file it had begun.
    TraceSink<T> sink(result_, config_, quantities_, /*resuming=*/draws_done_ > 0);
    sink_ = &sink;
    const int chunk = chunk_draws(config_, quantities_, sizeof(T));
    checkpoints_.sample(
        warmup_done_, draws_done_, config_.draws, chunk,
        [&](int first, int n) {
          result_.sampling_stats += backend_.run(
              settings_, iteration_ + static_cast<std::uint32_t>(first), n, &sink, first, chunk);
        },
        [&] { between_iterations(sampling_start, result_.sampling_seconds); });
    sink_ = nullptr;
    result_.sampling_stuck_chains =
        unchanged_chains(sampling_start_density_, backend_.log_densities());
    result_.sampling_seconds += seconds_since(sampling_start);
    finish_trace(result_, config_, sink, memory_);
  }

  std::int64_t iterations_done() const { return std::int64_t(warmup_done_) + draws_done_; }

  /// After an iteration (warm-up) or a chunk (sampling): a checkpoint when one is due, or a
  /// stop (checkpoint_schedule.hpp).
  void between_iterations(Clock::time_point phase_start, double& phase_seconds) {
    checkpoints_.after(iterations_done(), warmup_done_, draws_done_, phase_start, phase_seconds,
                       [&] { write_checkpoint(); });
  }

  void write_checkpoint() {
    if (sink_) sink_->sync();  // the draws the checkpoint counts as done are on disk first
    detail::write_run_checkpoint(config_.checkpoint.path, chmc_fingerprint(backend_, config_),
                                 [&](auto& archive) {
                                   archive(backend_.chain_state().arrays);
                                   serialize(archive);
                                 });
    ++result_.checkpoints_written;
  }

  void resume() {
    detail::read_run_checkpoint(config_.checkpoint.path, chmc_fingerprint(backend_, config_),
                                [&](auto& archive) {
                                  ChmcChainState chains;
                                  archive(chains.arrays);
                                  backend_.restore_chain_state(chains);
                                  restarts_.emplace(backend_, config_.seed, result_);
                                  serialize(archive);
                                });
    checkpoints_.start_at(iterations_done());
    result_.resumed_at_iteration = iterations_done();
  }

  /// The run's whole state between iterations, the chains aside (one list reads and writes).
  template <class Archive>
  void serialize(Archive& archive) {
    archive(iteration_, warmup_done_, draws_done_, sampling_prepared_, step_, adapter_, *restarts_,
            sampling_start_density_);
    detail::serialize_result_totals(archive, result_);
    archive(result_.warmup_backed_off_chains, result_.warmup_max_step_halvings);
  }

  ChmcBackend<T>& backend_;
  const ChmcConfig& config_;
  const int quantities_;
  SampleResult result_;
  HostMemoryPlan memory_;
  ChmcSettings<T> settings_;
  TraceSink<T>* sink_ = nullptr;

  // The state a checkpoint holds (serialize).
  std::uint32_t iteration_ = 0;
  int warmup_done_ = 0;
  int draws_done_ = 0;
  bool sampling_prepared_ = false;
  double step_ = 0;
  DualAveraging adapter_;
  std::optional<StrandedChainRestarts<ChmcBackend<T>>> restarts_;
  std::vector<T> sampling_start_density_;

  CheckpointSchedule checkpoints_;
};

}  // namespace

template <class T>
SampleResult run_chmc(ChmcBackend<T>& backend, const ChmcConfig& config) {
  config.validate_constrained();
  MYRIAD_EXPECTS(backend.chains() == config.chains, "backend has ", backend.chains(),
                 " chains but the configuration asks for ", config.chains);
  return ChmcRun<T>(backend, config).run();
}

template SampleResult run_chmc<double>(ChmcBackend<double>&, const ChmcConfig&);

}  // namespace myriad
