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
/// particles and marginal_weights; `myriad sbc`: run.json, ranks and sbc.csv). An existing output
/// directory may be replaced only if it holds nothing else, so that a user's unrelated directory is
/// never deleted.
inline constexpr std::array<const char*, 9> kRunFileNames = {
    "summary.csv",          "draws.npy",     "run.json",
    "log_weights.npy",      "particles.npy", "reverse_log_ratios.npy",
    "marginal_weights.npy", "ranks.npy",     "sbc.csv"};

/// A run's output directory, staged until commit().
///
///   OutputDirectory out("results/run1");             // fails here, before any sampling
///   write_summary_csv(out.path("summary.csv"), rows);
///   out.commit();                                     // results/run1 appears complete
///
/// The staging directory is `<parent>/.<name>.partial-<pid>`; a leftover of that name (from a
/// killed process with the same pid) is removed. Missing parent directories are created, and
/// removed again (those still empty) if the run ends without commit().
class OutputDirectory {
 public:
  /// Creates the staging directory for `final_path`. Throws myriad::io_error with a one-line
  /// message naming the path and the reason if it cannot be created, if `final_path` exists and
  /// is not a directory, or if it is a directory holding files other than kRunFileNames.
  explicit OutputDirectory(const std::string& final_path);
  /// Removes the staging directory and its contents, and the parents it created, unless
  /// commit() succeeded.
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  /// Staging path of `file_name`, which must be one of kRunFileNames (throws
  /// myriad::invalid_argument otherwise); write the file there before commit().
  std::string path(const std::string& file_name) const;

  /// Moves the staging directory to the final path. A previous run's directory there is renamed
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

  std::string old_path_;
  std::vector<std::string> created_parents_;  ///< deepest first
  bool committed_ = false;
};

}  // namespace myriad::io
