#pragma once
// Inverse-temperature schedules 0 = β_0 < β_1 < … < β_N = 1 for annealed importance sampling
// (hais.md §2). The bridging energies are E_n = (1 − β_n) E_q + β_n E_p.
//
//   linear      β_n = n / N                                  (HAIS paper, all results)
//   geometric   β_n = β_min^{(N − n)/(N − 1)}, n ≥ 1          (Neal 2001, "Annealed importance
//               sampling", §5: geometric spacing where the log-weight increments vary fastest)
//   sigmoid     β̃_n = σ(s (2n − N)/N),  β_n = (β̃_n − β̃_0)/(β̃_N − β̃_0)   (thesis eq. 5.53, s = 4)
//   user        any strictly increasing sequence from 0 to 1 (e.g. read from a file)
//
// The schedule is held in double: its differences Δβ_n scale the log-weight increments, and
// with N = 10⁵ temperatures Δβ = 10⁻⁵ must not lose digits to a float β.

#include <cmath>
#include <string>
#include <vector>

#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"

namespace myriad {

enum class ScheduleKind { linear, geometric, sigmoid };

inline constexpr EnumName<ScheduleKind> kScheduleKindNames[] = {
    {ScheduleKind::linear, "linear"},
    {ScheduleKind::geometric, "geometric"},
    {ScheduleKind::sigmoid, "sigmoid"},
    {ScheduleKind::sigmoid, "sigmoidal"}};

inline std::string to_string(ScheduleKind kind) { return enum_name(kScheduleKindNames, kind); }

/// Checks that β is a valid schedule: at least two entries, β_0 = 0, β_N = 1, strictly
/// increasing and finite. Throws myriad::invalid_argument naming the first bad entry.
inline void validate_schedule(const std::vector<double>& beta) {
  MYRIAD_EXPECTS(beta.size() >= 2, "a schedule needs at least two inverse temperatures, got ",
                 beta.size());
  MYRIAD_EXPECTS(beta.front() == 0.0, "a schedule must start at beta = 0, got ", beta.front());
  MYRIAD_EXPECTS(beta.back() == 1.0, "a schedule must end at beta = 1, got ", beta.back());
  for (std::size_t n = 1; n < beta.size(); ++n) {
    MYRIAD_EXPECTS(std::isfinite(beta[n]) && beta[n] > beta[n - 1],
                   "a schedule must increase strictly: beta[", n, "] = ", beta[n], " after beta[",
                   n - 1, "] = ", beta[n - 1]);
  }
}

/// β_0 … β_N for N = `temperatures` steps. `parameter` is β_min for geometric (default 1e-4) and
/// the scale s for sigmoid (default 4); linear ignores it. N = 1 is plain importance sampling
/// for every kind (β = {0, 1}).
inline std::vector<double> make_schedule(ScheduleKind kind, int temperatures, double parameter) {
  MYRIAD_EXPECTS(temperatures >= 1, "temperatures must be >= 1, got ", temperatures);
  const int n_max = temperatures;
  std::vector<double> beta(static_cast<std::size_t>(n_max) + 1);
  beta[0] = 0.0;
  beta[n_max] = 1.0;
  switch (kind) {
    case ScheduleKind::linear:
      for (int n = 1; n < n_max; ++n) beta[n] = static_cast<double>(n) / n_max;
      break;
    case ScheduleKind::geometric: {
      MYRIAD_EXPECTS(parameter > 0.0 && parameter < 1.0,
                     "geometric schedule: beta_min must lie in (0, 1), got ", parameter);
      const double log_min = std::log(parameter);
      for (int n = 1; n < n_max; ++n)
        beta[n] = std::exp(log_min * static_cast<double>(n_max - n) / (n_max - 1));
      break;
    }
    case ScheduleKind::sigmoid: {
      MYRIAD_EXPECTS(std::isfinite(parameter) && parameter > 0.0,
                     "sigmoid schedule: scale must be positive, got ", parameter);
      const auto tilde = [&](int n) {
        return 1.0 / (1.0 + std::exp(-parameter * (2.0 * n - n_max) / n_max));
      };
      const double low = tilde(0), high = tilde(n_max);
      for (int n = 1; n < n_max; ++n) beta[n] = (tilde(n) - low) / (high - low);
      break;
    }
  }
  validate_schedule(beta);
  return beta;
}

/// The default parameter of a schedule kind: β_min = 1e-4 (geometric), s = 4 (sigmoid).
inline double default_schedule_parameter(ScheduleKind kind) {
  return kind == ScheduleKind::geometric ? 1e-4 : 4.0;
}

}  // namespace myriad
