#pragma once
// What the resumable schedulers (run_hmc.cpp, run_chmc.cpp) share of checkpoints
// (docs/checkpoints.md): when one is due, when a stop is asked for, and how the sampling phase's
// launches are cut so that both fall between launches. Iterations count warm-up and sampling
// together.

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "myriad/core/error.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

class CheckpointSchedule {
 public:
  CheckpointSchedule(const CheckpointSettings& settings, std::int64_t warmup, std::int64_t draws)
      : settings_(settings), total_(warmup + draws) {}

  /// The run started, or resumed, after `done` iterations: the next checkpoint is counted from
  /// there.
  void start_at(std::int64_t done) { last_ = done; }

  /// Sampling runs one launch per chunk when there are checkpoints to write or a stop to poll.
  bool stepwise() const { return settings_.enabled() || settings_.stop_requested; }

  /// Draws the next sampling launch runs, after `done` iterations with `remaining` draws to go:
  /// all of them, at most a chunk when stepwise, and no further than the next multiple of
  /// `every` (where a checkpoint is due). The draws are the same however the launches are cut.
  int launch(std::int64_t done, int remaining, int chunk) const {
    std::int64_t n = remaining;
    if (stepwise()) n = std::min<std::int64_t>(n, chunk);
    if (settings_.enabled() && settings_.every > 0)
      n = std::min<std::int64_t>(n, (done / settings_.every + 1) * settings_.every - done);
    return static_cast<int>(n);
  }

  /// The sampling phase from `draws_done` to `draws` after `warmup` warm-up iterations:
  /// run_draws(first_draw, n) runs n draws at a time, cut as launch() says, and between(), after
  /// every launch but the last, may checkpoint or stop (after()).
  template <class RunDraws, class Between>
  void sample(std::int64_t warmup, int& draws_done, int draws, int chunk, RunDraws run_draws,
              Between between) const {
    while (draws_done < draws) {
      const int n = launch(warmup + draws_done, draws - draws_done, chunk);
      run_draws(draws_done, n);
      draws_done += n;
      if (draws_done < draws) between();
    }
  }

  /// After `done` iterations (`warmup_done` of warm-up, `draws_done` draws) of a phase that
  /// began at `phase_start` in this process with `phase_seconds` counted before it: `save()`
  /// writes a checkpoint when one is due or a stop was asked for (with a checkpoint path), with
  /// the phase's time so far in phase_seconds (and taken out again after, so that it is not
  /// counted twice), and a stop then throws myriad::interrupted saying where the run stood.
  template <class Save>
  void after(std::int64_t done, std::int64_t warmup_done, std::int64_t draws_done,
             std::chrono::steady_clock::time_point phase_start, double& phase_seconds, Save save) {
    const bool stop = settings_.stop_requested && settings_.stop_requested();
    const bool due = settings_.enabled() && settings_.every > 0 &&
                     done / settings_.every > last_ / settings_.every;
    if (!stop && !due) return;
    if (settings_.enabled()) {
      const double before = phase_seconds;
      phase_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_start).count();
      save();
      phase_seconds = before;
      last_ = done;
    }
    if (stop) {
      throw interrupted(detail::concat(
          "stopped after ", done, " of ", total_, " iterations (", warmup_done, " warm-up, ",
          draws_done, " draws)",
          settings_.enabled() ? "; the checkpoint holds the run's state" : "; no checkpoint"));
    }
  }

 private:
  const CheckpointSettings& settings_;
  std::int64_t total_;
  std::int64_t last_ = 0;
};

}  // namespace myriad
