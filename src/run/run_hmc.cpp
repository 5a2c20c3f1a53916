// The host scheduler for many-chain HMC: initialise → warm-up → sample → diagnose.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint_file.hpp"
#include "mcmc_run.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/nested_rhat.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/mcmc/metric.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/mcmc/step_size_search.hpp"
#include "myriad/mcmc/trajectory_length_adaptation.hpp"
#include "myriad/mcmc/warmup_schedule.hpp"
#include "myriad/mcmc/welford.hpp"
#include "myriad/run/host_memory.hpp"
#include "myriad/run/sample_config.hpp"
#include "stranded_chains.hpp"
#include "trace.hpp"

namespace myriad {

void SampleConfig::validate() const {
  MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
  MYRIAD_EXPECTS(chains <= 0xFFFFFFFFll, "chains must be below 2^32, got ", chains);
  MYRIAD_EXPECTS(warmup >= 0, "warmup must be >= 0, got ", warmup);
  MYRIAD_EXPECTS(draws > 0, "draws must be positive, got ", draws);
  MYRIAD_EXPECTS(static_cast<std::int64_t>(warmup) + draws + 200 < 0xFFFFFFFFll,
                 "warmup + draws must be below 2^32");
  MYRIAD_EXPECTS(target_accept > 0 && target_accept < 1,
                 "target_accept must lie in (0, 1), got ", target_accept);
  MYRIAD_EXPECTS(leapfrog_steps >= 1, "leapfrog_steps must be >= 1, got ", leapfrog_steps);
  MYRIAD_EXPECTS(max_leapfrog_steps >= 1 && max_leapfrog_steps <= kMaxAdaptedLeapfrogSteps,
                 "max_leapfrog_steps must lie in [1, ", kMaxAdaptedLeapfrogSteps, "], got ",
                 max_leapfrog_steps);
  MYRIAD_EXPECTS(max_tree_depth >= 1 && max_tree_depth <= kLargestMaxTreeDepth,
                 "max_tree_depth must lie in [1, ", kLargestMaxTreeDepth, "], got ",
                 max_tree_depth);
  MYRIAD_EXPECTS(metric != MetricKind::dense || sampler != HmcSampler::snaper,
                 "a dense metric is not available with SNAPER (its principal direction is "
                 "found in a diagonal metric's scaled coordinates); use chees or nuts");
  MYRIAD_EXPECTS(jitter >= 0 && jitter <= 1, "jitter must lie in [0, 1], got ", jitter);
  MYRIAD_EXPECTS(std::isfinite(initial_step_size) && initial_step_size >= 0,
                 "initial_step_size must be >= 0 (0 = automatic), got ", initial_step_size);
  MYRIAD_EXPECTS(adapt_step_size || initial_step_size > 0,
                 "a fixed step size (no adaptation) needs initial_step_size > 0");
  MYRIAD_EXPECTS(std::isfinite(init_radius) && init_radius >= 0,
                 "init_radius must be positive (0: Stan's 2), got ", init_radius);
  MYRIAD_EXPECTS(initial_positions.empty() || init_radius == 0,
                 "init_radius applies to drawn initial points, not to initial_positions");
  for (std::size_t i = 0; i < initial_positions.size(); ++i)
    MYRIAD_EXPECTS(std::isfinite(initial_positions[i]), "initial_positions[", i, "] is not finite");
  MYRIAD_EXPECTS(init_tries >= 1, "init_tries must be >= 1, got ", init_tries);
  MYRIAD_EXPECTS(superchains >= 0, "superchains must be >= 0, got ", superchains);
  MYRIAD_EXPECTS(superchains == 0 || chains % superchains == 0, "superchains (", superchains,
                 ") must divide chains (", chains, ")");
  MYRIAD_EXPECTS(chunk_iterations >= 0, "chunk_iterations must be >= 0, got ", chunk_iterations);
  MYRIAD_EXPECTS(thin >= 1 && thin <= draws, "thin must lie in [1, draws], got ", thin);
  MYRIAD_EXPECTS(checkpoint.every >= 0, "checkpoint.every must be >= 0, got ", checkpoint.every);
  MYRIAD_EXPECTS(!checkpoint.resume || checkpoint.enabled(),
                 "resuming needs the checkpoint's path (checkpoint.path)");
  MYRIAD_EXPECTS(checkpoint.every == 0 || checkpoint.enabled(),
                 "checkpoint.every needs a checkpoint path (checkpoint.path)");
  MYRIAD_EXPECTS(memory_limit >= 0, "memory_limit must be >= 0 bytes, got ", memory_limit);
  // A trace held in memory would be lost with the process: a checkpointed run streams it.
  MYRIAD_EXPECTS(!checkpoint.enabled() || !draws_path.empty() || !keep_draws,
                 "checkpoints need the trace streamed to a file (draws_path), or not kept "
                 "(keep_draws = false)");
}

void SampleConfig::validate_without_hmc_settings(const char* method, const char* start) const {
  MYRIAD_EXPECTS(sampler == HmcSampler::hmc, "sampler ", to_string(sampler),
                 " applies to HMC on a density model, not to ", method);
  MYRIAD_EXPECTS(metric != MetricKind::dense,
                 "a dense metric applies to HMC on a density model, not to ", method);
  MYRIAD_EXPECTS(initial_positions.empty() && init_radius == 0,
                 "initial_positions and init_radius apply to HMC: ", start);
}

void check_metric_dimension(const SampleConfig& config, int dim) {
  MYRIAD_EXPECTS(config.metric != MetricKind::dense || dim <= kMaxDenseMetricDim,
                 "a dense metric supports dimensions up to ", kMaxDenseMetricDim,
                 ", the model has ", dim);
}

MetricKind resolve_metric(const SampleConfig& config, int dim) {
  if (dim < 2) return MetricKind::diag;
  if (config.metric != MetricKind::automatic) return config.metric;
  return dim <= kAutomaticDenseMetricMaxDim && config.sampler != HmcSampler::snaper
             ? MetricKind::dense
             : MetricKind::diag;
}

int automatic_superchains(std::int64_t chains) {
  for (int k = 16; k >= 2; --k)
    if (chains % k == 0 && chains / k >= 2) return k;
  return 1;
}

SampleResult new_sample_result(const SampleConfig& config, std::string device,
                               std::vector<std::string> names) {
  SampleResult result;
  result.device = std::move(device);
  result.chains = config.chains;
  result.warmup = config.warmup;
  result.draws = config.draws;
  result.names = std::move(names);
  result.superchains =
      config.superchains == 0 ? automatic_superchains(config.chains) : config.superchains;
  return result;
}

namespace {

/// Stan's default: initial points uniform in (−2, 2) on the unconstrained scale.
constexpr double kDefaultInitRadius = 2;

/// ChEES and SNAPER start from trajectories this many initial step sizes long.
constexpr double kInitialTrajectorySteps = 4;

/// Places the chains at config.initial_positions (one point for all, or one per chain); throws
/// invalid_argument when the sizes do not fit or a point's log density or gradient is not finite.
template <class T>
void place_chains(HmcBackend<T>& backend, const SampleConfig& config) {
  const int dim = backend.dim();
  const std::int64_t chains = config.chains;
  const auto given = static_cast<std::int64_t>(config.initial_positions.size());
  MYRIAD_EXPECTS(given == dim || given == chains * dim, "initial_positions has ", given,
                 " values: expected dim = ", dim,
                 " (one point for every chain) or chains x dim = ", chains * dim);
  const bool shared = given == dim;
  std::vector<T> points(static_cast<std::size_t>(chains * dim));  // [dim][chain]
  for (std::int64_t c = 0; c < chains; ++c)
    for (int d = 0; d < dim; ++d)
      points[d * chains + c] = T(config.initial_positions[shared ? d : c * dim + d]);
  const std::int64_t failed = backend.set_positions(points);
  MYRIAD_EXPECTS(failed == 0,
                 "the log density or its gradient is not finite at the given initial "
                 "point of ",
                 failed, " of ", chains, " chains");
}

/// ChEES or SNAPER in warm-up (mcmc/trajectory_length_adaptation.hpp): the ensemble's trajectory
/// length, the criterion's centre (the ensemble's mean after the previous iteration) and, for
/// SNAPER, the principal direction, updated by one power-iteration step per iteration. Disabled
/// (and never touching the backend) for fixed-length HMC and NUTS.
template <class T>
class AdaptiveTrajectory {
 public:
  AdaptiveTrajectory(HmcBackend<T>& backend, const SampleConfig& config, double step_size)
      : backend_(backend),
        config_(config),
        length_(step_size * kInitialTrajectorySteps, TrajectoryLengthAdaptation::Options{}) {
    if (!enabled()) return;
    const int dim = backend.dim();
    request_.criterion = config.sampler == HmcSampler::snaper ? TrajectoryCriterion::snaper
                                                              : TrajectoryCriterion::chees;
    // The first centre: the mean of the starting points (positions() is [dim][chain]).
    const std::vector<T> x = backend.positions();
    EnsembleMoments start;
    ensemble_moments_cpu(EnsembleView<const T>{x.data(), config.chains, dim, config.chains, 1},
                         start);
    set_centre(start);
    // Power iteration from the diagonal (1, …, 1)/√D: no principal direction of a target with
    // correlations is orthogonal to it unless by symmetry.
    if (request_.criterion == TrajectoryCriterion::snaper)
      request_.direction.assign(static_cast<std::size_t>(dim), T(1.0 / std::sqrt(double(dim))));
  }

