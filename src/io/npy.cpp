#include "myriad/io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "myriad/core/error.hpp"

// The .npy dtypes written here are '<f4'/'<f8' and the values go out as they are in memory, so
// the host must be little-endian (x86-64 and AArch64 Linux are).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .npy writer assumes little-endian");

namespace myriad::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy aligns the start of the data to 64 bytes (numpy.lib.format.ARRAY_ALIGN) so that it can
// be memory-mapped with any element type aligned.
constexpr size_t kAlignment = 64;

const char* descr(Dtype dtype) { return dtype == Dtype::float32 ? "<f4" : "<f8"; }
size_t item_size(Dtype dtype) { return dtype == Dtype::float32 ? 4 : 8; }

std::string errno_text(int error) { return error != 0 ? std::strerror(error) : "unknown error"; }

/// prod(shape), checking that every extent is non-negative and that the byte count fits.
int64_t element_count(const std::vector<int64_t>& shape, Dtype dtype) {
  const int64_t max_elements = std::numeric_limits<int64_t>::max() / int64_t(item_size(dtype));
  int64_t count = 1;
  for (const int64_t extent : shape) {
    MYRIAD_EXPECTS(extent >= 0, ".npy shape extents must be non-negative, got ", extent);
    if (extent != 0 && count > max_elements / extent) {
      throw invalid_argument(".npy shape is too large: its byte count overflows 64 bits");
    }
    count *= extent;
  }
  return count;
}

/// Python tuple literal of the shape: "()", "(5,)" or "(2, 3, 4)".
std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) tuple += ", ";
    tuple += std::to_string(shape[i]);
  }
  if (shape.size() == 1) tuple += ",";
  return tuple + ")";
}

// --- reading -------------------------------------------------------------------------------

[[noreturn]] void bad_file(const std::string& path, const std::string& why) {
  throw invalid_argument("'" + path + "' is not a supported .npy file: " + why);
}

std::string read_whole_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw io_error("cannot open '" + path + "' for reading: " + errno_text(errno));
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.append(buffer, got);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) throw io_error("cannot read '" + path + "': " + errno_text(error));
  return bytes;
}

/// Position just after `'key':` (and any spaces) in the header dict.
size_t find_value(const std::string& path, const std::string& header, const char* key) {
  const std::string quoted = std::string("'") + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) bad_file(path, std::string("header has no '") + key + "' key");
  at += quoted.size();
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size() || header[at] != ':') bad_file(path, "malformed header dict");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  return at;
}

std::string parse_descr(const std::string& path, const std::string& header) {
  size_t at = find_value(path, header, "descr");
  if (at >= header.size() || (header[at] != '\'' && header[at] != '"')) {
    bad_file(path, "'descr' is not a string (structured dtypes are not supported)");
  }
  const size_t end = header.find(header[at], at + 1);
  if (end == std::string::npos) bad_file(path, "unterminated 'descr'");
  return header.substr(at + 1, end - at - 1);
}

bool parse_fortran_order(const std::string& path, const std::string& header) {
  const size_t at = find_value(path, header, "fortran_order");
  if (header.compare(at, 4, "True") == 0) return true;
  if (header.compare(at, 5, "False") == 0) return false;
  bad_file(path, "'fortran_order' is neither True nor False");
}

std::vector<int64_t> parse_shape(const std::string& path, const std::string& header) {
  size_t at = find_value(path, header, "shape");
  if (at >= header.size() || header[at] != '(') bad_file(path, "'shape' is not a tuple");
  const size_t end = header.find(')', at);
  if (end == std::string::npos) bad_file(path, "unterminated 'shape'");
  std::vector<int64_t> shape;
  ++at;
  while (at < end) {
    while (at < end && (header[at] == ' ' || header[at] == ',')) ++at;
    if (at == end) break;
    int64_t extent = 0;
    bool any_digit = false;
    for (; at < end && header[at] >= '0' && header[at] <= '9'; ++at) {
      if (extent > (std::numeric_limits<int64_t>::max() - 9) / 10) bad_file(path, "huge extent");
      extent = extent * 10 + (header[at] - '0');
      any_digit = true;
    }
    if (at < end && header[at] == 'L') ++at;  // Python 2 era files write extents as "3L"
    if (!any_digit || (at < end && header[at] != ',' && header[at] != ' ')) {
      bad_file(path, "'shape' holds something other than non-negative integers");
    }
    shape.push_back(extent);
  }
  return shape;
}

template <class T>
void decode_values(const char* bytes, int64_t count, std::vector<double>& values) {
  values.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * int64_t(sizeof(T)), sizeof(T));
    values[size_t(i)] = double(value);
  }
}

}  // namespace

std::string npy_header(const std::vector<int64_t>& shape, Dtype dtype) {
  element_count(shape, dtype);  // validates the extents
  std::string dict = std::string("{'descr': '") + descr(dtype) +
                     "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  // magic (6) + version (2) + header length (2) + dict + padding + '\n' ≡ 0 (mod 64).
  const size_t unpadded = kMagicSize + 2 + 2 + dict.size() + 1;
  dict.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  dict += '\n';
  if (dict.size() > std::numeric_limits<uint16_t>::max()) {
    throw invalid_argument(".npy shape has too many dimensions for a version 1.0 header");
  }
  std::string header(kMagic, kMagicSize);
  header += char(1);  // major version
  header += char(0);  // minor version
  header += char(dict.size() & 0xff);
  header += char(dict.size() >> 8);
  return header + dict;
}

