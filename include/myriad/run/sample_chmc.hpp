#pragma once
// myriad::sample_chmc — many-chain constrained HMC for a generator model conditioned
// exactly on its observed data (Graham & Storkey 2017), on the CPU or a CUDA device:
//
//   auto sphere = myriad::models::Sphere::make(5, 1.0);
//   myriad::ChmcConfig config;
//   config.chains = 1024;
//   myriad::SampleResult result = myriad::sample_chmc(sphere, config);
//
// Code compiled by a host compiler can run any generator on the CPU and the built-in generators
// on CUDA (include models/builtin_generators.hpp, which declares that the library holds their
// kernels); a translation unit compiled by nvcc can run any generator on CUDA (the kernels are
// instantiated there), as run/sample.hpp does for density models.

#include <cstdint>
#include <memory>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/device_choice.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_chmc_backend.cuh"
#endif

namespace myriad {

/// Runs constrained HMC on a backend (src/run/run_chmc.cpp; double precision).
template <class T>
SampleResult run_chmc(ChmcBackend<T>& backend, const ChmcConfig& config);

/// True when this translation unit can build a CUDA constrained-HMC backend for Generator.
template <class Generator>
constexpr bool cuda_chmc_backend_reachable() {
  return cuda_reachable<Generator, library_backend::chmc>();
}

/// The device a constrained-HMC run of Generator will use (run/device_choice.hpp).
template <class Generator>
Device choose_chmc_device(Device requested) {
  return choose_device_for<Generator, library_backend::chmc>(requested, "constrained-HMC ",
                                                             "sample_chmc");
}

/// A constrained-HMC backend for Generator on a resolved device (cpu or cuda); `options` apply
/// to CUDA only.
template <class Generator, class T = double>
std::unique_ptr<ChmcBackend<T>> make_chmc_backend(const Generator& generator, std::int64_t chains,
                                                  Device device, ChmcCudaOptions options = {},
                                                  bool cpu_simd_lanes = true) {
  if (device == Device::cuda) {
    if constexpr (cuda_chmc_backend_reachable<Generator>()) {
      return make_cuda_chmc_backend<Generator, T>(generator, chains, options);
    } else {
      throw unavailable_error(
          "this generator has no CUDA constrained-HMC backend in this translation unit");
    }
  }
  return make_cpu_chmc_backend<Generator, T>(generator, chains, cpu_simd_lanes);
}

/// Samples a generator conditioned on its observed data. Device selection: config.device
/// (choose_chmc_device). The generator must hold data the chosen device can read (a
/// built-in generator's device_model() for CUDA).
template <class Generator>
SampleResult sample_chmc(const Generator& generator, const ChmcConfig& config) {
  config.validate_chmc();
  // A batched factorisation of a structured Gram is refused on every device, not only on CUDA.
  check_gram_factorization(config.gram_factorization, generator_gram_structure<Generator>);
  const Device device = choose_chmc_device<Generator>(config.device);
  auto backend = make_chmc_backend<Generator, double>(
      generator, config.chains, device,
      ChmcCudaOptions(config.chain_mapping, config.gram_factorization), config.cpu_simd_lanes);
  return run_chmc(*backend, config);
}

}  // namespace myriad
