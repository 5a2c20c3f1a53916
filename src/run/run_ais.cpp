// The host scheduler of annealed importance sampling: start the particles, anneal them through
// the temperatures in chunks (progress between launches), read the log weights back, and reduce
// them to log Ẑ per problem (estimate/log_z.hpp); optionally the same in reverse (BDMC).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/log_z.hpp"
#include "myriad/run/ais_config.hpp"

namespace myriad {

void AisConfig::validate() const {
  MYRIAD_EXPECTS(particles >= 1, "particles must be >= 1, got ", particles);
  if (beta.empty()) {
    MYRIAD_EXPECTS(temperatures >= 1, "temperatures must be >= 1, got ", temperatures);
  } else {
    validate_schedule(beta);
  }
  MYRIAD_EXPECTS(steps >= 1, "steps per temperature must be >= 1, got ", steps);
  MYRIAD_EXPECTS(std::isfinite(step_size) && step_size > 0, "step size must be positive, got ",
                 step_size);
  MYRIAD_EXPECTS(std::isnan(refresh) || (refresh > 0 && refresh <= 1),
                 "the momentum refresh (persistence) gamma must lie in (0, 1], got ", refresh);
  MYRIAD_EXPECTS(std::isfinite(proposal_scale) && proposal_scale > 0,
                 "random-walk proposal scale must be positive, got ", proposal_scale);
  MYRIAD_EXPECTS(bootstrap_replicates == 0 || bootstrap_replicates >= 2,
                 "bootstrap replicates must be 0 (none) or >= 2, got ", bootstrap_replicates);
  MYRIAD_EXPECTS(chunk_temperatures >= 0, "chunk_temperatures must be >= 0, got ",
                 chunk_temperatures);
  const auto n = beta.empty() ? static_cast<std::int64_t>(temperatures)
                              : static_cast<std::int64_t>(beta.size()) - 1;
  MYRIAD_EXPECTS(n * steps < 0xFFFFFFFFll,
                 "temperatures x steps must be below 2^32 (random-number counters), got ",
                 n * steps);
}

std::vector<double> AisConfig::schedule_values() const {
  if (!beta.empty()) return beta;
  const double parameter =
      std::isnan(schedule_parameter) ? default_schedule_parameter(schedule) : schedule_parameter;
  return make_schedule(schedule, temperatures, parameter);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Starts the backend in one direction and anneals every particle through the whole path.
template <class T>
AisPass anneal(AisBackend<T>& backend, const AisConfig& config, bool reverse) {
  const AisLayout<T>& layout = backend.layout();
  const int n = layout.temperatures();
  const int chunk = config.chunk_temperatures > 0
                        ? config.chunk_temperatures
                        : std::max(1, (n + 99) / 100);  // about a hundred progress updates
  const AisSettings<T> settings = config.settings<T>();
  const char* phase = reverse ? "reverse" : "forward";

  AisPass pass;
  const auto start = Clock::now();
  pass.failed_starts = backend.start(config.seed, reverse);
  for (int k = 1; k <= n; k += chunk) {
    const int end = std::min(k + chunk, n + 1);
    pass.stats += backend.run(settings, static_cast<std::uint32_t>(k),
                              static_cast<std::uint32_t>(end));
    if (config.progress) config.progress(phase, end - 1, n);
  }
  pass.log_weights = backend.log_weights();
  pass.seconds = seconds_since(start);
  return pass;
}

}  // namespace

template <class T>
AisResult run_ais(AisBackend<T>& backend, const AisConfig& config, std::vector<double> exact,
                  std::vector<std::string> names) {
  config.validate();
  const AisLayout<T>& layout = backend.layout();
  MYRIAD_EXPECTS(layout.particles_per_problem == config.particles, "backend has ",
                 layout.particles_per_problem, " particles per problem but the configuration asks for ",
                 config.particles);
  MYRIAD_EXPECTS(exact.empty() || static_cast<int>(exact.size()) == layout.problems,
                 "exact log Z has ", exact.size(), " entries for ", layout.problems, " problems");
  MYRIAD_EXPECTS(static_cast<int>(names.size()) == layout.dim, "got ", names.size(),
                 " coordinate names for dimension ", layout.dim);

  AisResult result;
  result.device = backend.device_name();
  result.dim = layout.dim;
  result.problems = layout.problems;
  result.particles = layout.particles_per_problem;
  result.temperatures = layout.temperatures();
  result.refresh = static_cast<double>(config.settings<T>().refresh);
  result.log_z_base = layout.log_z_base;
  result.names = std::move(names);
  result.exact_log_z = std::move(exact);

  // Forward: log w = log Z_q + Σ Δβ (log p̃ − log q̃) (hais.md §2).
  result.forward = anneal(backend, config, /*reverse=*/false);
  for (double& w : result.forward.log_weights) w += layout.log_z_base;
  const auto summary_start = Clock::now();
  result.forward.estimates =
      estimate_log_z_segmented(result.forward.log_weights.data(), layout.problems,
                               layout.particles_per_problem, config.seed,
                               config.bootstrap_replicates);
  result.average = average_over_test_set(result.forward.estimates);
  if (config.keep_particles) {
    const std::vector<T> positions = backend.positions();
    result.positions.assign(positions.begin(), positions.end());
    const std::int64_t per_problem = layout.particles_per_problem * layout.dim;
    for (int p = 0; p < layout.problems; ++p) {
      const auto moments = weighted_moments(
          result.positions.data() + p * per_problem, layout.particles_per_problem, layout.dim,
          result.forward.log_weights.data() + static_cast<std::int64_t>(p) * layout.particles_per_problem);
      result.summary.insert(result.summary.end(), moments.begin(), moments.end());
    }
  }
  result.summary_seconds = seconds_since(summary_start);

  // Reverse (BDMC, hais.md §7): the backend's sums are Σ Δβ (log p̃ − log q̃) = −r_b.
  if (config.reverse) {
    result.has_reverse = true;
    result.reverse = anneal(backend, config, /*reverse=*/true);
    // A particle whose exact start had a non-finite density keeps its zero weight (−inf).
    for (double& r : result.reverse.log_weights) r = r == -INFINITY ? r : -r;
    result.reverse.estimates = estimate_log_z_upper_segmented(
        layout.log_z_base, result.reverse.log_weights.data(), layout.problems,
        layout.particles_per_problem, config.seed, config.bootstrap_replicates);
  }
  return result;
}

template AisResult run_ais<float>(AisBackend<float>&, const AisConfig&, std::vector<double>,
                                  std::vector<std::string>);
template AisResult run_ais<double>(AisBackend<double>&, const AisConfig&, std::vector<double>,
                                   std::vector<std::string>);

}  // namespace myriad
