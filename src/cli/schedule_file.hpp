#pragma once
// A user-given inverse-temperature schedule in a text file (`myriad ais --schedule-file`,
// `myriad temper --schedule-file`).

#include <string>
#include <vector>

namespace myriad::cli {

/// The inverse temperatures in a text file, whitespace-separated; validated by the caller
/// (AisConfig::validate, TemperConfig::validate), except that an empty list, which the configs
/// take to mean "use the schedule kind", is refused here.
std::vector<double> read_schedule_file(const std::string& path);

}  // namespace myriad::cli
