#pragma once
// myriad::sample_auxiliary — the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp) on
// many chains, on the CPU or a CUDA device:
//
//   myriad::AuxiliaryConfig config;
//   config.method = myriad::AuxiliaryMethod::apm_mi_mh;
//   config.chains = 4096;
//   myriad::SampleResult result = myriad::sample_auxiliary(model, config);
//
// Density models run slice, and with a Gaussian prior factor elliptical-slice and
// reflective-slice; estimator models run pm-mh and apm-* (model/estimator.hpp). Double precision.

#include <memory>

#include "myriad/backend/auxiliary_backend.hpp"
#include "myriad/backend/cpu_auxiliary_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/estimator.hpp"
#include "myriad/run/auxiliary_config.hpp"
#include "myriad/run/device_choice.hpp"
#include "myriad/run/sample_config.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_auxiliary_backend.cuh"
#endif

namespace myriad {

/// Runs the sampler on a backend: start, warm-up (the per-coordinate scale from the ensemble's
/// sd, the random walk's step by dual averaging), sampling (src/run/run_auxiliary.cpp).
template <class T>
SampleResult run_auxiliary(AuxiliaryBackend<T>& backend, const AuxiliaryConfig& config,
                           AuxiliaryReport* report = nullptr);

/// Throws myriad::invalid_argument when Model cannot run `method`: one line naming what it lacks.
template <class Model>
void check_auxiliary_model(AuxiliaryMethod method) {
  const char* name = to_string(method);
  if (uses_estimator(method)) {
    if (!model_has_estimator<Model>)
      throw invalid_argument(detail::concat(
          name,
          " needs an estimator model (log_estimate of auxiliary variates); this model has "
          "a log density: use slice, elliptical-slice, reflective-slice or HMC"));
    return;
  }
  if (!model_has_log_density<Model>)
    throw invalid_argument(detail::concat(
        name, " needs a density model; this is an estimator model: use pm-mh or apm-*"));
  if (method != AuxiliaryMethod::slice && !model_has_gaussian_prior<Model>)
    throw invalid_argument(detail::concat(
        name,
        " needs a model with a Gaussian prior factor (gaussian_prior_mean, gaussian_prior_sd, "
        "log_likelihood); this one has none: use slice"));
}

/// The device a run of Model by an auxiliary-variable sampler will use.
template <class Model>
Device choose_auxiliary_device(Device requested) {
  return choose_device_for<Model, library_backend::auxiliary>(requested, "auxiliary-sampler ",
                                                              "sample_auxiliary");
}

template <class Model>
SampleResult sample_auxiliary(const Model& model, const AuxiliaryConfig& config,
                              AuxiliaryReport* report = nullptr) {
  config.validate_auxiliary();
  check_auxiliary_model<Model>(config.method);
  const Device device = choose_auxiliary_device<Model>(config.device);
  std::unique_ptr<AuxiliaryBackend<double>> backend;
  if (device == Device::cuda) {
    if constexpr (cuda_reachable<Model, library_backend::auxiliary>()) {
      backend = make_cuda_auxiliary_backend<Model, double>(model, config.chains, config.method);
    }
  } else {
    backend =
        std::make_unique<CpuAuxiliaryBackend<Model, double>>(model, config.chains, config.method);
  }
  return run_auxiliary(*backend, config, report);
}

}  // namespace myriad
