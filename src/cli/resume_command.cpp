// `myriad resume DIR`: continues a run that `myriad sample --checkpoint-every` started with
// --output DIR and that was stopped (SIGINT, SIGTERM) or killed: the same command again, from
// its last checkpoint, with draws and outputs bit for bit those of an uninterrupted run.

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "myriad/app/output_directory.hpp"
#include "myriad/core/error.hpp"
#include "resume_record.hpp"

namespace myriad::cli {

int resume_command(int argc, char** argv) {
  CommandLine line("resume", {{"no-progress", "", "", "no progress bar"},
                              {"quiet", "", "", "print nothing on success"},
                              {"help", "", "", "show this help"}});
  const bool has_directory = argc >= 3 && std::string(argv[2]).rfind("--", 0) != 0;
  line.parse(argc, argv, has_directory ? 3 : 2);
  if (line.flag("help")) {
    std::cout << "usage: myriad resume DIR [options]\n\n"
                 "Continues the interrupted run of 'myriad sample --checkpoint-every N --output "
                 "DIR'\nfrom its last checkpoint.\n\n"
              << line.help();
    return 0;
  }
  if (!has_directory) throw UsageError{"resume needs the interrupted run's --output directory"};
  const std::string directory = argv[2];
  const std::string staging = io::OutputDirectory::resumable_path(directory);
  if (!std::filesystem::is_directory(staging))
    throw io_error("no interrupted run to resume at '" + directory + "' (no '" + staging + "')");
  const ResumeCommand command =
      read_resume_record((std::filesystem::path(staging) / "command.json").string());
  if (command.command != "sample")
    throw io_error("cannot resume a '" + command.command + "' command");

  std::vector<std::string> words = {argv[0], command.command};
  words.insert(words.end(), command.words.begin(), command.words.end());
  words.push_back("--output=" + directory);
  if (line.flag("quiet")) words.push_back("--quiet");
  if (line.flag("no-progress")) words.push_back("--no-progress");
  std::vector<char*> pointers;
  for (std::string& word : words) pointers.push_back(word.data());
  return sample_command(static_cast<int>(pointers.size()), pointers.data(), /*resuming=*/true);
}

}  // namespace myriad::cli
