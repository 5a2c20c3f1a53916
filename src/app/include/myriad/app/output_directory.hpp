#pragma once
// The run's output directory (DESIGN.md, "Outputs"). Files are written into a staging directory
// beside the final one and the whole directory is renamed into place when the run completes, so
// that a failed or interrupted run never leaves a directory that looks complete.

#include <array>
#include <string>
#include <vector>

namespace myriad::io {

/// The files a run writes (`myriad sample`: the first three; `myriad ais`: run.json, summary.csv
/// and log_weights, particles, reverse_log_ratios; `myriad mpis`: run.json, summary.csv, draws,
/// particles and marginal_weights; `myriad sbc`: run.json, ranks and sbc.csv; `myriad temper`:
/// run.json, summary.csv and beta). An existing output
/// directory may be replaced only if it holds nothing else, so that a user's unrelated directory is
/// never deleted.
inline constexpr std::array<const char*, 10> kRunFileNames = {"summary.csv",
                                                              "draws.npy",
                                                              "run.json",
                                                              "log_weights.npy",
                                                              "particles.npy",
                                                              "reverse_log_ratios.npy",
                                                              "marginal_weights.npy",
                                                              "ranks.npy",
                                                              "sbc.csv",
                                                              "beta.npy"};

/// The files of an interrupted run's state, kept in its staging directory only (never in a
/// committed output): the checkpoint and the command line that `myriad resume` runs again.
inline constexpr const char* kCheckpointFileName = "checkpoint.bin";
inline constexpr std::array<const char*, 2> kResumeFileNames = {kCheckpointFileName,
                                                                "command.json"};

/// How a run stages its outputs: afresh (a private staging directory, removed if the run ends
/// without commit), or resumable (a fixed staging directory, kept while it holds a checkpoint,
/// that a later process can continue: `myriad sample --checkpoint-every`, `myriad resume`).
enum class Staging { fresh, resumable, resume };

/// A run's output directory, staged until commit().
///
///   OutputDirectory out("results/run1");             // fails here, before any sampling
///   write_summary_csv(out.path("summary.csv"), rows);
///   out.commit();                                     // results/run1 appears complete
///
/// The staging directory is `<parent>/.<name>.partial-<pid>`; a leftover of that name (from a
/// killed process with the same pid) is removed. Missing parent directories are created, and
/// removed again (those still empty) if the run ends without commit().
///
/// A resumable run stages in `<parent>/.<name>.resumable` (resumable_path()), locked (flock)
/// while a process uses it: Staging::resumable creates it and refuses if one is there already (an
/// interrupted run to resume or remove), Staging::resume opens the one an interrupted run left.
/// Without commit() it is kept if it holds checkpoint.bin (the run can go on), else removed.
class OutputDirectory {
 public:
  /// Creates the staging directory for `final_path`. Throws myriad::io_error with a one-line
  /// message naming the path and the reason if it cannot be created, if `final_path` exists and
  /// is not a directory, or if it is a directory holding files other than kRunFileNames.
  explicit OutputDirectory(const std::string& final_path, Staging staging = Staging::fresh);
  /// Removes the staging directory and its contents, and the parents it created, unless
  /// commit() succeeded.
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  /// Staging path of `file_name`, which must be one of kRunFileNames or, for a resumable run,
  /// kResumeFileNames (throws myriad::invalid_argument otherwise); write the file there before
  /// commit().
  std::string path(const std::string& file_name) const;

  /// The staging directory a resumable run of `final_path` uses.
  static std::string resumable_path(const std::string& final_path);

  /// Moves the staging directory to the final path (a resumable run's kResumeFileNames removed
  /// first). A previous run's directory there is renamed
  /// to `<parent>/.<name>.old-<pid>`, replaced, and then deleted; if the final path has since
  /// become a file or gained foreign files, nothing is replaced and myriad::io_error is thrown.
  /// Throws myriad::invalid_argument if called twice.
  void commit();

  /// The directory the run's results end up in.
  const std::string& final_path() const { return final_path_; }
  /// The directory files are written to until commit().
  const std::string& staging_path() const { return staging_path_; }
  /// True once commit() has succeeded.
  bool committed() const { return committed_; }

 private:
  std::string final_path_;
  std::string staging_path_;
  void remove_created_parents() noexcept;
  void open_resumable(bool resume);
  void lock_staging();

  std::string old_path_;
  std::vector<std::string> created_parents_;  ///< deepest first
  bool committed_ = false;
  bool resumable_ = false;
  int lock_ = -1;  ///< a resumable staging directory's descriptor, flock'ed
};

}  // namespace myriad::io
