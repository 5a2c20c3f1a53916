#pragma once
// A one-line progress bar on standard error, drawn only when standard error is a terminal.

#include <chrono>
#include <string>

#include "myriad/run/sample_config.hpp"

namespace myriad::cli {

class ProgressBar {
 public:
  /// Enabled only if `wanted` and stderr is a terminal.
  explicit ProgressBar(bool wanted);
  ~ProgressBar();
  void update(const Progress& progress);
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace myriad::cli
