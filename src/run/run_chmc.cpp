// The host scheduler for many-chain constrained HMC: initialise on the manifold → warm-up
// (ensemble step size by dual averaging on the pooled acceptance, each chain backing off its own
// step while it cannot move, mcmc/step_back_off.hpp; identity mass matrix, as in the papers) →
// sample at the ensemble's step → diagnose.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mcmc_run.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/mcmc/step_size_search.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/sample_chmc.hpp"

namespace myriad {

void ChmcConfig::validate_chmc() const {
  validate();
  MYRIAD_EXPECTS(inner_steps >= 1, "inner_steps must be >= 1, got ", inner_steps);
  MYRIAD_EXPECTS(min_steps >= 1 && max_steps >= min_steps,
                 "trajectory steps need 1 <= min_steps <= max_steps, got ", min_steps, " and ",
                 max_steps);
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"constraint_tol", constraint_tol},
        {"position_tol", position_tol},
        {"reverse_tol", reverse_tol},
        {"divergence_tol", divergence_tol}}) {
    MYRIAD_EXPECTS(std::isfinite(value) && value > 0, name, " must be positive, got ", value);
  }
  MYRIAD_EXPECTS(max_iterations >= 1, "max_iterations must be >= 1, got ", max_iterations);
  validate_without_hmc_settings(
      "constrained HMC",
      "constrained HMC starts each chain on the manifold with the generator's initialize()");
}

namespace {

/// The settings that decide a constrained run's draws, as bytes (run_hmc.cpp's run_fingerprint
/// for constrained HMC): the chains' state is the backend's own layout, so its kind (the device
/// name's first word) and chain mapping are part of it.
template <class T>
std::string chmc_fingerprint(const ChmcBackend<T>& backend, const ChmcConfig& config) {
  const std::string device = backend.device_name();
  return detail::fingerprint_of(
      std::string("chmc"), std::uint32_t(sizeof(T)), device.substr(0, device.find(' ')),
      backend.input_dim(), backend.quantity_names(), config.chains, config.warmup, config.draws,
      config.seed, config.target_accept, config.initial_step_size, config.init_tries,
      config.adapt_step_size, config.restart_stranded, config.superchains, config.cpu_simd_lanes,
      config.thin, config.keep_draws, !config.draws_path.empty(), config.inner_steps,
      config.min_steps, config.max_steps, config.constraint_tol, config.position_tol,
      config.reverse_tol, config.divergence_tol, config.max_iterations, int(config.chain_mapping),
      int(config.gram_factorization), config.step_back_off);
}

/// One constrained HMC run as a sequence of iterations with explicit state (serialize), as
/// run_hmc.cpp's HmcRun (mcmc_run.hpp: the order of a run and its checkpoints): a checkpoint
/// writes it with the backend's chain state, a resumed run reads both and goes on.
template <class T>
class ChmcRun final : public McmcRun<ChmcRun<T>, ChmcBackend<T>, ChmcConfig, ChmcSettings<T>, T> {
  using Base = McmcRun<ChmcRun<T>, ChmcBackend<T>, ChmcConfig, ChmcSettings<T>, T>;
  friend Base;

 public:
  ChmcRun(ChmcBackend<T>& backend, const ChmcConfig& config) : Base(backend, config) {
    result_.leapfrog_steps = config.max_steps;
    result_.inverse_metric.assign(backend.input_dim(), 1.0);
    settings_.min_steps = config.min_steps;
    settings_.max_steps = config.max_steps;
    settings_.step.inner_steps = config.inner_steps;
    settings_.step.constraint_tol = T(config.constraint_tol);
    settings_.step.position_tol = T(config.position_tol);
    settings_.step.reverse_tol = T(config.reverse_tol);
    settings_.step.divergence_tol = T(config.divergence_tol);
    settings_.step.max_iterations = config.max_iterations;
  }

 private:
  // The trace's share of host memory: a run over --memory-limit is refused before it starts,
  // and a streamed trace is diagnosed in blocks that fit.
  HostMemoryPlan plan_memory() const {
    return plan_host_memory(config_, 0, quantities_, sizeof(T), false);
  }

