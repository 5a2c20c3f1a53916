// The host scheduler for many-chain constrained HMC: initialise on the manifold → warm-up
// (ensemble step size by dual averaging on the pooled acceptance, each chain backing off its own
// step while it cannot move, mcmc/step_back_off.hpp; identity mass matrix, as in the papers) →
// sample at the ensemble's step → diagnose.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/mcmc/step_size_search.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/sample_constrained.hpp"
#include "stranded_chains.hpp"
#include "trace.hpp"

namespace myriad {

void ChmcConfig::validate_constrained() const {
  validate();
  MYRIAD_EXPECTS(!checkpoint.enabled() && !checkpoint.resume,
                 "checkpoints are available for the HMC samplers on density models (hmc, chees, "
                 "snaper, nuts) only");
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
  MYRIAD_EXPECTS(sampler == HmcSampler::hmc, "sampler ", to_string(sampler),
                 " applies to HMC on a density model, not to constrained HMC");
  MYRIAD_EXPECTS(metric != MetricKind::dense,
                 "a dense metric applies to HMC on a density model, not to constrained HMC");
  MYRIAD_EXPECTS(initial_positions.empty() && init_radius == 0,
                 "initial_positions and init_radius apply to HMC: constrained HMC starts each "
                 "chain on the manifold with the generator's initialize()");
}

template <class T>
SampleResult run_chmc(ChmcBackend<T>& backend, const ChmcConfig& config) {
  config.validate_constrained();
  MYRIAD_EXPECTS(backend.chains() == config.chains, "backend has ", backend.chains(),
                 " chains but the configuration asks for ", config.chains);
  SampleResult result = new_sample_result(config, backend.device_name(), backend.quantity_names());
  result.leapfrog_steps = config.max_steps;
  const int quantities = backend.num_quantities();
  // The trace's share of host memory: a run over --memory-limit is refused here, before it
  // starts, and a streamed trace is diagnosed in blocks that fit.
  const HostMemoryPlan memory = plan_host_memory(config, 0, quantities, sizeof(T), false);

  const auto warmup_start = Clock::now();
  const std::int64_t failed = backend.initialize(
      config.seed, config.init_tries, chains_per_initial_point(config.chains, result.superchains));
  if (failed > 0) {
    throw invalid_argument(detail::concat("could not place ", failed, " of ", config.chains,
                                          " chains on the manifold after ", config.init_tries,
                                          " attempts (the generator's initialize() failed)"));
  }

  ChmcSettings<T> settings;
  settings.seed = config.seed;
  settings.min_steps = config.min_steps;
  settings.max_steps = config.max_steps;
  settings.step.inner_steps = config.inner_steps;
  settings.step.constraint_tol = T(config.constraint_tol);
  settings.step.position_tol = T(config.position_tol);
  settings.step.reverse_tol = T(config.reverse_tol);
  settings.step.divergence_tol = T(config.divergence_tol);
  settings.step.max_iterations = config.max_iterations;
  result.inverse_metric.assign(backend.input_dim(), 1.0);

  std::uint32_t iteration = 0;
  double step = config.initial_step_size;
  if (step == 0) {
    // One outer step per probe; failures count as zero acceptance.
    ChmcSettings<T> probe = settings;
    probe.min_steps = probe.max_steps = 1;
    step = find_reasonable_step_size([&](double eps) {
      probe.step.step_size = T(eps);
      const IterationStats s = backend.run(probe, iteration++, 1, nullptr, 0, 0);
      result.warmup_stats += s;
      return s.mean_accept_prob();
    });
  }
  DualAveraging adapter(step, DualAveraging::Options{config.target_accept});
  settings.step_back_off = config.step_back_off;
  const int progress_every = std::max(1, config.warmup / 100);
  // Stranded chains (docs/tuning.md) are checked for up to 90% of warm-up, so that a restarted
  // chain has the rest of it to part from its source; the step back-off frees the chains a
  // smaller step can move, the restarts those it cannot.
  const int restarts_until = config.warmup * 9 / 10;
  StrandedChainRestarts<ChmcBackend<T>> restarts(backend, config.seed, result);
  for (int w = 0; w < config.warmup; ++w) {
    settings.step.step_size = T(config.adapt_step_size ? adapter.step_size() : step);
    const IterationStats s = backend.run(settings, iteration++, 1, nullptr, 0, 0);
    result.warmup_stats += s;
    if (config.adapt_step_size) adapter.update(s.mean_accept_prob());
    if (config.restart_stranded && (w + 1) % kRestartCheckIterations == 0 && w + 1 < restarts_until)
      restarts.check(w);
    if (config.progress && (w + 1) % progress_every == 0)
      config.progress({"warmup", w + 1, config.warmup});
  }
  if (config.adapt_step_size && config.warmup > 0) step = adapter.final_step_size();
  result.step_size = step;
  result.warmup_seconds = seconds_since(warmup_start);

  settings.step_back_off = false;
  for (const std::uint8_t halvings : backend.step_halvings()) {
    result.warmup_backed_off_chains += halvings > 0;
    result.warmup_max_step_halvings = std::max<int>(result.warmup_max_step_halvings, halvings);
  }

  const auto sampling_start = Clock::now();
  settings.step.step_size = T(step);
  TraceSink<T> sink(result, config, quantities);
  const std::vector<T> sampling_start_density = backend.log_densities();
  result.sampling_stats = backend.run(settings, iteration, config.draws, &sink, 0,
                                      chunk_draws(config, quantities, sizeof(T)));
  result.sampling_stuck_chains = unchanged_chains(sampling_start_density, backend.log_densities());
  result.sampling_seconds = seconds_since(sampling_start);
  finish_trace(result, config, sink, memory);
  return result;
}

template SampleResult run_chmc<double>(ChmcBackend<double>&, const ChmcConfig&);

}  // namespace myriad
