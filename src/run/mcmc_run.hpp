#pragma once
// What a resumable many-chain MCMC run does the same way whatever its transition (run_hmc.cpp's
// HmcRun, run_chmc.cpp's ChmcRun): the order of a run (start or resume, warm-up one iteration at
// a time, the end of warm-up, sampling in chunks streamed to the trace), checkpoints between
// iterations, and the state every such run holds between two of them.
//
// The derived run (CRTP, so that nothing here is virtual) provides
//   HostMemoryPlan plan_memory()          the run's host memory, checked before it starts
//   void start()                          initial points and the first step size
//   void before_warmup()                  what warm-up needs that a resumed run also needs
//   void warmup_iteration(int w)          warm-up iteration w
//   void prepare_sampling()               the end of warm-up (sets sampling_prepared_)
//   IterationStats run_draws(std::uint32_t iteration, int n, TraceSink<T>* sink, int first_draw,
//                            int chunk)   n sampling iterations from `iteration` into the sink
//   std::string fingerprint() const       the settings a checkpoint must match
//   void write_chains(Archive&)           the backend's chain state into a checkpoint
//   void read_chains(Archive&)            and back, with the objects made over the restored chains
//   void after_resume()                   what a restored run sets on the backend
//   void serialize(Archive&)              its own state; serialize_common() holds the shared part

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checkpoint_file.hpp"
#include "checkpoint_schedule.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "stranded_chains.hpp"
#include "trace.hpp"

namespace myriad {

template <class Derived, class Backend, class Config, class Settings, class T>
class McmcRun {
 public:
  SampleResult run() {
    memory_ = derived().plan_memory();
    if (config_.checkpoint.resume) {
      resume();
    } else {
      derived().start();
    }
    derived().before_warmup();
    const int progress_every = std::max(1, config_.warmup / 100);
    const auto warmup_start = Clock::now();
    while (warmup_done_ < config_.warmup) {
      derived().warmup_iteration(warmup_done_);
      ++warmup_done_;
      if (config_.progress && warmup_done_ % progress_every == 0)
        config_.progress({"warmup", warmup_done_, config_.warmup});
      between_iterations(warmup_start, result_.warmup_seconds);
    }
    result_.warmup_seconds += seconds_since(warmup_start);
    if (!sampling_prepared_) derived().prepare_sampling();
    sample();
    return std::move(result_);
  }

 protected:
  McmcRun(Backend& backend, const Config& config)
      : backend_(backend),
        config_(config),
        quantities_(backend.num_quantities()),
        result_(new_sample_result(config, backend.device_name(), backend.quantity_names())),
        adapter_(1.0, DualAveraging::Options{config.target_accept}),
        checkpoints_(config.checkpoint, config.warmup, config.draws) {
    MYRIAD_EXPECTS(backend.chains() == config.chains, "backend has ", backend.chains(),
                   " chains but the configuration asks for ", config.chains);
    settings_.seed = config.seed;
  }

  /// Iterations done so far, warm-up and sampling together.
  std::int64_t iterations_done() const { return std::int64_t(warmup_done_) + draws_done_; }

  /// The state every run holds between iterations, read and written by the derived serialize.
  template <class Archive>
  void serialize_common(Archive& archive) {
    archive(iteration_, warmup_done_, draws_done_, sampling_prepared_, step_, adapter_);
  }

  Backend& backend_;
  const Config& config_;
  const int quantities_;
  SampleResult result_;
  HostMemoryPlan memory_;
  Settings settings_;

  // The state a checkpoint holds (the derived serialize).
  std::uint32_t iteration_ = 0;  ///< the next iteration's number: it keys the random numbers
  int warmup_done_ = 0;
  int draws_done_ = 0;
  bool sampling_prepared_ = false;
  double step_ = 0;
  DualAveraging adapter_;
  std::optional<StrandedChainRestarts<Backend>> restarts_;
  std::vector<T> sampling_start_density_;

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }

  /// Sampling: fused chunks of iterations, draws streamed to the trace. With checkpoints or a
  /// stop request to poll, one launch per chunk (cut at each multiple of checkpoint.every), so
  /// that both fall between launches; the draws are the same however the launches are cut.
  void sample() {
    const auto sampling_start = Clock::now();
    // A run resumed in its sampling phase writes on the draws file it had begun.
    TraceSink<T> sink(result_, config_, quantities_, /*resuming=*/draws_done_ > 0);
    sink_ = &sink;
    const int chunk = chunk_draws(config_, quantities_, sizeof(T));
    checkpoints_.sample(
        warmup_done_, draws_done_, config_.draws, chunk,
        [&](int first, int n) {
          result_.sampling_stats += derived().run_draws(
              iteration_ + static_cast<std::uint32_t>(first), n, &sink, first, chunk);
        },
        [&] { between_iterations(sampling_start, result_.sampling_seconds); });
    sink_ = nullptr;
    result_.sampling_stuck_chains =
        unchanged_chains(sampling_start_density_, backend_.log_densities());
    result_.sampling_seconds += seconds_since(sampling_start);
    finish_trace(result_, config_, sink, memory_);
  }

  /// After an iteration (warm-up) or a chunk (sampling): a checkpoint when one is due, or a
  /// stop (checkpoint_schedule.hpp).
  void between_iterations(Clock::time_point phase_start, double& phase_seconds) {
    checkpoints_.after(iterations_done(), warmup_done_, draws_done_, phase_start, phase_seconds,
                       [&] { write_checkpoint(); });
  }

  void write_checkpoint() {
    if (sink_) sink_->sync();  // the draws the checkpoint counts as done are on disk first
    detail::write_run_checkpoint(config_.checkpoint.path, derived().fingerprint(),
                                 [&](auto& archive) {
                                   derived().write_chains(archive);
                                   derived().serialize(archive);
                                 });
    ++result_.checkpoints_written;
  }

  void resume() {
    detail::read_run_checkpoint(config_.checkpoint.path, derived().fingerprint(),
                                [&](auto& archive) {
                                  derived().read_chains(archive);
                                  derived().serialize(archive);
                                });
    derived().after_resume();
    checkpoints_.start_at(iterations_done());
    result_.resumed_at_iteration = iterations_done();
  }

  TraceSink<T>* sink_ = nullptr;  ///< the sampling phase's trace, while it runs
  CheckpointSchedule checkpoints_;
};

}  // namespace myriad
