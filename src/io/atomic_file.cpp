#include "myriad/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "myriad/core/error.hpp"

namespace myriad::io {

void write_text_file_atomically(const std::string& path, const std::string& contents,
                                bool durable) {
  const std::string temporary = path + ".tmp-" + std::to_string(long(::getpid()));
  const auto fail = [&](int error_number) {
    std::remove(temporary.c_str());
    throw io_error("cannot write '" + path +
                   "': " + (error_number != 0 ? std::strerror(error_number) : "unknown error"));
  };
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) fail(errno);
  errno = 0;
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size() &&
            std::fflush(file) == 0 && (!durable || ::fsync(::fileno(file)) == 0);
  int error_number = ok ? 0 : errno;
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    error_number = errno;
  }
  if (!ok) fail(error_number);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(errno);
  if (durable) {
    // The rename is durable once the directory's entry is.
    const std::string directory = std::filesystem::path(path).parent_path().string();
    const int descriptor =
        ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = descriptor >= 0 && ::fsync(descriptor) == 0;
    const int sync_error = synced ? 0 : errno;
    if (descriptor >= 0) ::close(descriptor);
    if (!synced)
      throw io_error("cannot sync the directory of '" + path + "': " + std::strerror(sync_error));
  }
}

}  // namespace myriad::io
