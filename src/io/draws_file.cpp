#include "myriad/io/draws_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/io/npy.hpp"

namespace myriad::io {

namespace {

constexpr std::int64_t kValueBytes = sizeof(double);

/// Moves all `size` bytes through `transfer(done)` (a pwrite or pread of the bytes from `done`
/// on), through short transfers and interrupted calls (the CLI's SIGINT handler interrupts
/// system calls). Returns 0 or the errno of the failure (EIO for a file that ends early).
template <class Transfer>
int transfer_all(std::size_t size, Transfer transfer) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t moved = transfer(done);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EIO;
    done += static_cast<std::size_t>(moved);
  }
  return 0;
}

int write_at(int descriptor, const void* bytes, std::size_t size, std::int64_t offset) {
  return transfer_all(size, [&](std::size_t done) {
    return ::pwrite(descriptor, static_cast<const char*>(bytes) + done, size - done,
                    static_cast<off_t>(offset + std::int64_t(done)));
  });
}

int read_at(int descriptor, void* bytes, std::size_t size, std::int64_t offset) {
  return transfer_all(size, [&](std::size_t done) {
    return ::pread(descriptor, static_cast<char*>(bytes) + done, size - done,
                   static_cast<off_t>(offset + std::int64_t(done)));
  });
}

std::string shape_text(std::int64_t chains, std::int64_t draws, std::int64_t quantities) {
  return std::to_string(chains) + " x " + std::to_string(draws) + " x " +
         std::to_string(quantities);
}

void check_shape(std::int64_t chains, std::int64_t draws, std::int64_t quantities) {
  MYRIAD_EXPECTS(chains >= 0 && draws >= 0 && quantities >= 0,
                 "draws file shape must be non-negative, got ",
                 shape_text(chains, draws, quantities));
}

}  // namespace

DrawsFile::DrawsFile(std::string path, int descriptor, std::int64_t header_bytes,
                     std::int64_t chains, std::int64_t draws, std::int64_t quantities)
    : path_(std::move(path)),
      descriptor_(descriptor),
      header_bytes_(header_bytes),
      chains_(chains),
      draws_(draws),
      quantities_(quantities) {}

DrawsFile DrawsFile::create(const std::string& path, std::int64_t chains, std::int64_t draws,
                            std::int64_t quantities) {
  check_shape(chains, draws, quantities);
  const int descriptor = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (descriptor < 0) throw io_error("cannot create '" + path + "': " + std::strerror(errno));
  const std::string header = npy_header({chains, draws, quantities}, Dtype::float64);
  DrawsFile file(path, descriptor, static_cast<std::int64_t>(header.size()), chains, draws,
                 quantities);
  // Reserve the whole file now: a full disk fails here, before any sampling. Filesystems
  // without fallocate get a sparse file (and would fail at a write instead).
  const std::int64_t bytes = file.file_bytes();
  if (bytes > 0 && ::fallocate(descriptor, 0, 0, static_cast<off_t>(bytes)) != 0) {
    const int error_number = errno;
    if (error_number != EOPNOTSUPP && error_number != ENOSYS) {
      throw io_error("cannot allocate '" + path + "' (" + std::to_string(bytes) + " bytes for " +
                     shape_text(chains, draws, quantities) +
                     " draws): " + std::strerror(error_number));
    }
    if (::ftruncate(descriptor, static_cast<off_t>(bytes)) != 0) file.fail("size", errno);
  }
  if (const int error_number = write_at(descriptor, header.data(), header.size(), 0))
    file.fail("write the header of", error_number);
  return file;
}

DrawsFile DrawsFile::open_existing(const std::string& path, std::int64_t chains, std::int64_t draws,
                                   std::int64_t quantities) {
  check_shape(chains, draws, quantities);
  const int descriptor = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (descriptor < 0) throw io_error("cannot open '" + path + "': " + std::strerror(errno));
  const std::string header = npy_header({chains, draws, quantities}, Dtype::float64);
  DrawsFile file(path, descriptor, static_cast<std::int64_t>(header.size()), chains, draws,
                 quantities);
  std::string found(header.size(), '\0');
  const int error_number = read_at(descriptor, found.data(), found.size(), 0);
  const off_t end = ::lseek(descriptor, 0, SEEK_END);
  if (error_number != 0 || found != header || end != static_cast<off_t>(file.file_bytes())) {
    throw io_error("'" + path + "' is not the float64 draws file of shape " +
                   shape_text(chains, draws, quantities) + " this run writes");
  }
  return file;
}

