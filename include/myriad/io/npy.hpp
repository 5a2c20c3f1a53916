#pragma once
// NumPy .npy (format version 1.0) writer and a small reader. The format is documented in
// numpy/lib/format.py: the magic string "\x93NUMPY", a version, a little-endian header length
// and a Python dict literal padded so that the data starts at a multiple of 64 bytes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace myriad::io {

/// Element type stored in an .npy file; values are always little-endian IEEE 754.
enum class Dtype {
  float32,  ///< '<f4'
  float64,  ///< '<f8'
};

/// Writes a C-order array of doubles to `path` as '<f8'. `shape` may be empty (a scalar).
/// Throws myriad::invalid_argument for a negative extent and myriad::io_error on I/O failure.
void write_npy(const std::string& path, const double* data, const std::vector<int64_t>& shape);

/// Writes a C-order array of floats to `path` as '<f4'.
void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape);

/// Writes an .npy file incrementally: the header goes out at construction, the values in
/// C order through append(), so that draws can be streamed without holding them all in memory.
/// close() checks that exactly prod(shape) values arrived. A writer that is destroyed without a
/// successful close() removes its file, so an .npy file it leaves behind is always complete.
class NpyWriter {
 public:
  /// Opens `path` (truncating it) and writes the header. Throws myriad::io_error on failure.
  NpyWriter(const std::string& path, std::vector<int64_t> shape, Dtype dtype = Dtype::float64);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  /// Appends `n` values, converting them to the file's dtype. Throws myriad::invalid_argument
  /// if that would exceed prod(shape), myriad::io_error if the write fails.
  void append(const double* values, size_t n);
  /// As above, for float values.
  void append(const float* values, size_t n);

  /// Flushes and closes the file. Throws myriad::io_error (and removes the file) if fewer
  /// values than prod(shape) were appended or if the final flush fails.
  void close();

  /// Number of values appended so far.
  int64_t appended() const { return appended_; }
  /// Number of values the shape calls for.
  int64_t expected() const { return expected_; }

 private:
  template <class T>
  void append_values(const T* values, size_t n);
  void write_bytes(const void* bytes, size_t size);
  void abandon() noexcept;

  std::string path_;
  std::vector<int64_t> shape_;
  Dtype dtype_;
  std::FILE* file_ = nullptr;
  int64_t expected_ = 0;
  int64_t appended_ = 0;
};

/// An array read back from an .npy file: its shape and its values in C order, as doubles.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// Reads an .npy file of dtype '<f8' or '<f4' in C order (format versions 1.0 to 3.0).
/// Throws myriad::io_error if the file cannot be read and myriad::invalid_argument if it is
/// not such an array.
NpyArray read_npy(const std::string& path);

/// The complete .npy header (magic, version, length and padded dict) for `shape` and `dtype`;
/// its size is a multiple of 64 bytes.
std::string npy_header(const std::vector<int64_t>& shape, Dtype dtype);

}  // namespace myriad::io
