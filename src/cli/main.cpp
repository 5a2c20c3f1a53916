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
    "  mpis      massively parallel importance sampling of a plated model (myriad mpis --help)\n"
    "  models    list the built-in models and their arguments\n"
    "  version   print the version\n";

std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message;
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
    if (command == "ais") return myriad::cli::ais_command(argc, argv);
    if (command == "mpis") return myriad::cli::mpis_command(argc, argv);
    if (command == "models") return myriad::cli::models_command(argc, argv);
    if (command == "version" || command == "--version") {
      std::printf("myriad %s\n", MYRIAD_VERSION);
      return 0;
    }
    throw myriad::cli::UsageError{"unknown command '" + command + "' (see 'myriad --help')"};
  } catch (const myriad::cli::UsageError& e) {
    std::fprintf(stderr, "myriad: error: %s\n", one_line(e.message).c_str());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "myriad: error: %s\n", one_line(e.what()).c_str());
    return myriad::cli::command_line_read() ? 1 : 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "myriad: error: out of host memory (std::bad_alloc): the run's arrays do not "
                 "fit; lower the sizes (chains, draws, particles, runs, samples, model size)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "myriad: error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