  bool enabled() const {
    return config_.sampler == HmcSampler::chees || config_.sampler == HmcSampler::snaper;
  }

  /// Jitter over the whole length (fractions u ∈ (0, 1] of T), by the quasi-random sequence.
  void configure(HmcSettings<T>& settings) const {
    settings.jitter = T(1);
    settings.quasi_random_jitter = true;
  }

  /// One warm-up iteration at step size eps: runs it with the criterion, steps log T on the
  /// criterion's gradient and, for SNAPER, the direction; moments receives the positions' moments.
  IterationStats iteration(HmcSettings<T>& settings, std::uint32_t iteration, double eps,
                           EnsembleMoments& moments) {
    settings.max_leapfrog_steps = steps_for(length_.length(), eps);
    const int steps = jittered_leapfrog_steps(settings.seed, iteration, settings.max_leapfrog_steps,
                                              settings.jitter, true);
    const IterationStats stats =
        backend_.run_with_criterion(settings, iteration, request_, sums_, moments);
    const double weight = sums_[kCriterionWeight];
    // ∂log C/∂log T = t · (∂C/∂t) / C, t = steps · ε the iteration's trajectory length
    // (mcmc/trajectory_length_adaptation.hpp: scale-free, unlike ∂C/∂log T).
    const double value = sums_[kCriterionValue];
    const double gradient = weight > 0 && value > 0
                                ? steps * eps * sums_[kCriterionGradient] / value
                                : std::numeric_limits<double>::quiet_NaN();
    length_.update(gradient, config_.max_leapfrog_steps * eps);
    length_trace_.push_back(length_.length());
    criterion_trace_.push_back(weight > 0 ? sums_[kCriterionValue] / weight : 0.0);
    for (std::size_t d = 0; d < request_.centre.size(); ++d)
      request_.centre[d] = T(moments.mean[d]);
    if (request_.criterion == TrajectoryCriterion::snaper) next_direction(moments.count);
    return stats;
  }

