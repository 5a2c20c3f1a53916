#pragma once
// myriad::temper — continuous tempering (Gibbs CT, CT-HMC) and simulated tempering of any
// annealing target (estimate/annealing_target.hpp) against a diagonal Gaussian base, on the CPU
// or a CUDA device: log Z with its standard error, the target's weighted moments, the base check
// and R-hat of the chains' β (docs/tempering.md).
//
//   auto target = myriad::models::Gaussian<double>::make(10, 0.5, 1.0, 2.0);
//   myriad::TemperConfig config;
//   config.method = myriad::TemperMethod::gibbs_ct;
//   config.log_zeta = -1.0;                        // a guess of log Z (docs/tempering.md)
//   myriad::TemperResult result = myriad::temper(target, config);
//   // result.log_z.value, .se; result.target_mean[i]; result.max_base_error_in_se
//
// As with myriad::ais, host-compiled code runs any target on the CPU and the built-in targets on
// CUDA; a translation unit compiled by nvcc can run any target on CUDA. HMC's step size and
// trajectory length are fixed (the thesis's δt = 0.5, L = 20 by default); warm-up transitions
// are discarded, every kept one is used.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/cpu_tempering_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/tempering_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/run/device_choice.hpp"
#include "myriad/run/fitted_base.hpp"
#include "myriad/run/temper_config.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_tempering_backend.cuh"
#endif

namespace myriad {

/// The device a tempering run of Target will use (run/device_choice.hpp).
template <class Target>
Device choose_tempering_device(Device requested) {
  return choose_device_for<Target, library_backend::tempering>(requested, "tempering ", "temper");
}

/// The backend's setup for `config` on Target: the base (checked against the target's dimension)
/// and its log Z_q, simulated tempering's ladder, and HMC's metric.
template <class Target>
TemperingSetup make_tempering_setup(const Target& target, const TemperConfig& config) {
  const AisLayout<double> layout =
      make_ais_layout<Target, double>(target, 1, {0.0, 1.0}, config.base);
  MYRIAD_EXPECTS(layout.lower.empty(), "tempering does not take box-constrained targets yet");
  TemperingSetup setup;
  setup.method = config.method;
  setup.chains = config.chains;
  setup.warmup = config.warmup;
  setup.draws = config.draws;
  setup.seed = config.seed;
  setup.step_size = config.step_size;
  setup.leapfrog_steps = config.leapfrog_steps;
  setup.log_zeta = config.log_zeta;
  setup.log_z_base = layout.log_z_base;
  setup.base_mean = layout.base_mean;
  setup.base_scale = layout.base_scale;
  if (config.method == TemperMethod::simulated_tempering) setup.ladder = config.ladder();
  setup.u_scale = config.u_scale;
  setup.initial_u = config.initial_u;
  if (config.metric == TemperingMetric::base) {
    const int dim = parameter_count(target);
    setup.inverse_metric.assign(static_cast<std::size_t>(tempering_state_dim(config.method, dim)),
                                1.0);  // CT-HMC's u keeps unit mass
    for (std::size_t i = 0; i < layout.base_scale.size(); ++i)
      setup.inverse_metric[i] = layout.base_scale[i] * layout.base_scale[i];
  }
  return setup;
}

/// A tempering backend for Target on a resolved device.
template <class Target>
std::unique_ptr<TemperingBackend> make_tempering_backend(const Target& target,
                                                         const TemperingSetup& setup,
                                                         Device device) {
  if (device == Device::cuda) {
    if constexpr (cuda_reachable<Target, library_backend::tempering>()) {
      return make_cuda_tempering_backend<Target>(target, setup);
    } else {
      throw unavailable_error("this target has no CUDA tempering backend in this translation unit");
    }
  }
  return std::make_unique<CpuTemperingBackend<Target>>(target, setup);
}

/// Runs a started-to-finished tempering run on `backend` and reduces its outputs (src/run/
/// run_tempering.cpp): the estimators, the base check, R-hat of β and the counters.
TemperResult run_tempering(TemperingBackend& backend, const TemperingSetup& setup,
                           const TemperConfig& config, const std::vector<std::string>& names);

/// Runs `config.chains` chains of `config.method` on Target (one problem) and reduces their
/// weighted sums (file comment).
template <class Target>
TemperResult temper(const Target& target, const TemperConfig& config) {
  static_assert(std::is_same_v<typename Target::value_type, double>,
                "tempering runs targets in double precision");
  config.validate();
  MYRIAD_EXPECTS(problem_count(target) == 1, "tempering takes a target with one problem, got ",
                 problem_count(target));
  const Device device = choose_tempering_device<Target>(config.device);
  require_no_fit_on_device(config, device);
  if (config.fit_base)  // fit on this (host-visible) target, then run with the fitted base
    return run_with_fitted_base(target, config,
                                [&](const TemperConfig& fitted) { return temper(target, fitted); });
  const TemperingSetup setup = make_tempering_setup(target, config);
  const auto backend = make_tempering_backend(target, setup, device);
  TemperResult result = run_tempering(*backend, setup, config, coordinate_names(target));
  if constexpr (target_has_exact_log_z<Target>) result.log_z_exact = target.exact_log_z(0);
  if constexpr (target_has_exact_posterior<Target>) result.exact = target.exact_posterior(0);
  return result;
}

}  // namespace myriad
