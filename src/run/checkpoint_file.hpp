#pragma once
// A run's checkpoint on disk (docs/checkpoints.md): one file, written beside its final name,
// synced and renamed into place, so that a process killed at any moment leaves either the
// previous checkpoint or the new one, whole. Its layout:
//
//   "MYRIADCK"  u32 format version  u64 n  fingerprint (n bytes)  u64 m  state (m bytes)
//   u64 FNV-1a hash of every byte before it
//
// The fingerprint names what the state belongs to (the run's settings, the model's shape and
// the precision): resuming with other settings is refused instead of continuing a different
// run. The state is the scheduler's, as its own serialisation wrote it.

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <sstream>
#include <string>
#include <type_traits>

#include "myriad/run/sample_config.hpp"

namespace myriad::detail {

/// Writes the checkpoint atomically and durably. Throws myriad::io_error naming the path and
/// the reason.
void write_checkpoint_file(const std::string& path, const std::string& fingerprint,
                           const std::string& state);

/// Reads a checkpoint and returns its state. Throws myriad::io_error if the file cannot be read
/// or is not a whole checkpoint of this format, and myriad::invalid_argument if it was written
/// by a run with another fingerprint.
std::string read_checkpoint_file(const std::string& path, const std::string& fingerprint);

/// The bytes of `parts` in cereal's binary archive: a run's fingerprint.
template <class... Parts>
std::string fingerprint_of(const Parts&... parts) {
  std::ostringstream bytes;
  {
    cereal::BinaryOutputArchive archive(bytes);
    archive(parts...);
  }
  return bytes.str();
}

/// Writes a run's checkpoint: `fill(archive)` writes its state into a cereal binary archive.
template <class Fill>
void write_run_checkpoint(const std::string& path, const std::string& fingerprint, Fill fill) {
  std::ostringstream bytes;
  {
    cereal::BinaryOutputArchive archive(bytes);
    fill(archive);
  }
  write_checkpoint_file(path, fingerprint, bytes.str());
}

/// Reads a run's checkpoint: `drain(archive)` reads its state back in the order `fill` wrote it.
template <class Drain>
void read_run_checkpoint(const std::string& path, const std::string& fingerprint, Drain drain) {
  std::istringstream bytes(read_checkpoint_file(path, fingerprint));
  cereal::BinaryInputArchive archive(bytes);
  drain(archive);
}

/// What every resumable run keeps of its result between iterations: the totals, the warm-up's
/// restarts, the superchains, the step size and each phase's time so far.
template <class Archive>
void serialize_result_totals(Archive& archive, SampleResult& r) {
  static_assert(std::is_trivially_copyable_v<IterationStats>);
  archive(cereal::binary_data(&r.warmup_stats, sizeof r.warmup_stats),
          cereal::binary_data(&r.sampling_stats, sizeof r.sampling_stats));
  archive(r.superchains, r.step_size, r.warmup_restarts, r.warmup_restarted_chains,
          r.warmup_stuck_checks, r.warmup_seconds, r.sampling_seconds);
}

}  // namespace myriad::detail