  /// The ensemble changed (stranded chains restarted): the length starts again from a few steps
  /// of `step_size`, as at the start of warm-up.
  void restart(double step_size) {
    length_ = TrajectoryLengthAdaptation(step_size * kInitialTrajectorySteps,
                                         TrajectoryLengthAdaptation::Options{});
  }

  /// The metric changed: the length's average restarts (it is measured in the new metric).
  void metric_changed() { length_.restart_average(); }

  /// Reads or writes the adaptation's state, for a checkpoint.
  template <class Archive>
  void serialize(Archive& archive) {
    archive(length_, request_.centre, request_.direction, length_trace_, criterion_trace_,
            principal_variance_);
  }

  /// The sampling phase's maximum step count for the final step size; records the adaptation.
  int finish(double step_size, SampleResult& result) {
    result.trajectory_length = config_.warmup > 0 ? length_.final_length() : length_.length();
    result.trajectory_length_trace = std::move(length_trace_);
    result.criterion_trace = std::move(criterion_trace_);
    result.principal_variance = principal_variance_;
    return steps_for(result.trajectory_length, step_size);
  }

 private:
  /// Leapfrog steps of a full-length trajectory: T / ε rounded, within [1, max_leapfrog_steps].
  int steps_for(double length, double eps) const {
    const double steps = std::round(length / eps);
    return static_cast<int>(std::clamp(steps, 1.0, double(config_.max_leapfrog_steps)));
  }

  void set_centre(const EnsembleMoments& moments) {
    request_.centre.assign(moments.mean.begin(), moments.mean.end());
  }

