#pragma once
// Whole-file writes that readers never see half done: summary.csv (io/summary_csv.hpp), and the
// command line's run.json.

#include <string>

namespace myriad::io {

/// Writes `contents` to `path` through a temporary file in the same directory
/// (`<path>.tmp-<pid>`) renamed over `path` once complete, so that readers see either the old
/// file or the whole new one. `durable`: the file and then its directory are synced (fsync)
/// around the rename, so that the new file survives a crash of the machine too (a
/// checkpoint). Throws myriad::io_error naming the path and the reason.
void write_text_file_atomically(const std::string& path, const std::string& contents,
                                bool durable = false);

}  // namespace myriad::io
