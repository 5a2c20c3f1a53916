#pragma once
// A run's fitted base (AisConfig::fit_base, TemperConfig::fit_base): the variational fit of
// estimate/variational_base.hpp made on a host-visible view of the target before the run, so that
// AIS and the tempering samplers start from the same base (and tempering from its log ζ).

#include <optional>
#include <type_traits>
#include <utility>

#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/variational_base.hpp"
#include "myriad/run/ais_config.hpp"
#include "myriad/run/temper_config.hpp"

namespace myriad {

/// When config.fit_base is set: fits it on `host_target` (a view whose arrays the host can read),
/// sets config.base (and a tempering run's log ζ) from the fit, clears the request and returns
/// the fit; otherwise returns nothing.
template <class Target, class Config>
std::optional<VariationalBase> fit_requested_base(const Target& host_target, Config& config) {
  if (!config.fit_base) return std::nullopt;
  VariationalBase fit = fit_variational_base(host_target, *config.fit_base);
  config.base = fit.spec();
  if constexpr (std::is_same_v<Config, TemperConfig>) config.log_zeta = fit.log_zeta;
  config.fit_base.reset();
  return fit;
}

/// run(resolved) with `resolved` the config after fit_requested_base on `host_target`; the
/// result's fitted_base is the fit.
template <class Target, class Config, class Run>
auto run_with_fitted_base(const Target& host_target, const Config& config, const Run& run) {
  Config resolved = config;
  std::optional<VariationalBase> fitted = fit_requested_base(host_target, resolved);
  auto result = run(resolved);
  result.fitted_base = std::move(fitted);
  return result;
}

/// Refuses a fit requested of a run on CUDA: the target given may live in device memory, where
/// the host cannot evaluate it (fit on the host view first: fit_requested_base).
template <class Config>
void require_no_fit_on_device(const Config& config, Device device) {
  MYRIAD_EXPECTS(!(config.fit_base && device == Device::cuda),
                 "a fitted base is fitted on the host: call fit_requested_base with the target's "
                 "host view before a CUDA run");
}

}  // namespace myriad
