#pragma once
// Host-side error types. Device code never throws (DESIGN.md, rule 8): it writes per-chain
// status codes that the host counts. These exceptions are for misuse at API boundaries.

#include <sstream>
#include <stdexcept>
#include <string>

namespace myriad {

/// Invalid input at an API boundary: a bad configuration value, bad data, an unknown name.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A requested capability is absent: no CUDA device, a build without CUDA.
class unavailable_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A CUDA runtime, cuBLAS or cuSOLVER call failed; the message names call, file and line.
class cuda_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writing results failed (unwritable directory, disk full).
class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run stopped on request (SampleConfig::checkpoint.stop_requested: SIGINT or SIGTERM in the
/// CLI) after writing its checkpoint; the message says where the run stood. Resume it with
/// SampleConfig::checkpoint.resume (the CLI: `myriad resume DIR`).
class interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace myriad

/// Guards a precondition; the message should name the offending value, e.g.
/// MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains).
#define MYRIAD_EXPECTS(cond, ...)                                         \
  do {                                                                    \
    if (!(cond)) throw ::myriad::invalid_argument(::myriad::detail::concat(__VA_ARGS__)); \
  } while (0)
