#include "schedule_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

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

}  // namespace myriad::cli
