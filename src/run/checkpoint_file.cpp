#include "checkpoint_file.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "myriad/core/error.hpp"
#include "myriad/io/atomic_file.hpp"

namespace myriad::detail {

namespace {

constexpr char kMagic[8] = {'M', 'Y', 'R', 'I', 'A', 'D', 'C', 'K'};
/// Raised whenever the state's layout changes: an older checkpoint is refused, not misread.
constexpr std::uint32_t kFormatVersion = 2;  // 2: IterationStats counts the slice samplers

std::uint64_t fnv1a(const char* bytes, std::size_t size) {
  std::uint64_t hash = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}

template <class Integer>
void put(std::string& out, Integer value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <class Integer>
bool take(const std::string& in, std::size_t& at, Integer& value) {
  if (in.size() - at < sizeof value) return false;
  std::memcpy(&value, in.data() + at, sizeof value);
  at += sizeof value;
  return true;
}

bool take_bytes(const std::string& in, std::size_t& at, std::string& value) {
  std::uint64_t size = 0;
  if (!take(in, at, size) || in.size() - at < size) return false;
  value.assign(in, at, size);
  at += size;
  return true;
}

}  // namespace

void write_checkpoint_file(const std::string& path, const std::string& fingerprint,
                           const std::string& state) {
  std::string file(kMagic, sizeof kMagic);
  put(file, kFormatVersion);
  put(file, std::uint64_t(fingerprint.size()));
  file += fingerprint;
  put(file, std::uint64_t(state.size()));
  file += state;
  put(file, fnv1a(file.data(), file.size()));
  io::write_text_file_atomically(path, file, /*durable=*/true);
}

std::string read_checkpoint_file(const std::string& path, const std::string& fingerprint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error("cannot read checkpoint '" + path + "'");
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bad = [&](const std::string& why) {
    return io_error("'" + path + "' is not a usable checkpoint: " + why);
  };
  if (file.size() < sizeof kMagic + 8 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    throw bad("not a myriad checkpoint");
  std::uint64_t stored_hash = 0;
  std::memcpy(&stored_hash, file.data() + file.size() - 8, 8);
  if (fnv1a(file.data(), file.size() - 8) != stored_hash) throw bad("truncated or damaged");
  const std::string body = file.substr(0, file.size() - 8);
  std::size_t at = sizeof kMagic;
  std::uint32_t version = 0;
  std::string stored_fingerprint, state;
  if (!take(body, at, version)) throw bad("truncated");
  if (version != kFormatVersion)
    throw bad("written by another version of myriad (checkpoint format " + std::to_string(version) +
              ", this one reads " + std::to_string(kFormatVersion) + ")");
  if (!take_bytes(body, at, stored_fingerprint) || !take_bytes(body, at, state) ||
      at != body.size())
    throw bad("truncated");
  if (stored_fingerprint != fingerprint)
    throw invalid_argument("checkpoint '" + path +
                           "' was written by a run with other settings or another model; resume "
                           "it with the settings it was started with");
  return state;
}

}  // namespace myriad::detail
