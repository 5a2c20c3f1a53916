#pragma once
// Settings and results of a tempering run (myriad::temper, `myriad temper`): the contract between
// the C++ API, the CLI and the output writers.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/estimate/tempering_method.hpp"
#include "myriad/estimate/variational_base.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/exact_moment.hpp"

namespace myriad {

/// Configuration of myriad::temper. Aggregate with defaults (the thesis's HMC settings, §5.6.1:
/// δt = 0.5, L = 20); validated by validate().
struct TemperConfig {
  TemperMethod method = TemperMethod::gibbs_ct;
  std::int64_t chains = 64;
  int warmup = 500;  ///< transitions discarded
  int draws = 2000;  ///< transitions kept, every one used by the estimators
  std::uint64_t seed = 1;
  double step_size = 0.5;   ///< HMC's δt
  int leapfrog_steps = 20;  ///< HMC's L
  /// HMC's mass matrix: unit, or the base's scales (δt is then in the base's units).
  TemperingMetric metric = TemperingMetric::unit;
  double log_zeta = 0;      ///< log ζ, the guess of log Z
  AisBaseSpec base;         ///< q: N(mean, diag(scale²)), unit by default
  /// Fit q to the target first and take log ζ from the fit (estimate/variational_base.hpp),
  /// replacing `base` and `log_zeta`; the fit evaluates the target on the host
  /// (run/fitted_base.hpp).
  std::optional<VariationalBaseConfig> fit_base;
  int temperatures = 1000;  ///< simulated tempering: K inverse temperatures, 0 … 1
  ScheduleKind schedule = ScheduleKind::sigmoid;  ///< simulated tempering's ladder (thesis (5.53))
  /// β_min (geometric) or the scale s (sigmoid); NaN: the kind's default (1e-4, 4).
  double schedule_parameter = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> beta;  ///< simulated tempering: a user-given ladder; overrides the above
  double u_scale = 1;        ///< CT-HMC: β = σ(u / s)
  double initial_u = -10;    ///< CT-HMC: u at the start (the thesis's code: β ≈ 0)
  Device device = Device::automatic;
  int chunk_iterations = 50;  ///< transitions per backend call (progress between calls)
  std::function<void(const char* phase, std::int64_t done, std::int64_t total)> progress;

  /// Simulated tempering's ladder: `beta` when given, else the schedule's `temperatures` values
  /// (an annealing schedule of temperatures − 1 steps, estimate/annealing_schedule.hpp).
  std::vector<double> ladder() const {
    if (!beta.empty()) return beta;
    MYRIAD_EXPECTS(temperatures >= 2,
                   "simulated tempering needs at least 2 inverse temperatures, got ", temperatures);
    return make_schedule(
        schedule, temperatures - 1,
        std::isnan(schedule_parameter) ? default_schedule_parameter(schedule) : schedule_parameter);
  }

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate() const {
    MYRIAD_EXPECTS(chains >= 2, "tempering needs at least 2 chains, got ", chains);
    MYRIAD_EXPECTS(chains <= 0x7FFFFFFFll, "at most 2^31 - 1 chains, got ", chains);
    MYRIAD_EXPECTS(warmup >= 0 && draws >= 2, "warmup must be >= 0 and draws >= 2, got ", warmup,
                   " and ", draws);
    MYRIAD_EXPECTS(static_cast<std::int64_t>(warmup) + draws < 0x7FFFFFFFll,
                   "warmup + draws must be below 2^31, got ", warmup, " + ", draws);
    MYRIAD_EXPECTS(std::isfinite(step_size) && step_size > 0, "step size must be positive, got ",
                   step_size);
    MYRIAD_EXPECTS(leapfrog_steps >= 1, "leapfrog steps must be >= 1, got ", leapfrog_steps);
    MYRIAD_EXPECTS(std::isfinite(log_zeta), "log zeta must be finite, got ", log_zeta);
    MYRIAD_EXPECTS(std::isfinite(u_scale) && u_scale > 0, "u scale must be positive, got ",
                   u_scale);
    MYRIAD_EXPECTS(std::isfinite(initial_u), "initial u must be finite, got ", initial_u);
    MYRIAD_EXPECTS(chunk_iterations >= 1, "chunk iterations must be >= 1, got ", chunk_iterations);
    if (method == TemperMethod::simulated_tempering) validate_schedule(ladder());
  }
};

/// What a tempering run found. Moments are over the target's coordinates; the base check
/// compares the w₀-weighted means with the base's own (they agree within a few standard errors
/// when the chains have mixed in β).
struct TemperResult {
  std::string method;
  std::string device;
  int dim = 0;
  std::int64_t chains = 0;
  int warmup = 0, draws = 0;
  int temperatures = 0;  ///< simulated tempering's ladder length; 0 for continuous tempering
  double log_zeta = 0;
  double log_z_base = 0;  ///< log Z_q of the base
  EstimateWithError log_z;
  double log_z_exact = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> names;
  std::vector<EstimateWithError> target_mean;  ///< E_p[x_i], weights w₁ (or p(K | x))
  std::vector<double> target_sd;               ///< √(E_p[x_i²] − E_p[x_i]²)
  std::vector<EstimateWithError> base_mean;    ///< E_q[x_i], weights w₀ (or p(0 | x))
  std::vector<double> base_exact_mean;         ///< the base's own means, which base_mean estimates
  double max_base_error_in_se = 0;             ///< max |base_mean − base mean| / se: the check
  std::vector<ExactMoment> exact;  ///< the target's exact moments, where the model knows them
  double beta_rhat = std::numeric_limits<double>::quiet_NaN();  ///< of the chains' β traces
  double mean_beta = 0;            ///< over every kept transition of every chain
  std::vector<double> beta_trace;  ///< [draw][chain]: each chain's β after each kept transition
  IterationStats stats;            ///< HMC's counters over the kept transitions
  std::int64_t dropped = 0;        ///< kept samples whose weights were not finite (not summed)
  std::int64_t failed_starts = 0;  ///< chains without a finite start (the run stops: an error)
  double seconds = 0;              ///< the chains' run, start to outputs
  std::optional<VariationalBase> fitted_base;  ///< the fit that set the base and ζ, when asked

  double mean_accept_prob() const { return stats.mean_accept_prob(); }
  /// Transitions of every chain, warm-up included, per second of the chains' run.
  double chain_iterations_per_second() const {
    return seconds > 0 ? static_cast<double>(chains) * (warmup + draws) / seconds : 0.0;
  }
};

}  // namespace myriad
