#pragma once
// myriad::sample — many-chain HMC for any model, on the CPU or a CUDA device.
//
//   auto model = myriad::models::Gaussian<double>::make(10, 0.5);
//   myriad::SampleConfig config;
//   config.chains = 4096;
//   myriad::SampleResult result = myriad::sample(model, config);
//
// Code compiled by a host compiler can run any model on the CPU and the built-in models on
// CUDA; a translation unit compiled by nvcc can run any model on CUDA (the kernels are
// instantiated there).

#include <memory>
#include <type_traits>

#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/run/device_choice.hpp"
#include "myriad/run/sample_config.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_hmc_backend.cuh"
#endif

namespace myriad {

namespace detail {
template <class Model, class = void>
struct model_value_type {
  using type = double;
};
template <class Model>
struct model_value_type<Model, std::void_t<typename Model::value_type>> {
  using type = typename Model::value_type;
};
}  // namespace detail

/// The floating-point type a model computes in: Model::value_type, else double.
template <class Model>
using model_value_t = typename detail::model_value_type<Model>::type;

/// True when this translation unit can build a CUDA HMC backend for Model.
template <class Model>
constexpr bool cuda_backend_reachable() {
  return cuda_reachable<Model, library_backend::hmc>();
}

/// The device a run of Model will use (run/device_choice.hpp).
template <class Model>
Device choose_device(Device requested) {
  return choose_device_for<Model, library_backend::hmc>(requested, "", "sample");
}

/// A backend for Model on a resolved device (cpu or cuda).
template <class Model, class T = model_value_t<Model>>
std::unique_ptr<HmcBackend<T>> make_hmc_backend(const Model& model, std::int64_t chains,
                                                Device device, bool cpu_simd_lanes = true) {
  if (device == Device::cuda) {
    if constexpr (cuda_backend_reachable<Model>()) {
      return make_cuda_hmc_backend<Model, T>(model, chains);
    } else {
      throw unavailable_error("this model has no CUDA backend in this translation unit");
    }
  }
  return make_cpu_hmc_backend<Model, T>(model, chains, cpu_simd_lanes);
}

/// Samples Model with many-chain HMC. Device selection: config.device.
template <class Model>
SampleResult sample(const Model& model, const SampleConfig& config) {
  config.validate();
  if constexpr (model_has_initial_point<Model>) {
    MYRIAD_EXPECTS(config.init_radius == 0,
                   "init_radius does not apply: this model chooses its chains' initial points "
                   "(initial_point)");
  }
  const Device device = choose_device<Model>(config.device);
  auto backend = make_hmc_backend(model, config.chains, device, config.cpu_simd_lanes);
  return run_hmc(*backend, config);
}

}  // namespace myriad
