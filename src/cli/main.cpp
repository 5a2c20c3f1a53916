// The myriad command-line tool. Errors become one line on stderr and a non-zero exit status:
// 2 for usage errors (anything wrong with the command line, wherever its values are checked),
// 1 for everything else (missing GPU, unwritable output, a run that fails, ...).

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "command_line.hpp"
#include "commands.hpp"

namespace {

const char* kUsage =
    "usage: myriad <command> [options]\n"
    "\n"
    "commands:\n"
    "  sample    many-chain HMC on a built-in model; constrained HMC and the ABC baselines on a\n"
    "            generator (myriad sample --help)\n"
    "  ais       annealed importance sampling: log Z of a built-in target (myriad ais --help)\n"
    "  temper    continuous or simulated tempering: log Z and moments of a built-in target\n"
    "            (myriad temper --help)\n"
    "  mpis      massively parallel importance sampling of a plated model (myriad mpis --help)\n"
    "  resume    continue an interrupted 'sample --checkpoint-every' run (myriad resume --help)\n"
    "  sbc       simulation-based calibration of a model's sampler (myriad sbc --help)\n"
    "  models    list the built-in models and their arguments\n"
    "  version   print the version\n";

/// Reports an error as one line on stderr and returns the exit status.
int fail(std::string message, int status) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "myriad: error: %s\n", message.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
      std::fputs(kUsage, argc < 2 ? stderr : stdout);
      return argc < 2 ? 2 : 0;
    }
    const std::string command = argv[1];
    if (command == "sample") return myriad::cli::sample_command(argc, argv);
    if (command == "resume") return myriad::cli::resume_command(argc, argv);
    if (command == "ais") return myriad::cli::ais_command(argc, argv);
    if (command == "temper") return myriad::cli::temper_command(argc, argv);
    if (command == "mpis") return myriad::cli::mpis_command(argc, argv);
    if (command == "sbc") return myriad::cli::sbc_command(argc, argv);
    if (command == "models") return myriad::cli::models_command(argc, argv);
    if (command == "version" || command == "--version") {
      std::printf("myriad %s\n", MYRIAD_VERSION);
      return 0;
    }
    throw myriad::cli::UsageError{"unknown command '" + command + "' (see 'myriad --help')"};
  } catch (const myriad::cli::UsageError& e) {
    return fail(e.message, 2);
  } catch (const std::invalid_argument& e) {
    return fail(e.what(), myriad::cli::command_line_read() ? 1 : 2);
  } catch (const std::bad_alloc&) {
    return fail(
        "out of host memory (std::bad_alloc): the run's arrays do not fit; lower the sizes "
        "(chains, draws, particles, runs, samples, model size)",
        1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
}
