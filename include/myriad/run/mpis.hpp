#pragma once
// myriad::mpis — massively parallel importance sampling (Bowyer, Heap & Aitchison 2024) of a
// plated model, on the CPU or a CUDA device:
//
//   auto data = myriad::models::HierarchicalGaussianData::synthetic(20, 5, 1, 1, 1, false, 7);
//   myriad::MpisConfig config;
//   config.k = 30;        // particles per latent instance: all 30^21 combinations weighed
//   config.runs = 10;     // independent estimates for an error bar
//   config.samples = 100; // exact posterior draws per run
//   myriad::MpisResult r = myriad::mpis(data.host_model(), config);
//   // r.log_marginal_mean ± r.log_marginal_se; r.summary[q] for r.names[q]; r.draws
//
// Models follow model/plated_model.hpp. As with myriad::sample, host-compiled code runs any
// model on the CPU and the built-in models on CUDA; a translation unit compiled by nvcc can run
// any model on CUDA (it includes the engine's CUDA policy).

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "myriad/backend/device.hpp"
#include "myriad/backend/mpis_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/plated_model.hpp"
#include "myriad/run/device_choice.hpp"
#include "myriad/run/mpis_config.hpp"

#if defined(__CUDACC__)
#include "myriad/kernels/cuda_mpis_backend.cuh"
#endif

namespace myriad {

/// True when this translation unit can build a CUDA MP IS backend for Model.
template <class Model>
constexpr bool cuda_mpis_backend_reachable() {
  return cuda_reachable<Model, library_backend::mpis>();
}

/// The device an MP IS run of Model will use (run/device_choice.hpp).
template <class Model>
Device choose_mpis_device(Device requested) {
  return choose_device_for<Model, library_backend::mpis>(requested, "MP IS ", "mpis");
}

/// Estimates log P(x), posterior moments and (with samples > 0) exact posterior draws of a
/// plated model by massively parallel importance sampling (or, with method = global, by
/// global importance sampling).
template <class Model>
MpisResult mpis(const Model& model, const MpisConfig& config) {
  config.validate();
  const PlatedStructure structure = model.structure();
  const Device device = choose_mpis_device<Model>(config.device);
  const MpisBackendFactory factory =
      [&](const MpisPlan& plan, const MpisEngineOptions& options) -> std::unique_ptr<MpisBackend> {
    if (device == Device::cuda) {
      if constexpr (cuda_mpis_backend_reachable<Model>()) {
        return make_cuda_mpis_backend<Model>(model, structure, plan, options);
      } else {
        throw unavailable_error("this model has no CUDA MP IS backend in this translation unit");
      }
    }
    return make_cpu_mpis_backend<Model>(model, structure, plan, options, config.cpu_simd_lanes);
  };
  // Batches run one engine after another; the pool keeps what one frees for the next.
  const std::shared_ptr<void> pool_hold =
      device == Device::cuda ? hold_device_memory_pool() : nullptr;
  // The contraction path is a CUDA setting: the CPU engine has one path, and must not set
  // the cuBLAS path's scratch aside from its memory budget.
  MpisConfig effective = config;
  effective.device = device;  // resolved: the plan sets the GPU's contraction scratch aside
  if (device != Device::cuda) effective.contraction = ContractionPath::automatic;
  MpisResult result = run_mpis(structure, effective, factory, available_memory_bytes(device));
  if constexpr (plated_has_exact_log_marginal<Model>)
    result.exact_log_marginal = model.exact_log_marginal();
  if constexpr (plated_has_exact_posterior<Model>) result.exact = model.exact_posterior();
  return result;
}

/// Posterior expectation Σ_k w_k f(z^k) of a user function of one latent instance's event
/// vector under each run's marginal weights (mpis.md §4–§5), from a result computed with
/// keep_weights: [run][instance] of latent `latent`. f is called as f(const double* z) with the
/// instance's event_size values.
template <class F>
std::vector<double> posterior_expectation(const MpisResult& result,
                                          const PlatedStructure& structure, int latent, F f) {
  MYRIAD_EXPECTS(!result.weights.empty(),
                 "posterior_expectation: the result has no weights (set keep_weights)");
  MYRIAD_EXPECTS(latent >= 0 && latent < structure.latent_count(),
                 "posterior_expectation: no latent ", latent);
  std::int64_t offset = 0, quantities = 0;
  for (int g = 0; g < structure.latent_count(); ++g) {
    const std::int64_t n =
        structure.instances(structure.latent_decl(g).plate) * structure.latent_decl(g).event_size;
    if (g == latent) offset = quantities;
    quantities += n;
  }
  const std::int64_t instances = structure.instances(structure.latent_decl(latent).plate);
  const int event = structure.latent_decl(latent).event_size;
  const std::int64_t k = result.k;
  std::vector<double> out, z(static_cast<std::size_t>(event));
  for (int r = 0; r < result.runs; ++r)
    for (std::int64_t i = 0; i < instances; ++i) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const std::int64_t first_q = (r * quantities + offset + i * event) * k + p;
        for (int c = 0; c < event; ++c) z[c] = result.particles[first_q + c * k];
        const double w = result.weights[first_q];
        if (w > 0) sum += w * f(z.data());
      }
      out.push_back(sum);
    }
  return out;
}

}  // namespace myriad
