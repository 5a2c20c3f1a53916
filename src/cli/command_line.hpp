#pragma once
// A small command-line parser for `myriad <command> [--option value]...`: options are declared
// with their help text, values are checked when read, and every error is one line naming the
// option.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/device.hpp"

namespace myriad::cli {

/// A usage error: printed as one line, exit status 2.
struct UsageError {
  std::string message;
};

class CommandLine;

/// Where an option's value goes: a setting of the command's configuration, which
/// CommandLine::assign_settings() reads, checks and stores (option_settings.hpp makes them).
/// Empty for an option the command reads itself, because its meaning depends on other options.
using OptionSetting = std::function<void(const CommandLine& line, const std::string& name)>;

struct OptionSpec {
  std::string name;        ///< without the leading dashes
  std::string value_name;  ///< empty for flags
  std::string default_value;
  std::string help;
  OptionSetting setting = nullptr;  ///< see OptionSetting
  bool repeatable = false;
};

/// Marks the end of reading the command line. Until a run command calls it (just before it
/// claims the device and the output directory), a std::invalid_argument (a value the library's
/// own checks refuse, an unknown model, choice or model argument) is the command line's fault
/// and main reports it as a usage error, exit status 2; after it, as a failed run, status 1.
void finish_reading_command_line();
bool command_line_read();

/// The KEY=VALUE pairs of every --model-arg, in order; throws UsageError for one without '=' or
/// a KEY given twice.
std::vector<std::pair<std::string, std::string>> model_arguments(const CommandLine& line);

/// --data FILE: the model's data in CmdStan's JSON format (sample, ais, temper).
OptionSpec data_option();
/// The file --data names; empty when none.
std::string data_path(const CommandLine& line);

/// The settings every run command has: where its --seed and --device go.
struct RunSettings {
  std::uint64_t& seed;
  Device& device;
};

/// The options of a run command (sample, ais, mpis, temper, sbc): --model and --model-arg, then
/// the command's own, then --seed, --device (into `run`), --output, --no-progress, --quiet and
/// --help.
std::vector<OptionSpec> run_command_options(const std::string& model_help,
                                            const std::string& output_help,
                                            std::vector<OptionSpec> own, RunSettings run);

/// Parses argv[2..] of a run command. With --help, prints the help and returns true; otherwise
/// requires --model and --output (UsageError), assigns every option's setting and returns false.
bool parse_run_command(CommandLine& line, int argc, char** argv);

class CommandLine {
 public:
  CommandLine(std::string command, std::vector<OptionSpec> options);

  /// Parses argv[first..argc); throws UsageError on unknown options or missing values.
  void parse(int argc, char** argv, int first);

  bool has(const std::string& name) const;
  bool flag(const std::string& name) const { return has(name); }
  std::string text(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
  long long integer(const std::string& name, long long min, long long max) const;
  unsigned long long unsigned_integer(const std::string& name) const;
  double number(const std::string& name) const;

  std::string help() const;

  /// Reads every option that has a setting (given or at its default) into it, in the order the
  /// options were declared; throws UsageError naming the first value its setting refuses.
  void assign_settings() const;

  /// Every option given, as (name, value) pairs in name order (value empty for a flag), and
  /// whether an option takes a value: what `myriad resume` needs to give the same command again.
  std::vector<std::pair<std::string, std::string>> given() const;
  bool takes_value(const std::string& name) const { return !spec(name).value_name.empty(); }

 private:
  const OptionSpec& spec(const std::string& name) const;
  std::string command_;
  std::vector<OptionSpec> options_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace myriad::cli
