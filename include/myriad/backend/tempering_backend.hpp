#pragma once
// The backend interface of the tempering samplers (run/temper.hpp; docs/tempering.md): one
// interface, a CPU implementation (OpenMP over chains, backend/cpu_tempering_backend.hpp) and a
// CUDA one (kernels/cuda_tempering_backend.cuh), both looping over the per-chain bodies of
// detail/tempering_chain_bodies.hpp. myriad::temper drives it: start, then the run's transitions
// in calls of a few hundred (progress between them), then the outputs.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/detail/tempering_chain_bodies.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/estimate/tempering_method.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// What a tempering backend is built with, on the host; a backend copies what its chains read
/// to where they run. The base is N(mean, diag(scale²)) (empty: 0 and 1).
struct TemperingSetup {
  TemperMethod method = TemperMethod::gibbs_ct;
  std::int64_t chains = 0;
  int warmup = 0, draws = 0;
  std::uint64_t seed = 1;
  double step_size = 0.5;
  int leapfrog_steps = 20;
  double log_zeta = 0;
  double log_z_base = 0;  ///< log Z_q of the base
  std::vector<double> base_mean, base_scale;
  std::vector<double> ladder;  ///< simulated tempering's β_0 … β_K (empty otherwise)
  double u_scale = 1, initial_u = -10;
  /// HMC's diagonal M⁻¹ over the moved coordinates (x, then CT-HMC's u); empty: unit.
  std::vector<double> inverse_metric;
};

/// A run's outputs: every chain's sums over its kept samples (of x_i, then x_i²: 2 D quantities,
/// TemperedQuantities), the β trace, and the count of samples whose weights were not finite.
struct TemperingOutputs {
  TemperingSums sums;
  std::vector<double> beta_trace;  ///< [draw][chain]
  std::int64_t dropped = 0;
};

/// Coordinates each chain moves: x, and u for CT-HMC.
inline int tempering_state_dim(TemperMethod method, int dim) {
  return method == TemperMethod::ct_hmc ? dim + 1 : dim;
}

/// The kept transitions among first … first + count − 1.
inline std::int64_t kept_transitions(const TemperingSetup& setup, int first, int count) {
  const int from = first > setup.warmup ? first : setup.warmup;
  return first + count > from ? first + count - from : 0;
}

/// The diagonal M⁻¹ the chains use: setup.inverse_metric, or tempering_state_dim ones.
inline std::vector<double> tempering_inverse_metric(const TemperingSetup& setup, int dim) {
  if (!setup.inverse_metric.empty()) return setup.inverse_metric;
  return std::vector<double>(static_cast<std::size_t>(tempering_state_dim(setup.method, dim)), 1.0);
}

/// The settings the chains read, with the arrays as seen where they run: the metric
/// (tempering_inverse_metric's values) and the ladder (setup.ladder's values).
inline TemperingSettings<double> tempering_settings(const TemperingSetup& setup, int dim,
                                                    const double* inverse_metric,
                                                    const double* ladder) {
  TemperingSettings<double> s;
  s.method = setup.method;
  s.seed = setup.seed;
  s.step.step_size = setup.step_size;
  s.step.leapfrog_steps = setup.leapfrog_steps;
  s.step.metric =
      MetricView<double>::diagonal_metric(inverse_metric, tempering_state_dim(setup.method, dim));
  s.constants = {setup.log_zeta, setup.log_z_base};
  s.ladder = {ladder, static_cast<int>(setup.ladder.size())};
  s.u_scale = setup.u_scale;
  s.initial_u = setup.initial_u;
  s.warmup = setup.warmup;
  return s;
}

class TemperingBackend {
 public:
  virtual ~TemperingBackend() = default;

  /// e.g. "cpu (2 OpenMP threads)" or "NVIDIA H100 80GB HBM3 (sm_90)".
  virtual std::string device_name() const = 0;
  /// Starts every chain; returns the number whose start was not finite.
  virtual std::int64_t start() = 0;
  /// Transitions first … first + count − 1 of every chain (0-based, warm-up included); returns
  /// the HMC counters of the kept ones.
  virtual IterationStats run(int first, int count) = 0;
  virtual TemperingOutputs outputs() const = 0;
};

/// The CUDA backend for a target (kernels/cuda_tempering_backend.cuh; instantiated for the
/// built-in annealing targets that list library_backend::tempering, and by user code compiled
/// with nvcc). Throws myriad::unavailable_error in a build without CUDA.
#if defined(MYRIAD_HAS_CUDA)
template <class Target>
std::unique_ptr<TemperingBackend> make_cuda_tempering_backend(const Target& target,
                                                              const TemperingSetup& setup);
#else
template <class Target>
std::unique_ptr<TemperingBackend> make_cuda_tempering_backend(const Target&,
                                                              const TemperingSetup&) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