NpyWriter::NpyWriter(const std::string& path, std::vector<int64_t> shape, Dtype dtype)
    : path_(path), shape_(std::move(shape)), dtype_(dtype) {
  const std::string header = npy_header(shape_, dtype_);
  expected_ = element_count(shape_, dtype_);
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw io_error("cannot open '" + path_ + "' for writing: " + errno_text(errno));
  }
  // Draws arrive in many small appends; a large buffer turns them into few write(2) calls.
  std::setvbuf(file_, nullptr, _IOFBF, size_t(1) << 20);
  try {
    write_bytes(header.data(), header.size());
  } catch (...) {
    abandon();
    throw;
  }
}

NpyWriter::~NpyWriter() { abandon(); }

void NpyWriter::append(const double* values, size_t n) { append_values(values, n); }

void NpyWriter::append(const float* values, size_t n) { append_values(values, n); }

template <class T>
void NpyWriter::append_values(const T* values, size_t n) {
  if (file_ == nullptr) throw io_error("cannot append to '" + path_ + "': the writer is closed");
  MYRIAD_EXPECTS(n <= size_t(expected_ - appended_), "appending ", n, " values to '", path_,
                 "' would exceed its shape ", shape_tuple(shape_), " (", appended_, " of ",
                 expected_, " values written)");
  if (n == 0) return;
  const auto write_as = [&](auto stored_type_tag) {
    using Stored = decltype(stored_type_tag);
    if constexpr (std::is_same_v<Stored, T>) {
      write_bytes(values, n * sizeof(T));
    } else {
      // Convert through a small buffer instead of a copy of the whole block.
      constexpr size_t kChunk = 4096;
      Stored buffer[kChunk];
      for (size_t start = 0; start < n; start += kChunk) {
        const size_t count = std::min(kChunk, n - start);
        for (size_t i = 0; i < count; ++i) buffer[i] = Stored(values[start + i]);
        write_bytes(buffer, count * sizeof(Stored));
      }
    }
  };
  if (dtype_ == Dtype::float32) {
    write_as(float{});
  } else {
    write_as(double{});
  }
  appended_ += int64_t(n);
}

void NpyWriter::write_bytes(const void* bytes, size_t size) {
  errno = 0;
  if (std::fwrite(bytes, 1, size, file_) != size) {
    throw io_error("cannot write '" + path_ + "': " + errno_text(errno));
  }
}

void NpyWriter::close() {
  if (file_ == nullptr) throw io_error("cannot close '" + path_ + "': the writer is closed");
  if (appended_ != expected_) {
    const std::string message = "incomplete .npy file '" + path_ + "': shape " +
                                shape_tuple(shape_) + " needs " + std::to_string(expected_) +
                                " values, " + std::to_string(appended_) + " were written";
    abandon();
    throw io_error(message);
  }
  // A full disk often shows only when the buffer is flushed, so both results are checked.
  errno = 0;
  bool ok = std::fflush(file_) == 0;
  int error = ok ? 0 : errno;
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    error = errno;
  }
  file_ = nullptr;
  if (!ok) {
    std::remove(path_.c_str());
    throw io_error("cannot write '" + path_ + "': " + errno_text(error));
  }
}

void NpyWriter::abandon() noexcept {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  std::remove(path_.c_str());
}

void write_npy(const std::string& path, const double* data, const std::vector<int64_t>& shape) {
  NpyWriter writer(path, shape, Dtype::float64);
  writer.append(data, size_t(writer.expected()));
  writer.close();
}

void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  NpyWriter writer(path, shape, Dtype::float32);
  writer.append(data, size_t(writer.expected()));
  writer.close();
}

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_whole_file(path);
  if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    bad_file(path, "missing the \\x93NUMPY magic string");
  }
  const auto byte = [&](size_t i) { return size_t(static_cast<unsigned char>(bytes[i])); };
  const size_t major = byte(kMagicSize);
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = byte(8) | byte(9) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad_file(path, "truncated header");
    header_length = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_start = 12;
  } else {
    bad_file(path, "unknown format version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_length) bad_file(path, "truncated header");
  const std::string header = bytes.substr(header_start, header_length);

  const std::string type = parse_descr(path, header);
  if (type != "<f8" && type != "<f4") {
    bad_file(path, "dtype '" + type + "' is not '<f8' or '<f4'");
  }
  if (parse_fortran_order(path, header)) bad_file(path, "Fortran order is not supported");
  NpyArray array;
  array.shape = parse_shape(path, header);
  const Dtype dtype = type == "<f8" ? Dtype::float64 : Dtype::float32;
  int64_t count = 0;
  try {
    count = element_count(array.shape, dtype);
  } catch (const invalid_argument& error) {
    bad_file(path, error.what());
  }
  const size_t data_start = header_start + header_length;
  const size_t data_size = size_t(count) * item_size(dtype);
  if (bytes.size() - data_start != data_size) {
    bad_file(path, "holds " + std::to_string(bytes.size() - data_start) +
                       " data bytes, its shape needs " + std::to_string(data_size));
  }
  if (dtype == Dtype::float64) {
    decode_values<double>(bytes.data() + data_start, count, array.values);
  } else {
    decode_values<float>(bytes.data() + data_start, count, array.values);
  }
  return array;
}

}  // namespace myriad::io
