#pragma once
// Settings and results of a many-chain HMC run (the contract between the C++ API, the CLI and
// the output writers).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/diag/summary.hpp"

namespace myriad {

/// Progress of a run: phase is "warmup" or "sampling"; done of total iterations.
struct Progress {
  const char* phase;
  std::int64_t done;
  std::int64_t total;
};

/// How HMC chooses its trajectories (docs/tuning.md): a fixed maximum number of leapfrog steps
/// (jittered), a trajectory length adapted in warm-up from the ensemble by ChEES or SNAPER
/// (mcmc/trajectory_length_adaptation.hpp), or each chain's own No-U-Turn tree (mcmc/nuts.hpp).
enum class HmcSampler { hmc, chees, snaper, nuts };

inline constexpr EnumName<HmcSampler> kHmcSamplerNames[] = {{HmcSampler::hmc, "hmc"},
                                                            {HmcSampler::chees, "chees"},
                                                            {HmcSampler::snaper, "snaper"},
                                                            {HmcSampler::nuts, "nuts"}};

inline const char* to_string(HmcSampler sampler) { return enum_name(kHmcSamplerNames, sampler); }

/// The mass matrix adapted in warm-up: diagonal (the ensemble's variances) or dense (its
/// covariance; mcmc/metric.hpp), both regularised as Stan's; automatic picks one from the
/// dimension and the sampler (resolve_metric).
enum class MetricKind { automatic, diag, dense };

inline constexpr EnumName<MetricKind> kMetricKindNames[] = {
    {MetricKind::automatic, "auto"}, {MetricKind::diag, "diag"}, {MetricKind::dense, "dense"}};

inline const char* to_string(MetricKind metric) { return enum_name(kMetricKindNames, metric); }

/// The largest dimension MetricKind::automatic gives a dense metric. A dense metric costs O(D²)
/// per leapfrog step against O(D) (a D × D product with M⁻¹); measured on this project's CPU
/// (bench/results/adaptive-samplers-cpu.md) it still paid at D = 100 on a target whose gradient
/// costs only O(D) (the equicorrelated Gaussian: NUTS 13.2 k against 0.7 k effective draws per
/// second, ChEES 11.4 k against 7.3 k), and where correlations need it (posteriordb's diamonds,
/// D = 26) it is the difference between R-hat 1.01 and 1.7.
constexpr int kAutomaticDenseMetricMaxDim = 100;

/// The largest SampleConfig::max_leapfrog_steps.
constexpr int kMaxAdaptedLeapfrogSteps = 1 << 16;

/// Checkpoints of a long run and its interruption (docs/checkpoints.md): HMC (run_hmc) and
/// constrained HMC (run_chmc; ABC-MCMC refuses them).
struct CheckpointSettings {
  /// The file the run's whole state is written to, atomically (written beside it, then renamed);
  /// empty: no checkpoints.
  std::string path;
  /// Iterations between checkpoints, warm-up and sampling counted together: one is written after
  /// every multiple of it; 0: only when stopped.
  int every = 0;
  /// Continue the run whose state `path` holds instead of starting one. The configuration must
  /// be the one that wrote it (invalid_argument otherwise); with draws_path, the draws file of
  /// that run is reopened and written on. The draws and results are those of the uninterrupted
  /// run, bit for bit (timings aside).
  bool resume = false;
  /// Polled between iterations and between chunks of draws; when it returns true the run writes
  /// its checkpoint (if path is set) and throws myriad::interrupted.
  std::function<bool()> stop_requested;

