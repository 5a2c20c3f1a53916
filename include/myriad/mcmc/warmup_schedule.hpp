#pragma once
// Stan's windowed warm-up (Stan Reference Manual, "HMC algorithm parameters: automatic
// parameter tuning"): an initial fast interval adapts only the step size, then slow windows of
// doubling length each end with a new metric estimate (and a restart of dual averaging), and a
// terminal fast interval adapts the step size to the final metric.

#include <vector>

namespace myriad {

struct WarmupSchedule {
  int initial_buffer = 75;
  int terminal_buffer = 50;
  int base_window = 25;
  bool adapt_metric = true;
  /// Iteration indices (0-based, within warm-up) at which a metric window ends.
  std::vector<int> window_ends;
  /// First warm-up iteration of the metric windows.
  int metric_start = 0;

  /// Stan's rules: with too few iterations for the default buffers, 15% / 75% / 10%; with
  /// fewer than 20, adapt the step size only.
  static WarmupSchedule make(int warmup, bool adapt_metric) {
    WarmupSchedule s;
    s.adapt_metric = adapt_metric && warmup >= 20;
    if (!s.adapt_metric) return s;
    if (s.initial_buffer + s.base_window + s.terminal_buffer > warmup) {
      s.initial_buffer = static_cast<int>(0.15 * warmup);
      s.terminal_buffer = static_cast<int>(0.1 * warmup);
      s.base_window = warmup - (s.initial_buffer + s.terminal_buffer);
    }
    s.metric_start = s.initial_buffer;
    const int metric_end = warmup - s.terminal_buffer;
    int start = s.initial_buffer;
    int size = s.base_window;
    while (start < metric_end) {
      int end = start + size;
      // A following window that would not fit is merged into this one.
      if (end + 2 * size > metric_end) end = metric_end;
      s.window_ends.push_back(end - 1);
      start = end;
      size *= 2;
    }
    return s;
  }

  bool in_metric_window(int iteration) const {
    return adapt_metric && !window_ends.empty() && iteration >= metric_start &&
           iteration <= window_ends.back();
  }
  bool ends_window(int iteration) const {
    for (int e : window_ends)
      if (e == iteration) return true;
    return false;
  }
};

}  // namespace myriad
