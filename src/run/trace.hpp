#pragma once
// Shared by the schedulers (run_hmc.cpp, run_chmc.cpp): the host trace that chunks of recorded
// quantities are transposed into, and the diagnostics computed over it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/nested_rhat.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Draws per device→host chunk: config.chunk_iterations, or as many as fit in 64 MiB (at most
/// 250, for progress granularity), never more than the draws.
inline int chunk_iterations_for(const SampleConfig& config, int quantities, std::size_t bytes) {
  int chunk = config.chunk_iterations;
  if (chunk == 0) {
    const double bytes_per_draw =
        static_cast<double>(quantities) * static_cast<double>(config.chains) * bytes;
    chunk = static_cast<int>(std::clamp(64.0 * 1024 * 1024 / bytes_per_draw, 1.0, 250.0));
  }
  return std::min(chunk, config.draws);
}

/// Transposes device-layout chunks [draw][quantity][chain] into result.draws_data
/// [chain][kept draw][quantity] in double, keeping every thin-th draw; sizes the trace.
template <class T>
class TraceSink final : public DrawSink<T> {
 public:
  TraceSink(SampleResult& result, const SampleConfig& config, int quantities)
      : result_(result), config_(config), quantities_(quantities) {
    result.kept_draws = (config.draws + config.thin - 1) / config.thin;
    if (config.keep_draws) {
      result.draws_data.assign(
          static_cast<std::size_t>(config.chains) * result.kept_draws * quantities, 0.0);
    }
  }

  void consume(const T* values, std::int64_t first_draw, int num_draws) override {
    if (!result_.draws_data.empty()) {
      const int thin = config_.thin;
      const std::int64_t chains = config_.chains;
      const std::int64_t kept = result_.kept_draws;
      double* trace = result_.draws_data.data();
#pragma omp parallel for schedule(static)
      for (std::int64_t c = 0; c < chains; ++c) {
        for (int i = 0; i < num_draws; ++i) {
          const std::int64_t draw = first_draw + i;
          if (draw % thin != 0) continue;
          double* out = trace + (c * kept + draw / thin) * quantities_;
          const T* in = values + static_cast<std::int64_t>(i) * quantities_ * chains + c;
          for (int q = 0; q < quantities_; ++q) out[q] = static_cast<double>(in[q * chains]);
        }
      }
    }
    if (config_.progress) config_.progress({"sampling", first_draw + num_draws, config_.draws});
  }

 private:
  SampleResult& result_;
  const SampleConfig& config_;
  int quantities_;
};

/// Summaries (R-hat, ESS, quantiles) and nested R-hat over the trace, if kept.
inline void diagnose_trace(SampleResult& result, const SampleConfig& config) {
  const auto start = Clock::now();
  const int quantities = static_cast<int>(result.names.size());
  if (config.keep_draws) {
    result.summary = diag::summarize_all(result.draws_data.data(), config.chains,
                                         result.kept_draws, quantities, result.names);
    result.nested_rhat.assign(quantities, std::numeric_limits<double>::quiet_NaN());
    if (result.superchains > 1) {
#pragma omp parallel for schedule(dynamic)
      for (int q = 0; q < quantities; ++q) {
        const diag::DrawsView view = diag::quantity_view(
            result.draws_data.data(), config.chains, result.kept_draws, quantities, q);
        result.nested_rhat[q] = diag::nested_rhat(view, result.superchains);
      }
    }
  }
  result.summary_seconds = seconds_since(start);
}

}  // namespace myriad
