#pragma once
// Settings and results of an annealed-importance-sampling run (myriad::ais, `myriad ais`):
// the contract between the C++ API, the CLI and the output writers.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/estimate/log_z.hpp"
#include "myriad/estimate/variational_base.hpp"
#include "myriad/model/exact_moment.hpp"

namespace myriad {

/// Configuration of myriad::ais. Aggregate with defaults (the HAIS paper's, hais.md §4, §10,
/// except the number of temperatures); validated by validate().
struct AisConfig {
  std::int64_t particles = 200;  ///< per problem (data point)
  int temperatures = 1000;       ///< N: the path has N + 1 inverse temperatures
  ScheduleKind schedule = ScheduleKind::linear;
  double schedule_parameter = std::numeric_limits<double>::quiet_NaN();  ///< NaN: the kind's default
  std::vector<double> beta;      ///< a user-given schedule β_0 … β_N; overrides the above if set
  AisTransition transition = AisTransition::hamiltonian;
  int steps = 1;                 ///< leapfrog (or random-walk) steps per temperature
  double step_size = 0.2;        ///< ε
  double refresh = std::numeric_limits<double>::quiet_NaN();  ///< γ; NaN: 1 − 0.5^ε
  double proposal_scale = 0.1;   ///< random-walk standard deviation
  bool reverse = false;          ///< also run reverse (BDMC) runs from exact posterior draws
  std::uint64_t seed = 1;
  Device device = Device::automatic;
  AisBaseSpec base;              ///< q: N(mean, diag(scale²)); unit Gaussian by default
  /// Fit q to the target first (estimate/variational_base.hpp), replacing `base`; the fit
  /// evaluates the target on the host (run/fitted_base.hpp).
  std::optional<VariationalBaseConfig> fit_base;
  int bootstrap_replicates = 1000;  ///< for the bootstrap standard error; 0 skips it
  int chunk_temperatures = 0;    ///< temperatures per launch; 0 = automatic
  /// CUDA: one thread or one warp per particle (AisParticleMapping); the CPU ignores it.
  AisParticleMapping particle_mapping = AisParticleMapping::automatic;
  /// CPU: Hamiltonian transitions with particles in SIMD lanes where the target's gradient is
  /// written over its element type (detail/ais_lane_blocks.hpp); false: one at a time.
  bool cpu_simd_lanes = true;
  bool keep_particles = true;    ///< keep the final positions on the host
  std::function<void(const char* phase, std::int64_t done, std::int64_t total)> progress;

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate() const;
  /// The schedule this configuration describes (beta if given, else the kind's).
  std::vector<double> schedule_values() const;
  /// The transition settings in precision T, γ resolved.
  template <class T>
  AisSettings<T> settings() const {
    AisSettings<T> s;
    s.transition = transition;
    s.step_size = static_cast<T>(step_size);
    s.steps = steps;
    s.refresh = static_cast<T>(std::isnan(refresh) ? default_refresh(step_size) : refresh);
    s.proposal_scale = static_cast<T>(proposal_scale);
    return s;
  }
};

/// One direction (forward or reverse) of a run.
struct AisPass {
  /// [problem][particle]: log w (forward, log Z_q included) or r_b (reverse, hais.md §7)
  std::vector<double> log_weights;
  std::vector<LogZEstimate> estimates;   ///< per problem: log Ẑ, or the BDMC upper bound
  IterationStats stats;
  std::int64_t failed_starts = 0;        ///< particles with a non-finite start (zero weight)
  double seconds = 0;
};

/// Everything a run produced.
struct AisResult {
  std::string device;
  int dim = 0;
  int problems = 1;
  std::int64_t particles = 0;  ///< per problem
  int temperatures = 0;
  double refresh = 0;          ///< γ used
  double log_z_base = 0;       ///< log Z_q
  std::vector<std::string> names;      ///< coordinate names
  AisPass forward;
  bool has_reverse = false;
  AisPass reverse;
  std::vector<double> exact_log_z;     ///< per problem; NaN where unknown; empty if the model has none
  std::vector<ExactMoment> exact;      ///< one problem's exact posterior, where the model knows it
  TestSetAverage average;              ///< over problems (mean log Ẑ, Monte Carlo and data errors)
  std::vector<double> positions;       ///< forward particles' final positions [problem][particle][dim]
  std::vector<WeightedMoments> summary;  ///< weighted posterior summary, [problem][coordinate]
  double summary_seconds = 0;
  std::optional<VariationalBase> fitted_base;  ///< the fit that set the base, when asked

  /// Particle-temperatures per second of the forward pass (the benchmark's unit).
  double particle_temperatures_per_second() const {
    const double work = static_cast<double>(particles) * problems * temperatures;
    return forward.seconds > 0 ? work / forward.seconds : 0;
  }
};

/// Runs the forward pass (and the reverse pass if asked) on a backend and reduces the results.
/// `exact` holds per-problem exact log Z (NaN where unknown) or is empty. Instantiated for float
/// and double in src/run/run_ais.cpp.
/// The reverse pass restarts the same backend after the forward results are read.
template <class T>
AisResult run_ais(AisBackend<T>& backend, const AisConfig& config, std::vector<double> exact,
                  std::vector<std::string> names);

}  // namespace myriad