  bool enabled() const { return !path.empty(); }
};

/// Configuration of myriad::sample. Aggregate with defaults; validated by validate().
struct SampleConfig {
  std::int64_t chains = 1024;
  int warmup = 1000;
  int draws = 1000;
  std::uint64_t seed = 1;
  Device device = Device::automatic;
  HmcSampler sampler = HmcSampler::chees;  ///< the default by measurement (docs/tuning.md)
  double target_accept = 0.8;    ///< dual-averaging target for the pooled acceptance
  int leapfrog_steps = 16;       ///< hmc: L, the most leapfrog steps of an iteration
  /// chees, snaper: the most leapfrog steps of an adapted trajectory (its length is at most
  /// max_leapfrog_steps step sizes).
  int max_leapfrog_steps = 1024;
  int max_tree_depth = 10;  ///< nuts: Stan's cap, 1 … 15 (at most 2^depth − 1 steps)
  /// dense: not with snaper, dim ≤ kMaxDenseMetricDim; automatic: resolve_metric.
  MetricKind metric = MetricKind::automatic;
  double jitter = 0.5;           ///< step counts are uniform on {⌈(1 − jitter)L⌉, …, L}
  double initial_step_size = 0;  ///< 0: found by Stan's doubling/halving heuristic
  /// Initial points uniform in [−r, r]^D; 0: Stan's r = 2. An error with a model that chooses
  /// its own starts (initial_point) or with initial_positions.
  double init_radius = 0;
  /// The chains' initial points instead of drawn ones: chains × dim values ([chain][dim], row
  /// major), or dim values, one point for every chain. Empty: drawn (init_radius).
  std::vector<double> initial_positions;
  int init_tries = 100;
  bool adapt_step_size = true;
  bool adapt_metric = true;
  /// Restart chains that have not moved in a check interval of warm-up from healthy chains
  /// (mcmc/chain_restarts.hpp); HMC only.
  bool restart_stranded = true;
  /// Nested R-hat groups: K > 1 groups of chains/K chains, each group started from one point;
  /// 1 = independent chains, each from its own point; 0 = automatic (automatic_superchains).
  int superchains = 0;
  /// CPU: HMC's iterations (hmc, chees, snaper) with chains in SIMD lanes where the model's
  /// gradient is written over its element type (detail/hmc_lane_blocks.hpp), and constrained
  /// HMC's where the generator is (detail/chmc_lane_blocks.hpp); false: one chain at a time (the
  /// same draws to rounding, slower).
  bool cpu_simd_lanes = true;
  int chunk_iterations = 0;  ///< draws per device→host chunk; 0 = automatic
  int thin = 1;              ///< keep every thin-th draw in the trace (and diagnostics)
  bool keep_draws = true;    ///< keep the [chain][draw][quantity] trace on the host
  /// Stream the trace to this .npy file (float64, chains × kept draws × quantities) chunk by
  /// chunk instead of holding it in draws_data (with keep_draws); the diagnostics read it back in
  /// blocks of quantities (io/draws_file.hpp). Empty: the trace stays in memory.
  std::string draws_path;
  /// Host memory the run may use, in bytes (run/host_memory.hpp): a run whose working set would
  /// exceed it is refused before it starts, with the figure, and the diagnostics read the trace
  /// back in blocks that fit. 0: what the system reports available (never refused unless beyond
  /// the machine's memory).
  std::int64_t memory_limit = 0;
  CheckpointSettings checkpoint;
  std::function<void(const Progress&)> progress;  ///< called between launches, if set

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate() const;

