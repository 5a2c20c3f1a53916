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

#include <string>

namespace myriad::detail {

/// Writes the checkpoint atomically and durably. Throws myriad::io_error naming the path and
/// the reason.
void write_checkpoint_file(const std::string& path, const std::string& fingerprint,
                           const std::string& state);

/// Reads a checkpoint and returns its state. Throws myriad::io_error if the file cannot be read
/// or is not a whole checkpoint of this format, and myriad::invalid_argument if it was written
/// by a run with another fingerprint.
std::string read_checkpoint_file(const std::string& path, const std::string& fingerprint);

}  // namespace myriad::detail
