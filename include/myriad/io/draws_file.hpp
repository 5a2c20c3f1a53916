#pragma once
// A run's trace on disk: draws.npy, a float64 array of shape (chains, draws, quantities) in C
// order (DESIGN.md, "Outputs"), written chunk by chunk as sampling proceeds and read back in
// blocks of quantities for the diagnostics, so that host memory does not grow with the trace.
//
// Chunks arrive in draw order while the file is chain-major: each chunk is one positioned write
// per chain (its draws of the chunk are contiguous in the file). The whole file is allocated when
// it is created, so that a disk without room for the trace fails then, with the size it needs,
// rather than hours into the run.

#include <cstdint>
#include <string>

namespace myriad::io {

class DrawsFile {
 public:
  /// Creates (truncating) `path` for chains × draws × quantities float64 values: writes the .npy
  /// header and allocates the file's full size. Throws myriad::io_error naming the path, the
  /// size and the reason (e.g. "No space left on device").
  static DrawsFile create(const std::string& path, std::int64_t chains, std::int64_t draws,
                          std::int64_t quantities);
  /// Opens an existing file of that shape to write the rest of it (a resumed run). Throws
  /// myriad::io_error if it is missing, not such an .npy file or of another shape.
  static DrawsFile open_existing(const std::string& path, std::int64_t chains, std::int64_t draws,
                                 std::int64_t quantities);

  DrawsFile(DrawsFile&& other) noexcept;
  DrawsFile& operator=(DrawsFile&& other) noexcept;
  DrawsFile(const DrawsFile&) = delete;
  DrawsFile& operator=(const DrawsFile&) = delete;
  ~DrawsFile();

  /// Writes draws first_draw … first_draw + count − 1 of every chain from `values`, laid out
  /// [chain][count][quantity]. Throws myriad::io_error naming the file and the reason.
  void write_draws(std::int64_t first_draw, std::int64_t count, const double* values);
  /// Reads quantities first … first + count − 1 of every draw of the first `chains` chains into
  /// `values`, laid out [chain][draw][count] (a block for the diagnostics).
  void read_quantities(std::int64_t first, std::int64_t count, std::int64_t chains,
                       double* values) const;
  /// Makes everything written so far durable (fdatasync): a checkpoint is written only after
  /// the draws it counts as done are on disk.
  void sync();
  /// sync() and close; further writes are an error. Throws myriad::io_error on failure.
  void close();

  const std::string& path() const { return path_; }
  std::int64_t chains() const { return chains_; }
  std::int64_t draws() const { return draws_; }
  std::int64_t quantities() const { return quantities_; }
  /// Bytes of the whole file (header and values).
  std::int64_t file_bytes() const;

 private:
  DrawsFile(std::string path, int descriptor, std::int64_t header_bytes, std::int64_t chains,
            std::int64_t draws, std::int64_t quantities);
  [[noreturn]] void fail(const char* action, int error_number) const;

  std::string path_;
  int descriptor_ = -1;
  std::int64_t header_bytes_ = 0;
  std::int64_t chains_ = 0, draws_ = 0, quantities_ = 0;
};

}  // namespace myriad::io