  /// For the samplers that read these settings but not those of HMC on a density model
  /// (constrained HMC, the ABC samplers): throws myriad::invalid_argument when the sampler, a
  /// dense metric, initial positions or their radius is set, naming `method` and how it starts
  /// its chains instead (`start`).
  void validate_without_hmc_settings(const char* method, const char* start) const;
};

/// Throws invalid_argument when config asks for a dense metric and dim exceeds
/// kMaxDenseMetricDim (run_hmc, and the CLI before a run starts).
void check_metric_dimension(const SampleConfig& config, int dim);

/// The metric a run of config on a model of dimension dim adapts: config.metric, or for
/// MetricKind::automatic dense where 2 ≤ dim ≤ kAutomaticDenseMetricMaxDim and the sampler is not
/// SNAPER, diagonal otherwise. A dense metric of one dimension is the diagonal one.
MetricKind resolve_metric(const SampleConfig& config, int dim);

/// Everything a run produced.
struct SampleResult {
  std::string device;
  std::int64_t chains = 0;
  int warmup = 0;
  int draws = 0;                   ///< sampling iterations per chain
  int kept_draws = 0;              ///< draws per chain in the trace: ⌈draws / thin⌉
  std::vector<std::string> names;  ///< recorded quantities
  std::vector<double> draws_data;  ///< [chain][kept draw][quantity], if kept
  std::vector<diag::VariableSummary> summary;
  int superchains = 1;
  std::vector<double> nested_rhat;  ///< per quantity (NaN when superchains == 1)
  double step_size = 0;
  /// The metric adapted (resolve_metric) and M⁻¹: its diagonal, or dim × dim row-major for a
  /// dense metric.
  MetricKind metric = MetricKind::diag;
  std::vector<double> inverse_metric;
  int leapfrog_steps = 0;  ///< HMC: the most steps of a sampling iteration (NUTS: 0)
  double jitter = 0;
  /// chees, snaper: the adapted trajectory length T (sampling trajectories are uniform fractions
  /// of it), and per warm-up iteration T and the ensemble's criterion (weighted mean of C).
  double trajectory_length = 0;
  std::vector<double> trajectory_length_trace;
  std::vector<double> criterion_trace;
  /// snaper: the variance along the principal direction in the metric's scaled coordinates
  /// (the largest eigenvalue of Cov(M^−½ x) the power iteration found); 0 otherwise.
  double principal_variance = 0;
  /// nuts: the depth cap (tree depths, caps hit and the lockstep count are in the stats).
  int max_tree_depth = 0;
  IterationStats warmup_stats;
  IterationStats sampling_stats;
  std::int64_t initialisation_failures = 0;
  /// HMC warm-up: restarts of stranded chains (mcmc/chain_restarts.hpp), the distinct chains
  /// restarted, and the checks at which half or more of the chains were stuck (none restarted).
  std::int64_t warmup_restarts = 0;
  std::int64_t warmup_restarted_chains = 0;
  int warmup_stuck_checks = 0;
  /// HMC: chains whose log density never changed over the sampling phase (stuck throughout);
  /// -1 where not counted.
  std::int64_t sampling_stuck_chains = -1;
  /// Constrained HMC: chains whose step back-off (mcmc/step_back_off.hpp) was still on at the
  /// end of warm-up, and the largest back-off h (δt · 2^−h) among them.
  std::int64_t warmup_backed_off_chains = 0;
  int warmup_max_step_halvings = 0;
  /// Where the trace is when it was streamed to a file (config.draws_path), else empty.
  std::string draws_path;
  /// The chains the diagnostics (summary, nested R-hat) cover: all of them, or the first ones
  /// when one quantity of the whole trace with its workspace would not fit in the memory limit.
  std::int64_t diagnosed_chains = 0;
  /// Checkpoints written by this process, and the iteration (warm-up and sampling together) the
  /// run resumed from (-1: it started afresh); timings count this process only.
  std::int64_t checkpoints_written = 0;
  std::int64_t resumed_at_iteration = -1;
  double warmup_seconds = 0;
  double sampling_seconds = 0;
  double summary_seconds = 0;

  double gradient_evaluations_per_second() const {
    const double seconds = warmup_seconds + sampling_seconds;
    const double evaluations = static_cast<double>(warmup_stats.gradient_evaluations +
                                                   sampling_stats.gradient_evaluations);
    return seconds > 0 ? evaluations / seconds : 0;
  }
};

/// A result with what every sampler records first: device, chain and iteration counts, quantity
/// names and the superchains in effect (config.superchains, or automatic_superchains when 0).
SampleResult new_sample_result(const SampleConfig& config, std::string device,
                               std::vector<std::string> names);

/// Runs HMC on a backend: initialisation, windowed warm-up (ensemble step size by dual
/// averaging, diagonal metric from the ensemble's variance), sampling with chunked draws, and
/// diagnostics. Instantiated for float and double in src/run/run_hmc.cpp.
template <class T>
SampleResult run_hmc(HmcBackend<T>& backend, const SampleConfig& config);

/// The number of superchains used for config.superchains == 0: the largest divisor of chains
/// not above 16 that leaves at least 2 chains per superchain, or 1 if none.
int automatic_superchains(std::int64_t chains);

/// How many consecutive chains share an initial point: a superchain's chains, or 1 (each chain
/// its own point) when there is one superchain.
inline std::int64_t chains_per_initial_point(std::int64_t chains, int superchains) {
  return superchains > 1 ? chains / superchains : 1;
}

}  // namespace myriad
