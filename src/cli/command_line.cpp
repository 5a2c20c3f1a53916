#include "command_line.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>

#include "myriad/app/option_names.hpp"
#include "option_settings.hpp"

namespace myriad::cli {

namespace {
bool command_line_is_read = false;
}  // namespace

void finish_reading_command_line() { command_line_is_read = true; }
bool command_line_read() { return command_line_is_read; }

CommandLine::CommandLine(std::string command, std::vector<OptionSpec> options)
    : command_(std::move(command)), options_(std::move(options)) {}

const OptionSpec& CommandLine::spec(const std::string& name) const {
  for (const auto& option : options_)
    if (option.name == name) return option;
  throw UsageError{"unknown option --" + name + " for 'myriad " + command_ + "' (see 'myriad " +
                   command_ + " --help')"};
}

void CommandLine::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word.size() == 2)
      throw UsageError{"unexpected argument '" + word + "' for 'myriad " + command_ + "'"};
    std::string name = word.substr(2);
    std::string value;
    bool has_inline_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    const OptionSpec& option = spec(name);
    if (option.value_name.empty()) {
      if (has_inline_value) throw UsageError{"option --" + name + " takes no value"};
      values_[name].push_back("");
      continue;
    }
    if (!has_inline_value) {
      // A next word that is itself an option means this one's value was left out (a value
      // that starts with "--" can still be given as --name=value).
      if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
        throw UsageError{"option --" + name + " needs a value (" + option.value_name + ")"};
      value = argv[++i];
    }
    if (!option.repeatable && values_.count(name))
      throw UsageError{"option --" + name + " given more than once"};
    values_[name].push_back(value);
  }
}

std::vector<std::pair<std::string, std::string>> CommandLine::given() const {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [name, values] : values_)
    for (const std::string& value : values) pairs.emplace_back(name, value);
  return pairs;
}

bool CommandLine::has(const std::string& name) const { return values_.count(name) > 0; }

std::string CommandLine::text(const std::string& name) const {
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second.back();
  return spec(name).default_value;
}

std::vector<std::string> CommandLine::all(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long long CommandLine::integer(const std::string& name, long long min, long long max) const {
  const std::string value = text(name);
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError{"--" + name + " must be an integer, got '" + value + "'"};
  if (parsed < min || parsed > max) {
    std::ostringstream message;
    message << "--" << name << " must be ";
    if (max == std::numeric_limits<long long>::max())
      message << ">= " << min;
    else
      message << "between " << min << " and " << max;
    message << ", got " << parsed;
    throw UsageError{message.str()};
  }
  return parsed;
}

unsigned long long CommandLine::unsigned_integer(const std::string& name) const {
  const std::string value = text(name);
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError{"--" + name + " must be a non-negative integer, got '" + value + "'"};
  return parsed;
}

double CommandLine::number(const std::string& name) const {
  const std::string value = text(name);
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(parsed))
    throw UsageError{"--" + name + " must be a finite number, got '" + value + "'"};
  return parsed;
}

std::string CommandLine::help() const {
  std::ostringstream out;
  out << "usage: myriad " << command_ << " [options]\n\noptions:\n";
  for (const auto& option : options_) {
    std::string left = "  --" + option.name;
    if (!option.value_name.empty()) left += " " + option.value_name;
    out << left;
    // A long option name and value list gets its help on the next line, aligned.
    if (left.size() < 30)
      out << std::string(30 - left.size(), ' ');
    else
      out << "\n" << std::string(30, ' ');
    out << option.help;
    if (!option.default_value.empty()) out << " (default " << option.default_value << ")";
    if (option.repeatable) out << " [repeatable]";
    out << "\n";
  }
  return out.str();
}

void CommandLine::assign_settings() const {
  for (const OptionSpec& option : options_)
    if (option.setting) option.setting(*this, option.name);
}

OptionSpec data_option() {
  return {"data", "FILE", "",
          "the model's data: a JSON file in CmdStan's format (the models that take data, see "
          "'myriad models')"};
}

std::string data_path(const CommandLine& line) {
  return line.has("data") ? line.text("data") : std::string();
}

std::vector<std::pair<std::string, std::string>> model_arguments(const CommandLine& line) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& text : line.all("model-arg")) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError{"--model-arg expects KEY=VALUE, got '" + text + "'"};
    const std::string key = text.substr(0, eq);
    for (const auto& pair : pairs)
      if (pair.first == key) throw UsageError{"--model-arg " + key + " given more than once"};
    pairs.emplace_back(key, text.substr(eq + 1));
  }
  return pairs;
}

std::vector<OptionSpec> run_command_options(const std::string& model_help,
                                            const std::string& output_help,
                                            std::vector<OptionSpec> own, RunSettings run) {
  std::vector<OptionSpec> options{{"model", "NAME", "", model_help},
                                  {"model-arg", "KEY=VALUE", "", "model argument", {}, true}};
  options.insert(options.end(), own.begin(), own.end());
  options.insert(options.end(), {{"seed", "S", "1", "random seed", seed_setting(run.seed)},
                                 {"device", "auto|cpu|cuda", "auto", "where to run",
                                  choice_setting(run.device, parse_device)},
                                 {"output", "DIR", "", output_help},
                                 {"no-progress", "", "", "no progress bar"},
                                 {"quiet", "", "", "print nothing on success"},
                                 {"help", "", "", "show this help"}});
  return options;
}

bool parse_run_command(CommandLine& line, int argc, char** argv) {
  line.parse(argc, argv, 2);
  if (line.flag("help")) {
    std::cout << line.help();
    return true;
  }
  if (!line.has("model")) throw UsageError{"--model is required (see 'myriad models')"};
  if (!line.has("output")) throw UsageError{"--output is required"};
  line.assign_settings();
  return false;
}

}  // namespace myriad::cli
