#pragma once
// The host memory a many-chain run holds, part by part, so that a run that would not fit is
// refused before it starts (SampleConfig::memory_limit, the CLI's --memory-limit) and the
// diagnostics read a streamed trace back in blocks that fit.

#include <cstddef>
#include <cstdint>
#include <string>

#include "myriad/run/sample_config.hpp"

namespace myriad {

/// Bytes of workspace per draw that one thread's diagnostics of one quantity use (the rank
/// normalisation's values, sort keys, scores and folded copies of diag::RankedDraws).
constexpr std::int64_t kDiagnosticBytesPerDraw = 128;

/// What a run holds in host memory (bytes), and how its diagnostics are blocked.
struct HostMemoryPlan {
  std::int64_t ensemble = 0;     ///< the CPU backend's chain state (0 on a GPU)
  std::int64_t draw_chunks = 0;  ///< a chunk of draws as the device wrote it and transposed
  std::int64_t trace = 0;        ///< the trace in memory (0 when streamed to a file)
  std::int64_t diagnostics = 0;  ///< one block of quantities read back, with the workspaces
  /// Quantities per block of the diagnostics, and the chains they cover (all, unless one
  /// quantity of every chain would not fit).
  int quantities_per_block = 0;
  std::int64_t diagnosed_chains = 0;

  /// Everything but the diagnostics: what must fit for the run to start.
  std::int64_t fixed() const { return ensemble + draw_chunks + trace; }
  std::int64_t total() const { return fixed() + diagnostics; }
};

/// Draws per device→host chunk: config.chunk_iterations, or as many as fit in 64 MiB (at most
/// 250, for progress granularity; with a memory limit, in an eighth of it: the chunk is held
/// twice, as the device wrote it and transposed), never more than the draws.
int chunk_draws(const SampleConfig& config, int quantities, std::size_t value_bytes);

/// The system's available memory (MemAvailable of /proc/meminfo), or 0 where unknown.
std::int64_t available_host_memory();

/// Plans a run of `config` on a model of dimension `dim` recording `quantities` values per draw
/// in `value_bytes`-byte values, its chains on the CPU when `cpu_backend`. The limit is
/// config.memory_limit, or available_host_memory() when that is 0. Throws invalid_argument,
/// with the figures, when config.memory_limit is set and the run's fixed part exceeds it (or
/// the trace's diagnostics could not cover even the fewest chains they need).
HostMemoryPlan plan_host_memory(const SampleConfig& config, int dim, int quantities,
                                std::size_t value_bytes, bool cpu_backend);

/// "1.50 GiB", "512 KiB", "12 B".
std::string format_bytes(std::int64_t bytes);

/// Parses a byte count with an optional binary suffix ("64M", "2G", "1.5GiB", "4096"); throws
/// invalid_argument on anything else, naming `what`.
std::int64_t parse_bytes(const std::string& text, const std::string& what);

}  // namespace myriad