  /// z ← Cov(y) z / ‖Cov(y) z‖ from the chains' sums of (yᵀz) y; kept when the sum vanishes.
  void next_direction(std::int64_t chains) {
    const std::size_t dim = request_.direction.size();
    double norm = 0;
    for (std::size_t d = 0; d < dim; ++d)
      norm += sums_[kCriterionDirection + d] * sums_[kCriterionDirection + d];
    norm = std::sqrt(norm);
    if (!(norm > 0) || !std::isfinite(norm)) return;
    for (std::size_t d = 0; d < dim; ++d)
      request_.direction[d] = T(sums_[kCriterionDirection + d] / norm);
    principal_variance_ = norm / double(chains);
  }

  HmcBackend<T>& backend_;
  const SampleConfig& config_;
  TrajectoryLengthAdaptation length_;
  CriterionRequest<T> request_;
  std::vector<double> sums_;
  std::vector<double> length_trace_, criterion_trace_;
  double principal_variance_ = 0;
};

/// The settings that decide a run's draws, as bytes: a checkpoint is resumed only by a run
/// whose settings (and model shape and precision) are these. The chunking, the draws file's
/// path, the memory limit and the callbacks decide none of the draws and are left out.
template <class T>
std::string run_fingerprint(const HmcBackend<T>& backend, const SampleConfig& config) {
  return detail::fingerprint_of(
      std::string("hmc"), std::uint32_t(sizeof(T)), backend.dim(), backend.quantity_names(),
      config.chains, config.warmup, config.draws, config.seed, int(config.sampler),
      config.target_accept, config.leapfrog_steps, config.max_leapfrog_steps, config.max_tree_depth,
      int(config.metric), config.jitter, config.initial_step_size, config.init_radius,
      config.initial_positions, config.init_tries, config.adapt_step_size, config.adapt_metric,
      config.restart_stranded, config.superchains, config.cpu_simd_lanes, config.thin,
      config.keep_draws, !config.draws_path.empty());
}

/// One HMC run: initialisation, windowed warm-up, sampling in chunks and diagnostics, as a
/// sequence of iterations whose whole state between any two of them is the members below
/// (serialize): a checkpoint writes it, a resumed run reads it and goes on from there.
template <class T>
class HmcRun final : public McmcRun<HmcRun<T>, HmcBackend<T>, SampleConfig, HmcSettings<T>, T> {
  using Base = McmcRun<HmcRun<T>, HmcBackend<T>, SampleConfig, HmcSettings<T>, T>;
  friend Base;

 public:
  HmcRun(HmcBackend<T>& backend, const SampleConfig& config)
      : Base(backend, config),
        dim_(backend.dim()),
        dense_(resolve_metric(config, dim_) == MetricKind::dense),
        schedule_(WarmupSchedule::make(config.warmup, config.adapt_metric)),
        variance_(dense_ ? 0 : dim_),
        covariance_(dense_ ? dim_ : 0),
        inverse_metric_(static_cast<std::size_t>(dim_), T(1)) {
    result_.leapfrog_steps = config.leapfrog_steps;
    result_.jitter = config.jitter;
    settings_.max_leapfrog_steps = config.leapfrog_steps;
    settings_.jitter = T(config.jitter);
  }

 private:
  /// The host memory the run needs, checked before it starts (run/host_memory.hpp).
  HostMemoryPlan plan_memory() const {
    const bool on_cpu = backend_.device_name().rfind("cpu", 0) == 0;
    return plan_host_memory(config_, dim_, quantities_, sizeof(T), on_cpu);
  }

  /// Checks for stranded chains up to the terminal step-size interval, so that a restarted
  /// chain has that interval and the sampling phase to part from the chain it restarted from.
  void before_warmup() {
    restarts_until_ =
        schedule_.adapt_metric ? schedule_.window_ends.back() + 1 : config_.warmup * 9 / 10;
  }

