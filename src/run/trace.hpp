#pragma once
// Shared by the schedulers (run_hmc.cpp, run_chmc.cpp, run_abc.cpp): the trace that chunks of
// recorded quantities are transposed into, in memory or streamed to a file, and the diagnostics
// computed over it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/nested_rhat.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/io/draws_file.hpp"
#include "myriad/run/host_memory.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Takes device-layout chunks [draw][quantity][chain], keeps every thin-th draw and transposes
/// them to the trace's [chain][kept draw][quantity] in double: into result.draws_data (with
/// config.keep_draws), or streamed to config.draws_path chunk by chunk (io/draws_file.hpp), the
/// file created afresh or, for a resumed run, reopened to be written on.
template <class T>
class TraceSink final : public DrawSink<T> {
 public:
  TraceSink(SampleResult& result, const SampleConfig& config, int quantities, bool resuming = false)
      : result_(result), config_(config), quantities_(quantities) {
    result.kept_draws = (config.draws + config.thin - 1) / config.thin;
    if (!config.draws_path.empty()) {
      file_ = std::make_unique<io::DrawsFile>(
          resuming ? io::DrawsFile::open_existing(config.draws_path, config.chains,
                                                  result.kept_draws, quantities)
                   : io::DrawsFile::create(config.draws_path, config.chains, result.kept_draws,
                                           quantities));
      result.draws_path = config.draws_path;
    } else if (config.keep_draws) {
      result.draws_data.assign(
          static_cast<std::size_t>(config.chains) * result.kept_draws * quantities, 0.0);
    }
  }

  void consume(const T* values, std::int64_t first_draw, int num_draws) override {
    const int thin = config_.thin;
    const std::int64_t chains = config_.chains;
    // The chunk's kept draws: first_kept … first_kept + count − 1 of the trace.
    const std::int64_t first_kept = (first_draw + thin - 1) / thin;
    const std::int64_t count = (first_draw + num_draws + thin - 1) / thin - first_kept;
    if (count > 0 && (file_ || !result_.draws_data.empty())) {
      double* trace = result_.draws_data.data();
      std::int64_t row = result_.kept_draws, offset = first_kept;
      if (file_) {  // the chunk alone, [chain][count][quantity]
        buffer_.resize(static_cast<std::size_t>(chains * count * quantities_));
        trace = buffer_.data();
        row = count;
        offset = 0;
      }
#pragma omp parallel for schedule(static)
      for (std::int64_t c = 0; c < chains; ++c) {
        for (std::int64_t k = 0; k < count; ++k) {
          const std::int64_t i = (first_kept + k) * thin - first_draw;  // index in the chunk
          double* out = trace + (c * row + offset + k) * quantities_;
          const T* in = values + i * quantities_ * chains + c;
          for (int q = 0; q < quantities_; ++q) out[q] = static_cast<double>(in[q * chains]);
        }
      }
      if (file_) file_->write_draws(first_kept, count, buffer_.data());
    }
    if (config_.progress) config_.progress({"sampling", first_draw + num_draws, config_.draws});
  }

  /// Makes the draws written so far durable (before a checkpoint counts them as done).
  void sync() {
    if (file_) file_->sync();
  }

  /// The trace's file when streamed, else nullptr.
  const io::DrawsFile* file() const { return file_.get(); }

  /// Syncs and closes the file (the trace is complete).
  void close() {
    buffer_ = {};
    if (file_) file_->close();
  }

 private:
  SampleResult& result_;
  const SampleConfig& config_;
  int quantities_;
  std::unique_ptr<io::DrawsFile> file_;
  std::vector<double> buffer_;
};

/// Summaries (R-hat, ESS, quantiles) and nested R-hat over a block of the trace: `chains`
/// chains of `kept` draws of `count` quantities [chain][draw][quantity], quantities first … of
/// the run's.
inline void diagnose_block(SampleResult& result, const double* block, std::int64_t chains,
                           std::int64_t count, std::int64_t first) {
  const std::int64_t kept = result.kept_draws;
  const std::vector<std::string> names(result.names.begin() + first,
                                       result.names.begin() + first + count);
  std::vector<diag::VariableSummary> summaries =
      diag::summarize_all(block, chains, kept, count, names);
  std::move(summaries.begin(), summaries.end(), result.summary.begin() + first);
  // Nested R-hat over the diagnosed chains' whole superchains.
  const std::int64_t per_superchain = result.chains / std::max(1, result.superchains);
  const std::int64_t superchains = result.superchains > 1 ? chains / per_superchain : 0;
  if (superchains < 2) return;
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t q = 0; q < count; ++q) {
    const diag::DrawsView view =
        diag::quantity_view(block, superchains * per_superchain, kept, count, q);
    result.nested_rhat[first + q] = diag::nested_rhat(view, static_cast<int>(superchains));
  }
}

/// The diagnostics of the trace: over result.draws_data, or read back from `file` in blocks of
/// plan.quantities_per_block quantities over plan.diagnosed_chains chains (run/host_memory.hpp).
inline void diagnose_trace(SampleResult& result, const SampleConfig& config,
                           const io::DrawsFile* file, const HostMemoryPlan& plan) {
  const auto start = Clock::now();
  const std::int64_t quantities = static_cast<std::int64_t>(result.names.size());
  if (file || config.keep_draws) {
    result.summary.assign(static_cast<std::size_t>(quantities), diag::VariableSummary{});
    result.nested_rhat.assign(static_cast<std::size_t>(quantities),
                              std::numeric_limits<double>::quiet_NaN());
  }
  if (file) {
    const std::int64_t chains = plan.diagnosed_chains > 0 ? plan.diagnosed_chains : config.chains;
    const std::int64_t per_block = std::max(1, plan.quantities_per_block);
    std::vector<double> block;
    for (std::int64_t first = 0; first < quantities; first += per_block) {
      const std::int64_t count = std::min(per_block, quantities - first);
      block.resize(static_cast<std::size_t>(chains * result.kept_draws * count));
      file->read_quantities(first, count, chains, block.data());
      diagnose_block(result, block.data(), chains, count, first);
    }
    result.diagnosed_chains = chains;
  } else if (config.keep_draws) {
    diagnose_block(result, result.draws_data.data(), config.chains, quantities, 0);
    result.diagnosed_chains = config.chains;
  }
  result.summary_seconds = seconds_since(start);
}

/// Ends the sampling phase's trace: diagnoses it within `plan` (reading the file back needs no
/// sync), then syncs and closes its file.
template <class T>
void finish_trace(SampleResult& result, const SampleConfig& config, TraceSink<T>& sink,
                  const HostMemoryPlan& plan) {
  diagnose_trace(result, config, sink.file(), plan);
  sink.close();
}

/// The diagnostics of a trace held in result.draws_data (config.keep_draws), over every chain.
inline void diagnose_trace(SampleResult& result, const SampleConfig& config) {
  diagnose_trace(result, config, nullptr, HostMemoryPlan{});
}

}  // namespace myriad
