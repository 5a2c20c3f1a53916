#include "schedule_file.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "myriad/app/option_names.hpp"
#include "myriad/core/error.hpp"

namespace myriad::cli {

std::vector<double> read_schedule_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw invalid_argument("schedule file '" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) throw io_error("cannot read schedule file '" + path + "'");
  std::vector<double> beta;
  std::string token;
  while (in >> token) {
    char* end = nullptr;
    const double value = std::strtod(token.c_str(), &end);
    if (*end != '\0')
      throw invalid_argument("schedule file '" + path + "': '" + token + "' is not a number");
    beta.push_back(value);
  }
  if (in.bad()) throw io_error("cannot read schedule file '" + path + "'");
  if (beta.empty())
    throw invalid_argument("schedule file '" + path + "' holds no inverse temperatures");
  return beta;
}

double ScheduleOptions::parameter_in_effect() const {
  if (kind == ScheduleKind::linear || !beta.empty()) return std::nan("");
  return std::isnan(parameter) ? default_schedule_parameter(kind) : parameter;
}

ScheduleOptions read_schedule_options(const CommandLine& line) {
  ScheduleOptions options;
  options.kind = parse_schedule_kind(line.text("schedule"));
  options.parameter = std::nan("");
  if (line.has("schedule-file")) {
    if (line.has("temperatures") || line.has("schedule") || line.has("schedule-parameter"))
      throw UsageError{
          "--schedule-file replaces --schedule, --schedule-parameter and --temperatures"};
    options.beta = read_schedule_file(line.text("schedule-file"));
  }
  if (line.has("schedule-parameter")) {
    if (options.kind == ScheduleKind::linear)
      throw UsageError{"--schedule-parameter applies to the geometric and sigmoid schedules"};
    options.parameter = line.number("schedule-parameter");
  }
  return options;
}

}  // namespace myriad::cli
