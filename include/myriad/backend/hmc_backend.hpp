#pragma once
// The backend interface for many-chain HMC (DESIGN.md, "Layers"): one interface, a CPU
// implementation (OpenMP over chains, backend/cpu_hmc_backend.hpp) and a CUDA implementation
// (kernels/cuda_hmc_backend.cuh). Both call the same per-chain function, mcmc/hmc.hpp.
//
// The host scheduler (run/sample.hpp) drives a backend through phases; the backend owns the
// ensemble state on its device and never grows its memory with the number of draws: recorded
// quantities leave in chunks through a DrawSink.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/backend/chain_ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/mcmc/ensemble_moments.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/mcmc/trajectory_criterion.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// Ensemble-wide settings of a run of HMC iterations.
template <class T>
struct HmcSettings {
  std::uint64_t seed = 1;
  T step_size = T(0.1);
  int max_leapfrog_steps = 16;  ///< L; the iteration's count is jittered below it
  T jitter = T(0.5);            ///< fraction of L over which the step count is jittered
  /// Jitter by the quasi-random sequence of mcmc/hmc.hpp (ChEES, SNAPER) instead of uniforms.
  bool quasi_random_jitter = false;
  T max_energy_error = T(1000);
  /// > 0: NUTS with this cap on the tree depth (mcmc/nuts.hpp) instead of max_leapfrog_steps;
  /// 0: HMC with a fixed maximum number of steps.
  int max_tree_depth = 0;
};

/// A trajectory-length criterion to evaluate in a warm-up iteration
/// (mcmc/trajectory_criterion.hpp): which one, the ensemble's centre and, for SNAPER, the unit
/// principal direction (host arrays of length dim; the direction may be empty for ChEES).
template <class T>
struct CriterionRequest {
  TrajectoryCriterion criterion = TrajectoryCriterion::chees;
  std::vector<T> centre;
  std::vector<T> direction;
};

/// Every chain's state between iterations, on the host: what a checkpoint holds of the ensemble
/// (the random numbers are keyed by the iteration number and need no state; DESIGN.md rule 2).
/// position and gradient are [dim][chain], log_density [chain]. The gradient and log density are
/// kept rather than recomputed so that a resumed run continues bit for bit (the CPU's SIMD lanes
/// and a single chain's code round differently).
template <class T>
struct HmcChainState {
  std::vector<T> position;
  std::vector<T> gradient;
  std::vector<T> log_density;
};

/// Receives recorded quantities chunk by chunk: values[(i * Q + q) * chains + c] is quantity q
/// of chain c at iteration first_iteration + i (chain fastest, as the device wrote it).
template <class T>
class DrawSink {
 public:
  virtual ~DrawSink() = default;
  virtual void consume(const T* values, std::int64_t first_draw, int num_draws) = 0;
};

/// Many-chain HMC on one device.
template <class T>
class HmcBackend : public ChainEnsemble {
 public:
  virtual int dim() const = 0;

  /// Draws initial points (uniform in [−radius, radius]^D, retried up to max_tries times while
  /// non-finite) and evaluates log density and gradient there. Chains c with equal
  /// c / chains_per_init share their initial point (the random stream of chain
  /// (c / chains_per_init) · chains_per_init): superchains for nested R-hat (Margossian et al.).
  /// Returns the number of chains left without a finite initial point.
  virtual std::int64_t initialize(std::uint64_t seed, T radius, int max_tries,
                                  std::int64_t chains_per_init) = 0;

  /// Places every chain at a given point instead (`positions` [dim][chain], the layout
  /// positions() returns) and evaluates log density and gradient there. Returns the number of
  /// chains where either is not finite (they hold the point, unusable: the caller reports them).
  virtual std::int64_t set_positions(const std::vector<T>& positions) = 0;

  /// Sets the inverse mass matrix M⁻¹: its diagonal (dim positive entries), or dense (dim × dim
  /// row-major, symmetric positive definite, dim ≤ kMaxDenseMetricDim; mcmc/metric.hpp).
  virtual void set_inverse_metric(const std::vector<T>& inverse_metric) = 0;

  /// Runs iterations first_iteration … first_iteration + num_iterations − 1 (the iteration number
  /// keys the random numbers): HMC, or NUTS when settings.max_tree_depth > 0 (the backend's tree
  /// scratch, nuts_tree_vectors(depth) · dim values per chain, is allocated at the first such
  /// call and grown for a deeper cap). With a sink, the recorded quantities of every iteration are
  /// delivered to it in chunks of at most chunk_iterations, numbered from first_draw. With
  /// moments, the per-dimension moments of the positions after the last iteration are written.
  virtual IterationStats run(const HmcSettings<T>& settings, std::uint32_t first_iteration,
                             int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                             int chunk_iterations, EnsembleMoments* moments) = 0;

  /// One warm-up iteration (number `iteration`) that also has every chain evaluate its terms of
  /// the requested trajectory-length criterion (mcmc/trajectory_criterion.hpp). criterion_sums
  /// receives the sums of the terms over the chains (criterion_term_count values, rows as in
  /// CriterionRow) and moments the moments of the positions after the iteration (the next
  /// iteration's centre).
  virtual IterationStats run_with_criterion(const HmcSettings<T>& settings, std::uint32_t iteration,
                                            const CriterionRequest<T>& request,
                                            std::vector<double>& criterion_sums,
                                            EnsembleMoments& moments) = 0;

  /// The mean and centred cross-products of the current positions across chains (one
  /// WelfordCovariance batch for a dense metric's window): computed where the chains are, so
  /// that D + D² values leave the device instead of D · chains.
  virtual void position_covariance(EnsembleCovariance& out) = 0;

  /// Current positions as a [dim][chain] host array (tests, checkpoints).
  virtual std::vector<T> positions() const = 0;

  /// Every chain's position, gradient and log density (checkpoints).
  virtual HmcChainState<T> chain_state() const = 0;
  /// Puts back a state chain_state() returned, on a backend of the same model, chain count and
  /// precision (invalid_argument otherwise); nothing is re-evaluated.
  virtual void restore_chain_state(const HmcChainState<T>& state) = 0;
  /// log π at every chain's current point (length chains). The warm-up compares two readings to
  /// find the chains that have not moved in between (run/sample.hpp).
  virtual std::vector<T> log_densities() const = 0;

  /// Chain c takes chain source[c]'s current point, its gradient and log density, for every c
  /// with source[c] ≠ c (a warm-up restart of a stranded chain from a healthy one). No source may
  /// itself move: source[source[c]] == source[c] (detail/ensemble_checks.hpp).
  virtual void copy_chains(const std::vector<std::int64_t>& source) = 0;
};

/// The CUDA backend for a model (defined in kernels/cuda_hmc_backend.cuh; instantiated for the
/// built-in models in the library, and by user code compiled with nvcc for its own models).
/// The model must hold device-visible data. Throws myriad::unavailable_error without CUDA: in a
/// build without CUDA it is this inline definition.
#if defined(MYRIAD_HAS_CUDA)
template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_cuda_hmc_backend(const Model& model, std::int64_t chains);
#else
template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_cuda_hmc_backend(const Model&, std::int64_t) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
