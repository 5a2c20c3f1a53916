#pragma once
// The inverse-temperature schedule of `myriad ais` and `myriad temper` (simulated tempering's
// ladder): --schedule, --schedule-parameter and --temperatures, or a user-given schedule in a text
// file (--schedule-file).

#include <string>
#include <vector>

#include "command_line.hpp"
#include "myriad/estimate/annealing_schedule.hpp"

namespace myriad::cli {

/// The schedule options as given: the kind, its parameter (NaN: the kind's default) and a user's
/// schedule (empty: none).
struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::linear;
  double parameter = 0;
  std::vector<double> beta;

  /// What run.json records: "user" for a file's schedule, else the kind's name.
  std::string name() const { return beta.empty() ? to_string(kind) : "user"; }
  /// The parameter in effect: NaN for the linear schedule (which has none) and a user's.
  double parameter_in_effect() const;
};

/// Reads --schedule, --schedule-parameter and --schedule-file; throws UsageError for a file with
/// --schedule, --schedule-parameter or --temperatures, or a parameter for the linear schedule.
ScheduleOptions read_schedule_options(const CommandLine& line);

/// The inverse temperatures in a text file, whitespace-separated; validated by the caller
/// (AisConfig::validate, TemperConfig::validate), except that an empty list, which the configs
/// take to mean "use the schedule kind", is refused here.
std::vector<double> read_schedule_file(const std::string& path);

}  // namespace myriad::cli
