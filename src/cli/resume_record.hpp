#pragma once
// command.json: what `myriad resume DIR` needs to run an interrupted command again, kept beside
// its checkpoint in the run's resumable staging directory (app/output_directory.hpp). It holds
// the options as given (input files by absolute path) and the size and hash of each input file,
// so that a resumed run refuses data that changed since it started instead of mixing two
// posteriors in one trace.

#include <string>
#include <vector>

namespace myriad::cli {

class CommandLine;

/// Writes `path` (atomically) for `command` ("sample") run with `line`'s options; --data and
/// --init are recorded by absolute path with their size and hash.
void write_resume_record(const std::string& path, const std::string& command,
                         const CommandLine& line);

/// The command and its option words ("--name=value", "--flag") to run again, without --output,
/// --quiet and --no-progress (resume gives its own). Throws myriad::io_error if `path` cannot
/// be read or an input file is missing or changed.
struct ResumeCommand {
  std::string command;
  std::vector<std::string> words;
};
ResumeCommand read_resume_record(const std::string& path);

}  // namespace myriad::cli
