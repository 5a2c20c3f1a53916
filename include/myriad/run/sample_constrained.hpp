#pragma once
// myriad::sample_constrained — many-chain constrained HMC for a generator model conditioned
// exactly on its observed data (Graham & Storkey 2017):
//
//   auto sphere = myriad::models::Sphere::make(5, 1.0);
//   myriad::ChmcConfig config;
//   config.chains = 1024;
//   myriad::SampleResult result = myriad::sample_constrained(sphere, config);

#include <memory>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/run/chmc_config.hpp"

namespace myriad {

/// Runs constrained HMC on a backend (src/run/run_chmc.cpp; double precision).
template <class T>
SampleResult run_chmc(ChmcBackend<T>& backend, const ChmcConfig& config);

/// Samples a generator conditioned on its observed data. The CUDA backend for constrained HMC
/// is not built yet: `cuda` is an error and `automatic` runs on the CPU.
template <class Generator>
SampleResult sample_constrained(const Generator& generator, const ChmcConfig& config) {
  config.validate_constrained();
  if (config.device == Device::cuda) {
    throw unavailable_error(
        "constrained HMC has no CUDA backend yet; use --device cpu (or auto)");
  }
  auto backend = make_cpu_chmc_backend<Generator, double>(generator, config.chains);
  return run_chmc(*backend, config);
}

}  // namespace myriad
