#include "myriad/app/output_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "myriad/core/error.hpp"

namespace myriad::io {
namespace {

namespace fs = std::filesystem;

std::string pid_suffix() { return std::to_string(long(::getpid())); }

bool is_run_file(const std::string& name) {
  return std::any_of(kRunFileNames.begin(), kRunFileNames.end(),
                     [&](const char* run_file) { return name == run_file; });
}

bool is_resume_file(const std::string& name) {
  return std::any_of(kResumeFileNames.begin(), kResumeFileNames.end(),
                     [&](const char* file) { return name == file; });
}

[[noreturn]] void cannot_create(const std::string& path, const std::string& reason) {
  throw io_error("cannot create output directory '" + path + "': " + reason);
}

/// Checks that `final_path` either does not exist or is a directory holding only a previous
/// run's files, which are the only ones a commit may delete. Returns whether it exists.
bool check_replaceable(const fs::path& final_path) {
  const std::string shown = final_path.string();
  std::error_code error;
  const fs::file_status status = fs::status(final_path, error);
  // "Not found" includes a missing or non-directory parent; creating the parent reports that.
  if (status.type() == fs::file_type::not_found) return false;
  if (error) cannot_create(shown, error.message());
  if (!fs::is_directory(status)) cannot_create(shown, "it exists and is not a directory");
  fs::directory_iterator entries(final_path, error);
  for (; !error && entries != fs::directory_iterator(); entries.increment(error)) {
    const std::string name = entries->path().filename().string();
    if (!is_run_file(name) || !entries->is_regular_file()) {
      throw io_error("output directory '" + shown + "' exists and holds other files (such as '" +
                     name + "'); choose a new directory");
    }
  }
  if (error) cannot_create(shown, error.message());
  return true;
}

/// The directory `final_path` names ("runs/a/" names "runs/a"); throws if it names none.
fs::path output_target(const std::string& final_path) {
  if (final_path.empty()) cannot_create(final_path, "the path is empty");
  fs::path target(final_path);
  while (!target.has_filename() && target.has_relative_path()) target = target.parent_path();
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    cannot_create(final_path, "the path must end in a directory name");
  }
  return target;
}

fs::path parent_of(const fs::path& target) {
  const fs::path parent = target.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

std::string OutputDirectory::resumable_path(const std::string& final_path) {
  const fs::path target = output_target(final_path);
  return (parent_of(target) / ("." + target.filename().string() + ".resumable")).string();
}

OutputDirectory::OutputDirectory(const std::string& final_path, Staging staging_kind)
    : resumable_(staging_kind != Staging::fresh) {
  const fs::path target = output_target(final_path);
  const std::string name = target.filename().string();
  final_path_ = target.string();
  check_replaceable(target);

  const fs::path parent = parent_of(target);
  std::error_code error;
  old_path_ = (parent / ("." + name + ".old-" + pid_suffix())).string();
  if (resumable_) {
    open_resumable(staging_kind == Staging::resume);
    return;
  }
  // The missing ancestors, deepest first: a run that fails removes them again (if still empty).
  for (fs::path missing = parent; !missing.empty() && !fs::exists(missing, error) && !error;
       missing = missing.parent_path()) {
    created_parents_.push_back(missing.string());
    if (!missing.has_relative_path()) break;  // the root
  }
  fs::create_directories(parent, error);
  if (error) {
    remove_created_parents();
    cannot_create(final_path_, error.message());
  }

  const fs::path staging = parent / ("." + name + ".partial-" + pid_suffix());
  staging_path_ = staging.string();
  // A directory of this name can only be the leftover of a killed process with our pid.
  fs::remove_all(staging, error);
  if (error || !fs::create_directory(staging, error) || error) {
    const std::string reason = error ? error.message() : "staging directory already exists";
    remove_created_parents();
    cannot_create(final_path_, reason);
  }
}

void OutputDirectory::open_resumable(bool resume) {
  staging_path_ = resumable_path(final_path_);
  std::error_code error;
  bool exists = fs::exists(staging_path_, error);
  if (!resume && exists && !fs::exists(fs::path(staging_path_) / kCheckpointFileName, error)) {
    // Left by a run killed before its first checkpoint: nothing to resume. Removed, unless a
    // process still holds it.
    lock_staging();
    fs::remove_all(staging_path_, error);
    ::close(std::exchange(lock_, -1));
    if (error) cannot_create(final_path_, error.message());
    exists = false;
  }
  if (resume && !exists) {
    throw io_error("no interrupted run to resume at '" + final_path_ + "' (no '" + staging_path_ +
                   "')");
  }
  if (!resume && exists) {
    throw io_error("an interrupted run of '" + final_path_ + "' is kept in '" + staging_path_ +
                   "': continue it with 'myriad resume " + final_path_ +
                   "', or remove that directory to start afresh");
  }
  if (!resume) {
    // Missing ancestors are created and kept: an interrupted run's state lives among them.
    fs::create_directories(parent_of(fs::path(final_path_)), error);
    if (error || !fs::create_directory(staging_path_, error) || error)
      cannot_create(final_path_, error ? error.message() : "staging directory already exists");
  }
  lock_staging();
}

void OutputDirectory::lock_staging() {
  // One process at a time: a second `myriad resume` of a run that is still going is refused.
  lock_ = ::open(staging_path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_ < 0) cannot_create(final_path_, std::strerror(errno));
  if (::flock(lock_, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    ::close(lock_);
    lock_ = -1;
    throw io_error(
        "'" + staging_path_ + "' is in use by another myriad process" +
        (error_number == EWOULDBLOCK ? "" : std::string(": ") + std::strerror(error_number)));
  }
}

OutputDirectory::~OutputDirectory() {
  if (lock_ >= 0) ::close(lock_);  // releases the flock
  if (committed_) return;
  std::error_code ignored;  // a destructor must not throw; a leftover is harmless (hidden)
  // A resumable run's state stays while there is a checkpoint to continue from.
  if (resumable_ && fs::exists(fs::path(staging_path_) / kCheckpointFileName, ignored)) return;
  fs::remove_all(staging_path_, ignored);
  remove_created_parents();
}

void OutputDirectory::remove_created_parents() noexcept {
  std::error_code ignored;  // fs::remove leaves a directory that has gained entries
  for (const std::string& directory : created_parents_) fs::remove(directory, ignored);
}

std::string OutputDirectory::path(const std::string& file_name) const {
  MYRIAD_EXPECTS(is_run_file(file_name) || (resumable_ && is_resume_file(file_name)), "'",
                 file_name, "' is not one of the files a run writes");
  return (fs::path(staging_path_) / file_name).string();
}

void OutputDirectory::commit() {
  MYRIAD_EXPECTS(!committed_, "output directory '", final_path_, "' was already committed");
  // Checked again: the user may have put files there while the run was sampling.
  const bool replacing = check_replaceable(final_path_);
  std::error_code error;
  for (const char* file : kResumeFileNames) {
    if (!resumable_) break;
    fs::remove(fs::path(staging_path_) / file, error);
    if (error)
      throw io_error("cannot remove '" + staging_path_ + "/" + file + "': " + error.message());
  }
  if (replacing) {
    fs::remove_all(old_path_, error);
    if (!error) fs::rename(final_path_, old_path_, error);
    if (error) {
      throw io_error("cannot replace output directory '" + final_path_ + "': " + error.message());
    }
  }
  fs::rename(staging_path_, final_path_, error);
  if (error) {
    const std::string reason = error.message();
    if (replacing) fs::rename(old_path_, final_path_, error);  // put the previous run back
    throw io_error("cannot move results into output directory '" + final_path_ + "': " + reason);
  }
  committed_ = true;
  // The previous run is gone from the final path already; failing to delete its hidden copy
  // leaves only clutter, not a wrong result, so it is not an error.
  if (replacing) fs::remove_all(old_path_, error);
}

}  // namespace myriad::io
