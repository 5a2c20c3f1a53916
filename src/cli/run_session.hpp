#pragma once
// What every run command (sample, ais, mpis) does once its options are read: claim the device
// and the output directory before any computation, so that a missing GPU or an unwritable
// output fails at once; show progress unless told not to; and at the end write run.json and
// move the outputs into place (DESIGN.md, "Outputs": a failed run leaves nothing that looks
// complete).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "json.hpp"
#include "myriad/app/output_directory.hpp"
#include "myriad/backend/device.hpp"
#include "progress_bar.hpp"

namespace myriad::cli {

class CommandLine;

class RunSession {
 public:
  using Clock = std::chrono::steady_clock;

  /// Ends the reading of the command line (finish_reading_command_line), resolves `device` and
  /// stages the --output directory, in that order. `start` is when the command began; `staging`
  /// says whether the run can be resumed (io::Staging).
  RunSession(const CommandLine& line, Device device, Clock::time_point start,
             io::Staging staging = io::Staging::fresh);

  /// The device the run uses (`automatic` resolved).
  Device device() const { return device_; }
  /// --quiet: no summary on standard output.
  bool quiet() const { return quiet_; }
  ProgressBar& progress() { return progress_; }
  /// A run config's progress callback (phase, done, total) drawing this session's bar.
  std::function<void(const char*, std::int64_t, std::int64_t)> phase_progress() {
    return [this](const char* phase, std::int64_t done, std::int64_t total) {
      progress_.update(Progress{phase, done, total});
    };
  }
  /// Where to write one of the run's files before commit().
  std::string path(const std::string& file_name) const { return output_.path(file_name); }
  const std::string& final_path() const { return output_.final_path(); }
  /// Where the run's files are until commit() (a resumable run's state stays there).
  const std::string& staging_path() const { return output_.staging_path(); }
  /// Seconds since the command began.
  double seconds() const;

  /// Writes `report` as run.json and moves the outputs into place.
  void commit(const Json& report);

 private:
  Clock::time_point start_;
  Device device_;
  io::OutputDirectory output_;
  bool quiet_;
  ProgressBar progress_;
};

}  // namespace myriad::cli
