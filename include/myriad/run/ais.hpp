#pragma once
// myriad::ais — annealed importance sampling (HAIS by default) for log Z of any target, on the
// CPU or a CUDA device.
//
//   auto target = myriad::models::Gaussian<double>::make(10, 0.5, 1.0, 2.0);
//   myriad::AisConfig config;
//   config.particles = 1000;
//   config.temperatures = 2000;
//   myriad::AisResult result = myriad::ais(target, config);
//   // result.forward.estimates[0].log_z, .se_delta; result.exact_log_z[0]
//
// Targets follow estimate/annealing_target.hpp. As with myriad::sample, host-compiled code runs
// any target on the CPU and the built-in targets on CUDA; a translation unit compiled by nvcc
// can run any target on CUDA.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/cpu_ais_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/run/ais_config.hpp"
#include "myriad/run/device_choice.hpp"
#include "myriad/run/fitted_base.hpp"
#include "myriad/run/sample.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_ais_backend.cuh"
#endif

namespace myriad {

/// True when this translation unit can build a CUDA AIS backend for Target.
template <class Target>
constexpr bool cuda_ais_backend_reachable() {
  return cuda_reachable<Target, library_backend::ais>();
}

/// The device an AIS run of Target will use (run/device_choice.hpp).
template <class Target>
Device choose_ais_device(Device requested) {
  return choose_device_for<Target, library_backend::ais>(requested, "AIS ", "ais");
}

/// An AIS backend for Target on a resolved device.
template <class Target, class T = model_value_t<Target>>
std::unique_ptr<AisBackend<T>> make_ais_backend(const Target& target, AisLayout<T> layout,
                                                Device device, bool cpu_simd_lanes = true) {
  if (device == Device::cuda) {
    if constexpr (cuda_ais_backend_reachable<Target>()) {
      return make_cuda_ais_backend<Target, T>(target, std::move(layout));
    } else {
      throw unavailable_error("this model has no CUDA AIS backend in this translation unit");
    }
  }
  return make_cpu_ais_backend<Target, T>(target, std::move(layout), cpu_simd_lanes);
}

/// Exact log Z per problem (NaN where unknown), or empty when the target has no closed form.
template <class Target>
std::vector<double> exact_log_z_of(const Target& target) {
  std::vector<double> exact;
  if constexpr (target_has_exact_log_z<Target>) {
    for (int p = 0; p < problem_count(target); ++p) exact.push_back(target.exact_log_z(p));
  }
  return exact;
}

/// Estimates log Z of Target (of every problem of a batch) by annealed importance sampling.
template <class Target>
AisResult ais(const Target& target, const AisConfig& config) {
  using T = model_value_t<Target>;
  config.validate();
  if (config.reverse) require_exact_samples(target);
  const Device device = choose_ais_device<Target>(config.device);
  require_no_fit_on_device(config, device);
  if (config.fit_base)  // fit on this (host-visible) target, then run with the fitted base
    return run_with_fitted_base(target, config,
                                [&](const AisConfig& fitted) { return ais(target, fitted); });
  auto layout =
      make_ais_layout<Target, T>(target, config.particles, config.schedule_values(), config.base);
  layout.mapping = config.particle_mapping;
  auto backend =
      make_ais_backend<Target, T>(target, std::move(layout), device, config.cpu_simd_lanes);
  AisResult result = run_ais(*backend, config, exact_log_z_of(target), coordinate_names(target));
  if constexpr (target_has_exact_posterior<Target>) {
    if (result.problems == 1) result.exact = target.exact_posterior(0);
  }
  return result;
}

}  // namespace myriad