  void start() {
    const auto warmup_start = Clock::now();
    const std::int64_t failed =
        backend_.initialize(config_.seed, config_.init_tries,
                            chains_per_initial_point(config_.chains, result_.superchains));
    if (failed > 0) {
      throw invalid_argument(detail::concat("could not place ", failed, " of ", config_.chains,
                                            " chains on the manifold after ", config_.init_tries,
                                            " attempts (the generator's initialize() failed)"));
    }
    step_ = config_.initial_step_size;
    if (step_ == 0) {
      // One outer step per probe; failures count as zero acceptance.
      ChmcSettings<T> probe = settings_;
      probe.min_steps = probe.max_steps = 1;
      step_ = find_reasonable_step_size([&](double eps) {
        probe.step.step_size = T(eps);
        const IterationStats s = backend_.run(probe, iteration_++, 1, nullptr, 0, 0);
        result_.warmup_stats += s;
        return s.mean_accept_prob();
      });
    }
    adapter_ = DualAveraging(step_, DualAveraging::Options{config_.target_accept});
    restarts_.emplace(backend_, config_.seed, result_);
    result_.warmup_seconds += seconds_since(warmup_start);
  }

  // Stranded chains (docs/tuning.md) are checked for up to 90% of warm-up, so that a restarted
  // chain has the rest of it to part from its source; the step back-off frees the chains a
  // smaller step can move, the restarts those it cannot.
  void before_warmup() { settings_.step_back_off = config_.step_back_off; }

  void warmup_iteration(int w) {
    settings_.step.step_size = T(config_.adapt_step_size ? adapter_.step_size() : step_);
    const IterationStats s = backend_.run(settings_, iteration_++, 1, nullptr, 0, 0);
    result_.warmup_stats += s;
    if (config_.adapt_step_size) adapter_.update(s.mean_accept_prob());
    if (config_.restart_stranded && (w + 1) % kRestartCheckIterations == 0 &&
        w + 1 < config_.warmup * 9 / 10)
      restarts_->check(w);
  }

  /// The end of warm-up: the final step for every chain, each chain's back-off recorded.
  void prepare_sampling() {
    if (config_.adapt_step_size && config_.warmup > 0) step_ = adapter_.final_step_size();
    result_.step_size = step_;
    for (const std::uint8_t halvings : backend_.step_halvings()) {
      result_.warmup_backed_off_chains += halvings > 0;
      result_.warmup_max_step_halvings = std::max<int>(result_.warmup_max_step_halvings, halvings);
    }
    sampling_start_density_ = backend_.log_densities();
    sampling_prepared_ = true;
  }

  IterationStats run_draws(std::uint32_t iteration, int n, TraceSink<T>* sink, int first_draw,
                           int chunk) {
    settings_.step_back_off = false;  // sampling runs every chain at the ensemble's step
    settings_.step.step_size = T(step_);
    return backend_.run(settings_, iteration, n, sink, first_draw, chunk);
  }

  std::string fingerprint() const { return chmc_fingerprint(backend_, config_); }

  template <class Archive>
  void write_chains(Archive& archive) {
    archive(backend_.chain_state().arrays);
  }

  template <class Archive>
  void read_chains(Archive& archive) {
    ChmcChainState chains;
    archive(chains.arrays);
    backend_.restore_chain_state(chains);
    restarts_.emplace(backend_, config_.seed, result_);
  }

  void after_resume() {}

  /// The run's whole state between iterations, the chains aside (one list reads and writes).
  template <class Archive>
  void serialize(Archive& archive) {
    this->serialize_common(archive);
    archive(*restarts_, sampling_start_density_);
    detail::serialize_result_totals(archive, result_);
    archive(result_.warmup_backed_off_chains, result_.warmup_max_step_halvings);
  }

  using Base::adapter_, Base::backend_, Base::config_, Base::iteration_, Base::quantities_,
      Base::restarts_, Base::result_, Base::sampling_prepared_, Base::sampling_start_density_,
      Base::settings_, Base::step_;
};

}  // namespace

template <class T>
SampleResult run_chmc(ChmcBackend<T>& backend, const ChmcConfig& config) {
  config.validate_chmc();
  return ChmcRun<T>(backend, config).run();
}

template SampleResult run_chmc<double>(ChmcBackend<double>&, const ChmcConfig&);

}  // namespace myriad
