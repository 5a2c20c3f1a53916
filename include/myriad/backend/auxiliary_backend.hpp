#pragma once
// The backend interface of the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp: slice,
// pseudo-marginal and APM): one interface, a CPU implementation (OpenMP over chains,
// backend/cpu_auxiliary_backend.hpp) and a CUDA one (kernels/cuda_auxiliary_backend.cuh), both
// looping over the per-chain bodies of detail/auxiliary_chain_bodies.hpp. The host scheduler
// (src/run/run_auxiliary.cpp) drives it through start, warm-up and sampling as it drives HMC's.

#include <cstdint>
#include <memory>
#include <vector>

#include "myriad/backend/chain_ensemble.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/auxiliary_samplers.hpp"
#include "myriad/mcmc/ensemble_moments.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

template <class T>
class AuxiliaryBackend : public ChainEnsemble {
 public:
  /// The model's parameters (x), and the coordinates a chain carries for `method`
  /// (auxiliary_state_dim) and the variates it stores (an estimator's auxiliary_dim for the
  /// methods that move u, else 0).
  virtual int dim() const = 0;
  virtual int auxiliary_dim() const = 0;

  /// Sets the per-coordinate scale s of x (dim positive values; mcmc/auxiliary_samplers.hpp).
  virtual void set_scale(const std::vector<T>& scale) = 0;

  /// Starts every chain for settings.method (initialize_auxiliary_chain), allocating the stored
  /// variates where the method keeps them. Returns the number of chains without a finite start.
  virtual std::int64_t initialize(const AuxiliarySettings<T>& settings, T radius,
                                  int max_tries) = 0;

  /// Runs iterations first_iteration … + num_iterations − 1 with `settings` (its scale is the
  /// backend's, set_scale), delivering recorded quantities to the sink as HmcBackend::run does;
  /// with moments, the per-coordinate moments of the states after the last iteration.
  virtual IterationStats run(const AuxiliarySettings<T>& settings, std::uint32_t first_iteration,
                             int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                             int chunk_iterations, EnsembleMoments* moments) = 0;

  /// Each chain's capped slice updates since it started (run.json reports them per chain).
  virtual std::vector<std::int64_t> capped_per_chain() const = 0;
  /// Every chain's state coordinates, [coordinate][chain] (tests).
  virtual std::vector<T> positions() const = 0;
};

/// The CUDA backend for a model (kernels/cuda_auxiliary_backend.cuh; instantiated for the
/// built-in models the library lists, and by user code compiled with nvcc). Throws
/// myriad::unavailable_error in a build without CUDA.
#if defined(MYRIAD_HAS_CUDA)
template <class Model, class T>
std::unique_ptr<AuxiliaryBackend<T>> make_cuda_auxiliary_backend(const Model& model,
                                                                 std::int64_t chains,
                                                                 AuxiliaryMethod method);
#else
template <class Model, class T>
std::unique_ptr<AuxiliaryBackend<T>> make_cuda_auxiliary_backend(const Model&, std::int64_t,
                                                                 AuxiliaryMethod) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