  /// Initial points (given, or drawn: the chains of one superchain share theirs), the identity
  /// metric and the first step size.
  void start() {
    const auto warmup_start = Clock::now();
    if (!config_.initial_positions.empty()) {
      place_chains(backend_, config_);
      // Automatic superchains group shared drawn starts; given starts form none unless asked.
      if (config_.superchains == 0) result_.superchains = 1;
    } else {
      const double radius = config_.init_radius > 0 ? config_.init_radius : kDefaultInitRadius;
      const std::int64_t failed =
          backend_.initialize(config_.seed, T(radius), config_.init_tries,
                              chains_per_initial_point(config_.chains, result_.superchains));
      if (failed > 0) {
        throw invalid_argument(detail::concat("could not find a finite initial point for ", failed,
                                              " of ", config_.chains, " chains after ",
                                              config_.init_tries,
                                              " tries (log density or gradient not finite in [-",
                                              radius, ", ", radius, "]^", dim_, ")"));
      }
    }
    backend_.set_inverse_metric(inverse_metric_);
    step_ = config_.initial_step_size;
    if (step_ == 0) step_ = reasonable_step_size();
    adapter_ = DualAveraging(step_, DualAveraging::Options{config_.target_accept});
    trajectory_.emplace(backend_, config_, step_);
    if (trajectory_->enabled()) trajectory_->configure(settings_);
    if (config_.sampler == HmcSampler::nuts) settings_.max_tree_depth = config_.max_tree_depth;
    restarts_.emplace(backend_, config_.seed, result_, dim_);
    result_.warmup_seconds += seconds_since(warmup_start);
  }

  /// Stan's heuristic: one-step trajectories without jitter; each probe is a real iteration (a
  /// valid move).
  double reasonable_step_size() {
    HmcSettings<T> probe_settings = settings_;
    probe_settings.max_leapfrog_steps = 1;
    probe_settings.jitter = T(0);
    return find_reasonable_step_size([&](double eps) {
      probe_settings.step_size = T(eps);
      const IterationStats s =
          backend_.run(probe_settings, iteration_++, 1, nullptr, 0, 0, nullptr);
      result_.warmup_stats += s;
      return s.mean_accept_prob();
    });
  }

  /// Warm-up iteration w: one iteration per launch so that the pooled acceptance steers the
  /// step size (and, for ChEES and SNAPER, the criterion's gradient the trajectory length).
  void warmup_iteration(int w) {
    const double eps = config_.adapt_step_size ? adapter_.step_size() : step_;
    settings_.step_size = T(eps);
    const bool collect = schedule_.in_metric_window(w);
    const IterationStats s = trajectory_->enabled()
                                 ? trajectory_->iteration(settings_, iteration_++, eps, moments_)
                                 : backend_.run(settings_, iteration_++, 1, nullptr, 0, 0,
                                                collect && !dense_ ? &moments_ : nullptr);
    result_.warmup_stats += s;
    // ChEES, SNAPER and NUTS steer the step size by the harmonic mean over chains of the
    // acceptance (the worst chains dominate it: a step every chain can take in a curved
    // target's tails); fixed-length HMC by the arithmetic mean, as Stan's single chain does.
    if (config_.adapt_step_size)
      adapter_.update(config_.sampler == HmcSampler::hmc ? s.mean_accept_prob()
                                                         : s.harmonic_accept_prob());
    if (collect && dense_) {
      backend_.position_covariance(covariance_batch_);
      covariance_.add(covariance_batch_);
    }
    if (collect && !dense_) variance_.add(moments_);
    if (collect && schedule_.ends_window(w)) update_metric();
    if (config_.restart_stranded && (w + 1) % kRestartCheckIterations == 0 &&
        w + 1 < restarts_until_) {
      // Chains far behind the ensemble held its step size (and so the trajectory length) at
      // what their stiffness allows; with them restarted, both are found afresh, as at the start
      // (mcmc/chain_restarts.hpp).
      const RestartPlan plan = restarts_->check(w);
      if (plan.restart && plan.far_behind > 0 && config_.adapt_step_size) {
        adapter_.restart(config_.initial_step_size > 0 ? config_.initial_step_size
                                                       : reasonable_step_size());
        if (trajectory_->enabled()) trajectory_->restart(adapter_.step_size());
      }
    }
  }

  /// The end of a metric window: Stan's regularisation towards 1e-3 · I,
  /// (n/(n+5))·Σ + 1e-3·5/(n+5)·I.
  void update_metric() {
    const double n = static_cast<double>(dense_ ? covariance_.count() : variance_.count());
    const double shrink = n / (n + 5.0), ridge = 1e-3 * (5.0 / (n + 5.0));
    if (dense_) {
      inverse_metric_.assign(static_cast<std::size_t>(dim_) * dim_, T(0));
      for (int i = 0; i < dim_; ++i)
        for (int j = 0; j < dim_; ++j)
          inverse_metric_[i * dim_ + j] =
              T(shrink * covariance_.covariance(i, j) + (i == j ? ridge : 0.0));
      covariance_.reset();
    } else {
      for (int d = 0; d < dim_; ++d) inverse_metric_[d] = T(shrink * variance_.variance(d) + ridge);
      variance_.reset();
    }
    backend_.set_inverse_metric(inverse_metric_);
    if (config_.adapt_step_size) adapter_.restart(adapter_.step_size());
    if (trajectory_->enabled()) trajectory_->metric_changed();
  }