DrawsFile::DrawsFile(DrawsFile&& other) noexcept
    : path_(std::move(other.path_)),
      descriptor_(std::exchange(other.descriptor_, -1)),
      header_bytes_(other.header_bytes_),
      chains_(other.chains_),
      draws_(other.draws_),
      quantities_(other.quantities_) {}

DrawsFile& DrawsFile::operator=(DrawsFile&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    path_ = std::move(other.path_);
    descriptor_ = std::exchange(other.descriptor_, -1);
    header_bytes_ = other.header_bytes_;
    chains_ = other.chains_;
    draws_ = other.draws_;
    quantities_ = other.quantities_;
  }
  return *this;
}

DrawsFile::~DrawsFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

std::int64_t DrawsFile::file_bytes() const {
  return header_bytes_ + chains_ * draws_ * quantities_ * kValueBytes;
}

void DrawsFile::fail(const char* action, int error_number) const {
  throw io_error(std::string("cannot ") + action + " '" + path_ +
                 "': " + std::strerror(error_number));
}

void DrawsFile::write_draws(std::int64_t first_draw, std::int64_t count, const double* values) {
  MYRIAD_EXPECTS(descriptor_ >= 0, "draws file '", path_, "' is closed");
  MYRIAD_EXPECTS(first_draw >= 0 && count >= 0 && first_draw + count <= draws_, "draws ",
                 first_draw, " + ", count, " exceed the file's ", draws_);
  const auto slab = static_cast<std::size_t>(count * quantities_ * kValueBytes);
  for (std::int64_t c = 0; c < chains_; ++c) {
    const std::int64_t offset =
        header_bytes_ + ((c * draws_ + first_draw) * quantities_) * kValueBytes;
    if (const int error_number =
            write_at(descriptor_, values + c * count * quantities_, slab, offset))
      fail("write", error_number);
  }
}

void DrawsFile::read_quantities(std::int64_t first, std::int64_t count, std::int64_t chains,
                                double* values) const {
  MYRIAD_EXPECTS(descriptor_ >= 0, "draws file '", path_, "' is closed");
  MYRIAD_EXPECTS(first >= 0 && count >= 0 && first + count <= quantities_, "quantities ", first,
                 " + ", count, " exceed the file's ", quantities_);
  MYRIAD_EXPECTS(chains >= 0 && chains <= chains_, chains, " chains requested of the file's ",
                 chains_);
  // A chain's draws are one contiguous slab: read it whole, keep the block's columns.
  std::vector<double> chain(static_cast<std::size_t>(draws_ * quantities_));
  for (std::int64_t c = 0; c < chains; ++c) {
    const std::int64_t offset = header_bytes_ + c * draws_ * quantities_ * kValueBytes;
    if (const int error_number =
            read_at(descriptor_, chain.data(), chain.size() * kValueBytes, offset))
      fail("read", error_number);
    double* out = values + c * draws_ * count;
    for (std::int64_t i = 0; i < draws_; ++i)
      for (std::int64_t q = 0; q < count; ++q)
        out[i * count + q] = chain[static_cast<std::size_t>(i * quantities_ + first + q)];
  }
}

void DrawsFile::sync() {
  MYRIAD_EXPECTS(descriptor_ >= 0, "draws file '", path_, "' is closed");
  if (::fdatasync(descriptor_) != 0) fail("flush", errno);
}

void DrawsFile::close() {
  if (descriptor_ < 0) return;
  sync();
  const int descriptor = std::exchange(descriptor_, -1);
  if (::close(descriptor) != 0) fail("close", errno);
}

}  // namespace myriad::io
