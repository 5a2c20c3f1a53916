// The driver of the auxiliary-variable samplers (run/sample_auxiliary.hpp): start, warm-up and
// sampling on a backend, as run_hmc drives HMC's.
//
// Warm-up adapts what the samplers have to tune, from the ensemble (DESIGN.md, "Samplers as
// families"): the per-coordinate scale s of x is the chains' sd across the ensemble at the ends
// of four windows (20, 40, 60 and 80% of warm-up), regularised towards 1e-3 as Stan regularises
// its metric; a random walk's step λ (in units of s) follows dual averaging towards the target
// acceptance, restarted from its current value whenever s changes, and ends at its average.
// Slice samplers need only s (their width is in units of it); elliptical and reflective slice
// sampling need nothing, their warm-up is burn-in.

#include <algorithm>
#include <cmath>
#include <vector>

#include "myriad/backend/auxiliary_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/run/auxiliary_config.hpp"
#include "myriad/run/host_memory.hpp"
#include "myriad/run/sample_auxiliary.hpp"
#include "trace.hpp"

namespace myriad {

void AuxiliaryConfig::validate_auxiliary() const {
  validate();
  MYRIAD_EXPECTS(!checkpoint.enabled() && !checkpoint.resume,
                 "checkpoints are available for the HMC samplers and constrained HMC only, not ",
                 to_string(method));
  MYRIAD_EXPECTS(initial_positions.empty(), "initial_positions apply to HMC, not ",
                 to_string(method));
  MYRIAD_EXPECTS(std::isfinite(walk_step) && walk_step >= 0,
                 "the random walk's initial step must be >= 0 (0: automatic), got ", walk_step);
  MYRIAD_EXPECTS(target_accept_walk >= 0 && target_accept_walk < 1,
                 "the random walk's target acceptance must lie in (0, 1) (0: by method), got ",
                 target_accept_walk);
  MYRIAD_EXPECTS(std::isfinite(slice_width) && slice_width > 0,
                 "the slice width must be positive, got ", slice_width);
  MYRIAD_EXPECTS(std::isfinite(cube_width) && cube_width > 0,
                 "the reflective slice width must be positive, got ", cube_width);
  MYRIAD_EXPECTS(step_out >= 0 && step_out <= 1000,
                 "the step-out budget must lie in 0 … 1000, got ", step_out);
  MYRIAD_EXPECTS(
      max_shrinks >= 1 && static_cast<std::uint32_t>(max_shrinks) + 3 < kSliceDrawsPerUpdate,
      "the shrink cap must lie in 1 … ", kSliceDrawsPerUpdate - 4, ", got ", max_shrinks);
}

namespace {

/// The warm-up iterations after which s is re-estimated: the ends of four windows.
std::vector<int> scale_updates(int warmup) {
  std::vector<int> at;
  for (const double fraction : {0.2, 0.4, 0.6, 0.8}) {
    const int w = static_cast<int>(fraction * warmup);
    if (w >= 1 && (at.empty() || w > at.back())) at.push_back(w);
  }
  return at;
}

/// The ensemble's sd per coordinate, shrunk towards 1e-3 as Stan regularises a diagonal metric:
/// (n σ² + 5 · 10⁻³)/(n + 5), n the chains.
std::vector<double> regularised_sd(const EnsembleMoments& m) {
  const double n = static_cast<double>(m.count);
  std::vector<double> sd(m.m2.size());
  for (std::size_t d = 0; d < sd.size(); ++d) {
    const double variance = m.count > 1 ? m.m2[d] / (n - 1) : 1.0;
    sd[d] = std::sqrt((n * variance + 5e-3) / (n + 5));
  }
  return sd;
}

}  // namespace

template <class T>
SampleResult run_auxiliary(AuxiliaryBackend<T>& backend, const AuxiliaryConfig& config,
                           AuxiliaryReport* report) {
  config.validate_auxiliary();
  SampleResult result = new_sample_result(config, backend.device_name(), backend.quantity_names());
  result.superchains = 1;  // every chain starts from its own draw
  const int quantities = backend.num_quantities();
  const int dim = backend.dim();
  const HostMemoryPlan memory = plan_host_memory(config, 0, quantities, sizeof(T), false);

  AuxiliarySettings<T> settings;
  settings.method = config.method;
  settings.seed = config.seed;
  settings.step = T(config.walk_step > 0 ? config.walk_step : 2.38 / std::sqrt(double(dim)));
  const bool cube = on_unit_cube(config.method);
  settings.slice = {T(cube ? config.cube_width : config.slice_width), config.step_out,
                    config.max_shrinks};
  settings.auxiliary = {T(config.cube_width), config.step_out, config.max_shrinks};
  settings.coordinate_wise = config.coordinate_wise;
  std::vector<double> scale(static_cast<std::size_t>(dim), 1.0);

  const auto warmup_start = Clock::now();
  const T radius = T(config.init_radius > 0 ? config.init_radius : 2.0);
  const std::int64_t failed = backend.initialize(settings, radius, config.init_tries);
  result.initialisation_failures = failed;
  if (failed > 0)
    throw invalid_argument(detail::concat("could not start ", failed, " of ", config.chains,
                                          " chains at a finite log ",
                                          uses_estimator(config.method) ? "estimate" : "density",
                                          " in ", config.init_tries, " tries"));

  const bool walk = random_walk_on_x(config.method);
  const bool scaled = !cube && config.method != AuxiliaryMethod::elliptical_slice;
  DualAveraging adapter(double(settings.step), DualAveraging::Options{config.walk_target_accept()});
  const std::vector<int> updates = scaled ? scale_updates(config.warmup) : std::vector<int>{};
  std::uint32_t iteration = 0;
  EnsembleMoments moments;
  const int progress_every = std::max(1, config.warmup / 100);
  for (int w = 0; w < config.warmup; ++w) {
    if (walk) settings.step = T(adapter.step_size());
    const bool update_scale = std::find(updates.begin(), updates.end(), w + 1) != updates.end();
    const IterationStats s = backend.run(settings, iteration++, 1, nullptr, 0, 0,
                                         update_scale && config.chains > 1 ? &moments : nullptr);
    result.warmup_stats += s;
    if (walk) adapter.update(s.mean_accept_prob());
    if (update_scale && config.chains > 1) {
      scale = regularised_sd(moments);
      backend.set_scale(std::vector<T>(scale.begin(), scale.end()));
      if (walk) adapter.restart(adapter.step_size());
    }
    if (config.progress && (w + 1) % progress_every == 0)
      config.progress({"warmup", w + 1, config.warmup});
  }
  if (walk && config.warmup > 0) settings.step = T(adapter.final_step_size());
  result.step_size = walk ? double(settings.step) : double(settings.slice.width);
  result.warmup_seconds = seconds_since(warmup_start);

  const auto sampling_start = Clock::now();
  TraceSink<T> sink(result, config, quantities);
  const int chunk = chunk_draws(config, quantities, sizeof(T));
  for (int done = 0; done < config.draws; done += chunk) {
    const int n = std::min(chunk, config.draws - done);
    result.sampling_stats += backend.run(settings, iteration, n, &sink, done, n, nullptr);
    iteration += static_cast<std::uint32_t>(n);
    if (config.progress) config.progress({"sampling", done + n, config.draws});
  }
  result.sampling_seconds = seconds_since(sampling_start);
  finish_trace(result, config, sink, memory);
  if (report) {
    report->scale = scale;
    report->capped = backend.capped_per_chain();
  }
  return result;
}

template SampleResult run_auxiliary<double>(AuxiliaryBackend<double>&, const AuxiliaryConfig&,
                                            AuxiliaryReport*);

}  // namespace myriad