  /// The end of warm-up: the final step size, metric and trajectory settings recorded, and the
  /// log densities the sampling phase's stuck chains are found against.
  void prepare_sampling() {
    if (config_.adapt_step_size && config_.warmup > 0) step_ = adapter_.final_step_size();
    result_.step_size = step_;
    // The metric sampling runs with: the identity, a diagonal one, when no window adapted it.
    result_.metric = inverse_metric_.size() > static_cast<std::size_t>(dim_) ? MetricKind::dense
                                                                             : MetricKind::diag;
    result_.inverse_metric.assign(inverse_metric_.begin(), inverse_metric_.end());
    if (trajectory_->enabled()) {
      settings_.max_leapfrog_steps = trajectory_->finish(step_, result_);
      result_.leapfrog_steps = settings_.max_leapfrog_steps;
      result_.jitter = static_cast<double>(settings_.jitter);
    }
    if (config_.sampler == HmcSampler::nuts) {
      result_.leapfrog_steps = 0;
      result_.jitter = 0;
      result_.max_tree_depth = config_.max_tree_depth;
    }
    settings_.step_size = T(step_);
    sampling_start_density_ = backend_.log_densities();
    sampling_prepared_ = true;
  }

  IterationStats run_draws(std::uint32_t iteration, int n, TraceSink<T>* sink, int first_draw,
                           int chunk) {
    return backend_.run(settings_, iteration, n, sink, first_draw, chunk, nullptr);
  }

  std::string fingerprint() const { return run_fingerprint(backend_, config_); }

  template <class Archive>
  void write_chains(Archive& archive) {
    const HmcChainState<T> chains = backend_.chain_state();
    archive(chains.position, chains.gradient, chains.log_density);
  }

  /// The objects that read the ensemble when made are made over the restored one, then take
  /// their saved state (serialize).
  template <class Archive>
  void read_chains(Archive& archive) {
    HmcChainState<T> chains;
    archive(chains.position, chains.gradient, chains.log_density);
    backend_.restore_chain_state(chains);
    trajectory_.emplace(backend_, config_, 1.0);
    restarts_.emplace(backend_, config_.seed, result_, dim_);
  }

  void after_resume() { backend_.set_inverse_metric(inverse_metric_); }

  /// The run's whole state between iterations (the ensemble's chains aside): the same list reads
  /// and writes a checkpoint.
  template <class Archive>
  void serialize(Archive& archive) {
    this->serialize_common(archive);
    archive(*trajectory_, variance_, covariance_, inverse_metric_, *restarts_,
            sampling_start_density_);
    archive(settings_.seed, settings_.step_size, settings_.max_leapfrog_steps, settings_.jitter,
            settings_.quasi_random_jitter, settings_.max_energy_error, settings_.max_tree_depth);
    SampleResult& r = result_;
    detail::serialize_result_totals(archive, r);
    archive(r.metric, r.inverse_metric, r.leapfrog_steps, r.jitter, r.trajectory_length,
            r.trajectory_length_trace, r.criterion_trace, r.principal_variance, r.max_tree_depth,
            r.initialisation_failures);
  }

  using Base::adapter_, Base::backend_, Base::config_, Base::iteration_, Base::quantities_,
      Base::restarts_, Base::result_, Base::sampling_prepared_, Base::sampling_start_density_,
      Base::settings_, Base::step_;

  const int dim_;
  const bool dense_;
  const WarmupSchedule schedule_;
  int restarts_until_ = 0;

  // The state a checkpoint holds beside the base's (serialize).
  std::optional<AdaptiveTrajectory<T>> trajectory_;
  WelfordVariance variance_;
  WelfordCovariance covariance_;
  std::vector<T> inverse_metric_;

  // Scratch of one warm-up iteration.
  EnsembleMoments moments_;
  EnsembleCovariance covariance_batch_;
};

}  // namespace

template <class T>
SampleResult run_hmc(HmcBackend<T>& backend, const SampleConfig& config) {
  config.validate();
  check_metric_dimension(config, backend.dim());
  return HmcRun<T>(backend, config).run();
}

template SampleResult run_hmc<float>(HmcBackend<float>&, const SampleConfig&);
template SampleResult run_hmc<double>(HmcBackend<double>&, const SampleConfig&);

}  // namespace myriad
