// The host scheduler for many-chain HMC: initialise → warm-up → sample → diagnose.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace

template <class T>
SampleResult run_hmc(HmcBackend<T>& backend, const SampleConfig& config) {
  config.validate();
  MYRIAD_EXPECTS(backend.chains() == config.chains, "backend has ", backend.chains(),
                 " chains but the configuration asks for ", config.chains);
  SampleResult result = new_sample_result(config, backend.device_name(), backend.quantity_names());
  result.leapfrog_steps = config.leapfrog_steps;
  result.jitter = config.jitter;
  const int dim = backend.dim();
  const int quantities = backend.num_quantities();
  check_metric_dimension(config, dim);
  const bool dense = resolve_metric(config, dim) == MetricKind::dense;

  // Initialisation: the given points, or drawn ones (chains of one superchain share theirs).
  const auto warmup_start = Clock::now();
  if (!config.initial_positions.empty()) {
    place_chains(backend, config);
    // Automatic superchains group shared drawn starts; given starts form none unless asked.
    if (config.superchains == 0) result.superchains = 1;
  } else {
    const double radius = config.init_radius > 0 ? config.init_radius : kDefaultInitRadius;
    const std::int64_t failed =
        backend.initialize(config.seed, T(radius), config.init_tries,
                           chains_per_initial_point(config.chains, result.superchains));
    if (failed > 0) {
      throw invalid_argument(detail::concat(
          "could not find a finite initial point for ", failed, " of ", config.chains,
          " chains after ", config.init_tries, " tries (log density or gradient not finite in [-",
          radius, ", ", radius, "]^", dim, ")"));
    }
  }

  HmcSettings<T> settings;
  settings.seed = config.seed;
  settings.max_leapfrog_steps = config.leapfrog_steps;
  settings.jitter = T(config.jitter);
  std::vector<T> inverse_metric(dim, T(1));
  backend.set_inverse_metric(inverse_metric);

  // Iteration numbers key the random numbers; they run on across phases.
  std::uint32_t iteration = 0;
  // Stan's heuristic: one-step trajectories without jitter; each probe is a real iteration (a
  // valid move).
  const auto reasonable_step_size = [&] {
    HmcSettings<T> probe_settings = settings;
    probe_settings.max_leapfrog_steps = 1;
    probe_settings.jitter = T(0);
    return find_reasonable_step_size([&](double eps) {
      probe_settings.step_size = T(eps);
      const IterationStats s = backend.run(probe_settings, iteration++, 1, nullptr, 0, 0, nullptr);
      result.warmup_stats += s;
      return s.mean_accept_prob();
    });
  };
  double step = config.initial_step_size;
  if (step == 0) step = reasonable_step_size();

  // Warm-up: one iteration per launch so that the pooled acceptance steers the step size (and,
  // for ChEES and SNAPER, the criterion's gradient the trajectory length).
  const WarmupSchedule schedule = WarmupSchedule::make(config.warmup, config.adapt_metric);
  DualAveraging adapter(step, DualAveraging::Options{config.target_accept});
  AdaptiveTrajectory<T> trajectory(backend, config, step);
  if (trajectory.enabled()) trajectory.configure(settings);
  if (config.sampler == HmcSampler::nuts) settings.max_tree_depth = config.max_tree_depth;
  WelfordVariance variance(dense ? 0 : dim);
  WelfordCovariance covariance(dense ? dim : 0);
  EnsembleMoments moments;
  EnsembleCovariance covariance_batch;
  const int progress_every = std::max(1, config.warmup / 100);
  // Checks for stranded chains up to the terminal step-size interval, so that a restarted chain
  // has that interval and the sampling phase to part from the chain it restarted from.
  const int restarts_until =
      schedule.adapt_metric ? schedule.window_ends.back() + 1 : config.warmup * 9 / 10;
  StrandedChainRestarts<HmcBackend<T>> restarts(backend, config.seed, result, dim);
  for (int w = 0; w < config.warmup; ++w) {
    const double eps = config.adapt_step_size ? adapter.step_size() : step;
    settings.step_size = T(eps);
    const bool collect = schedule.in_metric_window(w);
    const IterationStats s = trajectory.enabled()
                                 ? trajectory.iteration(settings, iteration++, eps, moments)
                                 : backend.run(settings, iteration++, 1, nullptr, 0, 0,
                                               collect && !dense ? &moments : nullptr);
    result.warmup_stats += s;
    // ChEES, SNAPER and NUTS steer the step size by the harmonic mean over chains of the
    // acceptance (the worst chains dominate it: a step every chain can take in a curved
    // target's tails); fixed-length HMC by the arithmetic mean, as Stan's single chain does.
    if (config.adapt_step_size)
      adapter.update(config.sampler == HmcSampler::hmc ? s.mean_accept_prob()
                                                       : s.harmonic_accept_prob());
    if (collect && dense) {
      backend.position_covariance(covariance_batch);
      covariance.add(covariance_batch);
    }
    if (collect && !dense) variance.add(moments);
    if (collect && schedule.ends_window(w)) {
      // Stan's regularisation towards 1e-3 · I: (n/(n+5))·Σ + 1e-3·5/(n+5)·I.
      const double n = static_cast<double>(dense ? covariance.count() : variance.count());
      const double shrink = n / (n + 5.0), ridge = 1e-3 * (5.0 / (n + 5.0));
      if (dense) {
        inverse_metric.assign(static_cast<std::size_t>(dim) * dim, T(0));
        for (int i = 0; i < dim; ++i)
          for (int j = 0; j < dim; ++j)
            inverse_metric[i * dim + j] =
                T(shrink * covariance.covariance(i, j) + (i == j ? ridge : 0.0));
        covariance.reset();
      } else {
        for (int d = 0; d < dim; ++d) inverse_metric[d] = T(shrink * variance.variance(d) + ridge);
        variance.reset();
      }
      backend.set_inverse_metric(inverse_metric);
      if (config.adapt_step_size) adapter.restart(adapter.step_size());
      if (trajectory.enabled()) trajectory.metric_changed();
    }
    if (config.restart_stranded && (w + 1) % kRestartCheckIterations == 0 &&
        w + 1 < restarts_until) {
      // Chains far behind the ensemble held its step size (and so the trajectory length) at
      // what their stiffness allows; with them restarted, both are found afresh, as at the start
      // (mcmc/chain_restarts.hpp).
      const RestartPlan plan = restarts.check(w);
      if (plan.restart && plan.far_behind > 0 && config.adapt_step_size) {
        adapter.restart(config.initial_step_size > 0 ? config.initial_step_size
                                                     : reasonable_step_size());
        if (trajectory.enabled()) trajectory.restart(adapter.step_size());
      }
    }
    if (config.progress && (w + 1) % progress_every == 0)
      config.progress({"warmup", w + 1, config.warmup});
  }
  if (config.adapt_step_size && config.warmup > 0) step = adapter.final_step_size();
  result.step_size = step;
  // The metric sampling runs with: the identity, a diagonal one, when no window adapted it.
  result.metric =
      inverse_metric.size() > static_cast<std::size_t>(dim) ? MetricKind::dense : MetricKind::diag;
  result.inverse_metric.assign(inverse_metric.begin(), inverse_metric.end());
  if (trajectory.enabled()) {
    settings.max_leapfrog_steps = trajectory.finish(step, result);
    result.leapfrog_steps = settings.max_leapfrog_steps;
    result.jitter = static_cast<double>(settings.jitter);
  }
  if (config.sampler == HmcSampler::nuts) {
    result.leapfrog_steps = 0;
    result.jitter = 0;
    result.max_tree_depth = config.max_tree_depth;
  }
  result.warmup_seconds = seconds_since(warmup_start);

  // Sampling: fused chunks of iterations, draws streamed to the host.
  const auto sampling_start = Clock::now();
  settings.step_size = T(step);
  TraceSink<T> sink(result, config, quantities);
  const std::vector<T> sampling_start_density = backend.log_densities();
  result.sampling_stats =
      backend.run(settings, iteration, config.draws, &sink, 0,
                  chunk_iterations_for(config, quantities, sizeof(T)), nullptr);
  result.sampling_stuck_chains = unchanged_chains(sampling_start_density, backend.log_densities());
  result.sampling_seconds = seconds_since(sampling_start);
  diagnose_trace(result, config);
  return result;
}

template SampleResult run_hmc<float>(HmcBackend<float>&, const SampleConfig&);
template SampleResult run_hmc<double>(HmcBackend<double>&, const SampleConfig&);

}  // namespace myriad
