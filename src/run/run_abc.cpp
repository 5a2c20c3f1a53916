// Drivers of the ABC baselines: rejection (independent prior simulations) and pseudo-marginal
// ABC-MCMC with a warm-up that adapts the random-walk scale.

#include <cmath>

#include "myriad/backend/abc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/run/abc_config.hpp"
#include "myriad/run/sample_abc.hpp"
#include "trace.hpp"

namespace myriad {

void AbcConfig::validate_abc() const {
  validate();
  MYRIAD_EXPECTS(!checkpoint.enabled() && !checkpoint.resume,
                 "checkpoints are available for the HMC samplers on density models (hmc, chees, "
                 "snaper, nuts) only");
  MYRIAD_EXPECTS(std::isfinite(epsilon) && epsilon > 0, "abc epsilon must be positive, got ",
                 epsilon);
  MYRIAD_EXPECTS(std::isfinite(proposal_scale) && proposal_scale > 0,
                 "abc proposal scale must be positive, got ", proposal_scale);
  MYRIAD_EXPECTS(target_accept_abc > 0 && target_accept_abc < 1,
                 "abc target acceptance must lie in (0, 1), got ", target_accept_abc);
  validate_without_hmc_settings("the ABC samplers", "the ABC samplers start from prior draws");
}

template <class T>
SampleResult run_abc_rejection(AbcBackend<T>& backend, const AbcConfig& config,
                               AbcRejectionSummary& summary) {
  config.validate_abc();
  SampleResult result;
  result.device = backend.device_name();
  result.names = backend.quantity_names();
  const auto start = Clock::now();
  const std::int64_t simulations = config.chains * config.draws;
  const AbcRejectionResult r = backend.rejection(config.seed, 0, simulations, T(config.epsilon));
  result.sampling_seconds = seconds_since(start);
  summary = {r.simulations, r.accepted, r.non_finite};
  result.sampling_stats.transitions = r.simulations;
  result.sampling_stats.accepted = r.accepted;
  result.sampling_stats.non_finite = r.non_finite;
  // Accepted simulations are independent draws: one "chain" each with one draw, so R-hat and
  // ESS are undefined (NaN) and the moments and quantiles are those of the accepted set.
  result.chains = r.accepted;
  result.draws = 1;
  result.kept_draws = 1;
  result.superchains = 1;
  result.draws_data = r.quantities;
  if (r.accepted > 0) {
    SampleConfig trace = config;
    trace.chains = r.accepted;
    trace.draws = 1;
    trace.thin = 1;
    diagnose_trace(result, trace);
  }
  return result;
}

template <class T>
SampleResult run_abc_mcmc(AbcBackend<T>& backend, const AbcConfig& config) {
  config.validate_abc();
  SampleResult result = new_sample_result(config, backend.device_name(), backend.quantity_names());
  result.superchains = 1;  // every ABC-MCMC chain is initialised on its own: no shared starts
  const int quantities = backend.num_quantities();
  // The trace's share of host memory: a run over --memory-limit is refused here, before it
  // starts, and a streamed trace is diagnosed in blocks that fit.
  const HostMemoryPlan memory = plan_host_memory(config, 0, quantities, sizeof(T), false);

  AbcStep<T> step;
  step.kernel = config.kernel;
  step.epsilon = T(config.epsilon);
  step.proposal_scale = T(config.proposal_scale);
  step.parameters = backend.parameter_count();
  const auto warmup_start = Clock::now();
  const std::int64_t failed = backend.initialize(config.seed, config.init_tries, step);
  if (failed > 0) {
    throw invalid_argument(detail::concat("could not start ", failed, " of ", config.chains,
                                          " ABC-MCMC chains inside the tolerance"));
  }
  // Warm-up: the random-walk scale by dual averaging towards the target acceptance.
  DualAveraging adapter(config.proposal_scale, DualAveraging::Options{config.target_accept_abc});
  std::uint32_t iteration = 0;
  for (int w = 0; w < config.warmup; ++w) {
    step.proposal_scale = T(adapter.step_size());
    const IterationStats s = backend.run(config.seed, step, iteration++, 1, nullptr, 0, 0);
    result.warmup_stats += s;
    adapter.update(s.mean_accept_prob());
  }
  if (config.warmup > 0) step.proposal_scale = T(adapter.final_step_size());
  result.step_size = static_cast<double>(step.proposal_scale);
  result.warmup_seconds = seconds_since(warmup_start);

  const auto sampling_start = Clock::now();
  TraceSink<T> sink(result, config, quantities);
  result.sampling_stats = backend.run(config.seed, step, iteration, config.draws, &sink, 0,
                                      chunk_draws(config, quantities, sizeof(T)));
  result.sampling_seconds = seconds_since(sampling_start);
  finish_trace(result, config, sink, memory);
  return result;
}

template SampleResult run_abc_rejection<double>(AbcBackend<double>&, const AbcConfig&,
                                                AbcRejectionSummary&);
template SampleResult run_abc_mcmc<double>(AbcBackend<double>&, const AbcConfig&);

}  // namespace myriad
