#pragma once
// Option settings: an option declared with the configuration field it fills, so that its name,
// its help, its default and the range it accepts stand in one line of the command's option table
// and no command repeats the reading (`config.x = line.integer("x", min, max)`) by hand. The
// command declares its configuration first, builds its options against it, and
// parse_run_command assigns them all (CommandLine::assign_settings).

#include <cstdint>
#include <string>
#include <utility>

#include "command_line.hpp"

namespace myriad::cli {

/// An integer setting, refused outside [min, max].
template <class Int>
OptionSetting integer_setting(Int& setting, long long min, long long max) {
  return [&setting, min, max](const CommandLine& line, const std::string& name) {
    setting = static_cast<Int>(line.integer(name, min, max));
  };
}

/// A finite real setting.
inline OptionSetting number_setting(double& setting) {
  return
      [&setting](const CommandLine& line, const std::string& name) { setting = line.number(name); };
}

/// A non-negative integer of 64 bits (a seed).
inline OptionSetting seed_setting(std::uint64_t& setting) {
  return [&setting](const CommandLine& line, const std::string& name) {
    setting = line.unsigned_integer(name);
  };
}

/// A flag: `setting` is whether it was given.
inline OptionSetting flag_setting(bool& setting) {
  return
      [&setting](const CommandLine& line, const std::string& name) { setting = line.flag(name); };
}

/// A --no-* flag: `setting` is whether it was left out.
inline OptionSetting unless_flag_setting(bool& setting) {
  return
      [&setting](const CommandLine& line, const std::string& name) { setting = !line.flag(name); };
}

/// A named choice, turned into its value by `parse` (which throws for an unknown name).
template <class Value, class Parse>
OptionSetting choice_setting(Value& setting, Parse parse) {
  return [&setting, parse](const CommandLine& line, const std::string& name) {
    setting = parse(line.text(name));
  };
}

/// `setting` only when the option is given: an option without a default leaves the
/// configuration's own (an automatic choice) in place.
inline OptionSetting when_given(OptionSetting setting) {
  return [setting = std::move(setting)](const CommandLine& line, const std::string& name) {
    if (line.has(name)) setting(line, name);
  };
}

}  // namespace myriad::cli
