#pragma once
// The ABC baselines on a generator (constrained-hmc.md §11), for comparison with constrained HMC:
//
//   sample_abc_rejection(g, config, summary)   prior simulations kept within ε (uniform ball)
//   sample_abc_mcmc(g, config)                 pseudo-marginal ABC-MCMC (config.kernel)
//   sample_abc_hmc(g, epsilon, config)         HMC on the Gaussian-kernel ABC target in u-space
//   sample_abc_auxiliary(g, kernel, epsilon, config)  slice samplers on the ABC target in
//                                              u-space, PM-MH and APM on a directed generator's
//                                              parameters with its noise as auxiliary variates
//
// ABC rejection and ABC-MCMC run on the CPU; the HMC baseline runs wherever myriad::sample does.

#include <memory>

#include "myriad/backend/abc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/abc.hpp"
#include "myriad/run/abc_config.hpp"
#include "myriad/run/sample.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad {

template <class T>
SampleResult run_abc_rejection(AbcBackend<T>& backend, const AbcConfig& config,
                               AbcRejectionSummary& summary);
template <class T>
SampleResult run_abc_mcmc(AbcBackend<T>& backend, const AbcConfig& config);

namespace detail {
inline void require_cpu_for_abc(Device device) {
  if (device == Device::cuda)
    throw unavailable_error("ABC rejection and ABC-MCMC run on the CPU only; use --device cpu");
}
}  // namespace detail

template <class Generator>
SampleResult sample_abc_rejection(const Generator& g, const AbcConfig& config,
                                  AbcRejectionSummary& summary) {
  config.validate_abc();
  detail::require_cpu_for_abc(config.device);
  CpuAbcBackend<Generator, double> backend(g, 1);
  return run_abc_rejection(backend, config, summary);
}

template <class Generator>
SampleResult sample_abc_mcmc(const Generator& g, const AbcConfig& config) {
  config.validate_abc();
  detail::require_cpu_for_abc(config.device);
  CpuAbcBackend<Generator, double> backend(g, config.chains);
  return run_abc_mcmc(backend, config);
}

/// HMC on log ρ(u) − ‖x̄ − g_x(u)‖²/(2ε²).
template <class Generator>
SampleResult sample_abc_hmc(const Generator& g, double epsilon, const SampleConfig& config) {
  MYRIAD_EXPECTS(std::isfinite(epsilon) && epsilon > 0, "abc epsilon must be positive, got ",
                 epsilon);
  MYRIAD_EXPECTS(g.output_dim() <= AbcGaussianTarget<Generator>::kMaxOutputs,
                 "the HMC ABC baseline supports at most ",
                 AbcGaussianTarget<Generator>::kMaxOutputs, " outputs, got ", g.output_dim());
  return sample(AbcGaussianTarget<Generator>{{}, g, typename Generator::value_type(epsilon)},
                config);
}

/// The auxiliary-variable samplers on a generator's ABC posterior (config.method): the slice
/// samplers on ρ(u) k_ε(x̄ | g_x(u)) in input space (AbcSliceTarget), PM-MH and APM on the
/// parameters with the noise as auxiliary variates (AbcEstimator; directed generators only).
template <class Generator>
SampleResult sample_abc_auxiliary(const Generator& g, AbcKernel kernel, double epsilon,
                                  const AuxiliaryConfig& config,
                                  AuxiliaryReport* report = nullptr) {
  using T = typename Generator::value_type;
  MYRIAD_EXPECTS(std::isfinite(epsilon) && epsilon > 0, "abc epsilon must be positive, got ",
                 epsilon);
  MYRIAD_EXPECTS(g.output_dim() <= AbcSliceTarget<Generator>::kMaxOutputs &&
                     g.input_dim() <= AbcEstimator<Generator>::kMaxInputs,
                 "the ABC baselines of the auxiliary-variable samplers support at most ",
                 AbcSliceTarget<Generator>::kMaxOutputs, " inputs and outputs");
  if (!uses_estimator(config.method))
    return sample_auxiliary(AbcSliceTarget<Generator>{{}, g, kernel, T(epsilon)}, config, report);
  if constexpr (generator_has_parameters<Generator>) {
    return sample_auxiliary(AbcEstimator<Generator>{g, kernel, T(epsilon)}, config, report);
  } else {
    throw invalid_argument(detail::concat(
        to_string(config.method),
        " on a generator needs its inputs split into parameters and noise (num_parameters())"));
  }
}

}  // namespace myriad
