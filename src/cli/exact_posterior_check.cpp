#include "exact_posterior_check.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::cli {

Json exact_posterior_check(const std::vector<ExactMoment>& exact,
                           const std::vector<std::string>& names,
                           const std::vector<WeightedMoments>& summary) {
  double max_abs = 0, max_mcse = 0, max_sd = 0;
  int compared = 0;
  for (const ExactMoment& e : exact) {
    const auto it = std::find(names.begin(), names.end(), e.name);
    const auto q = static_cast<std::size_t>(it - names.begin());
    if (it == names.end() || q >= summary.size()) continue;
    const WeightedMoments& m = summary[q];
    const double error = std::abs(m.mean - e.mean);
    max_abs = std::max(max_abs, error);
    if (m.mcse_mean > 0) max_mcse = std::max(max_mcse, error / m.mcse_mean);
    if (std::isfinite(m.sd)) max_sd = std::max(max_sd, std::abs(m.sd - e.sd));
    ++compared;
  }
  if (compared == 0) return Json(nullptr);
  Json check = Json::object();
  check["quantities"] = compared;
  check["max_abs_error_of_mean"] = max_abs;
  check["max_error_in_mcse"] = max_mcse;
  check["max_abs_error_of_sd"] = max_sd;
  return check;
}

}  // namespace myriad::cli
