#pragma once
// The backend interface of annealed importance sampling (estimate/hais.hpp): P problems × B
// particles advanced through the temperatures of one path, on the CPU (cpu_ais_backend.hpp) or
// a CUDA device (kernels/cuda_ais_backend.cuh). Particle b of problem p is particle p·B + b, with
// the random stream of particle_stream (estimate/hais.hpp).

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// How the CUDA backend maps particles onto threads (kernels/ais_kernels.cuh): `automatic` picks
/// warp when the target has a team gradient and the warps fit one wave, else thread; warp is for
/// few particles and a costly target (the HAIS protocol).
using AisParticleMapping = TeamMapping;

/// The host-side description of an annealing problem set that every backend shares: dimension,
/// problems, particles per problem, the schedule, and the base with the target's bounds.
template <class T>
struct AisLayout {
  int dim = 0;
  int problems = 1;
  std::int64_t particles_per_problem = 1;
  std::vector<double> beta;                                    ///< β_0 … β_N
  std::vector<T> base_mean, base_scale, lower, upper;          ///< empty when default / unbounded
  double log_z_base = 0.0;                                     ///< log Z_q
  AisParticleMapping mapping = AisParticleMapping::automatic;  ///< CUDA only

  std::int64_t particles() const { return particles_per_problem * problems; }
  int temperatures() const { return static_cast<int>(beta.size()) - 1; }
};

/// Validates the arguments and collects the layout of Target (bounds read on the host through
/// lower_bound / upper_bound, which must therefore not read device data).
template <class Target, class T>
AisLayout<T> make_ais_layout(const Target& target, std::int64_t particles_per_problem,
                             std::vector<double> beta, const AisBaseSpec& base) {
  AisLayout<T> layout;
  layout.dim = parameter_count(target);
  layout.problems = problem_count(target);
  layout.particles_per_problem = particles_per_problem;
  MYRIAD_EXPECTS(layout.dim > 0, "model dimension must be positive, got ", layout.dim);
  MYRIAD_EXPECTS(layout.problems >= 1, "a target needs at least one problem, got ",
                 layout.problems);
  MYRIAD_EXPECTS(particles_per_problem >= 1, "particles must be >= 1, got ", particles_per_problem);
  MYRIAD_EXPECTS(2 * layout.particles() <= 0xFFFFFFFFll,
                 "at most 2^31 - 1 particles (problems x particles) are supported, got ",
                 layout.particles());
  validate_schedule(beta);
  layout.beta = std::move(beta);
  const auto check_length = [&](const std::vector<double>& v, const char* what) {
    MYRIAD_EXPECTS(v.empty() || static_cast<int>(v.size()) == layout.dim, "base ", what,
                   " has length ", v.size(), ", expected the model dimension ", layout.dim);
  };
  check_length(base.mean, "mean");
  check_length(base.scale, "scale");
  for (std::size_t i = 0; i < base.mean.size(); ++i) {
    MYRIAD_EXPECTS(std::isfinite(base.mean[i]), "base mean[", i, "] is not finite");
    layout.base_mean.push_back(static_cast<T>(base.mean[i]));
  }
  for (std::size_t i = 0; i < base.scale.size(); ++i) {
    MYRIAD_EXPECTS(std::isfinite(base.scale[i]) && base.scale[i] > 0, "base scale[", i,
                   "] must be positive and finite, got ", base.scale[i]);
    layout.base_scale.push_back(static_cast<T>(base.scale[i]));
  }
  MYRIAD_EXPECTS(std::isfinite(base.isotropic_scale) && base.isotropic_scale > 0,
                 "base scale must be positive and finite, got ", base.isotropic_scale);
  MYRIAD_EXPECTS(std::isfinite(base.isotropic_mean), "base mean must be finite, got ",
                 base.isotropic_mean);
  if (base.mean.empty() && base.isotropic_mean != 0.0)
    layout.base_mean.assign(static_cast<std::size_t>(layout.dim),
                            static_cast<T>(base.isotropic_mean));
  if (base.scale.empty() && base.isotropic_scale != 1.0)
    layout.base_scale.assign(static_cast<std::size_t>(layout.dim),
                             static_cast<T>(base.isotropic_scale));
  if constexpr (target_has_bounds<Target>) {
    for (int i = 0; i < layout.dim; ++i) {
      const T a = target.lower_bound(i), b = target.upper_bound(i);
      MYRIAD_EXPECTS(
          !(a >= b) && !std::isnan(static_cast<double>(a)) && !std::isnan(static_cast<double>(b)),
          "bounds of coordinate ", i, " must satisfy lower < upper, got [", a, ", ", b, "]");
      layout.lower.push_back(a);
      layout.upper.push_back(b);
    }
  }
  const auto data_or_null = [](const std::vector<T>& v) { return v.empty() ? nullptr : v.data(); };
  layout.log_z_base = base_log_normaliser(layout.dim, data_or_null(layout.base_scale),
                                          data_or_null(layout.lower), data_or_null(layout.upper));
  return layout;
}

/// Throws myriad::invalid_argument unless the target can start reverse (BDMC) runs.
template <class Target>
void require_exact_samples(const Target& target) {
  MYRIAD_EXPECTS(target_can_sample_exactly(target),
                 "reverse (BDMC) runs need exact posterior samples, which this model does not "
                 "provide");
}

/// P × B particles on one device.
template <class T>
class AisBackend {
 public:
  virtual ~AisBackend() = default;

  virtual const AisLayout<T>& layout() const = 0;
  /// e.g. "cpu (2 OpenMP threads)" or "NVIDIA H100 80GB HBM3 (sm_90)".
  virtual std::string device_name() const = 0;

  /// Starts every particle of a forward run (x ~ q) or a reverse run (an exact posterior draw
  /// of its problem; the target must provide exact_sample). Returns the number of particles
  /// whose start had a non-finite log density or gradient: they carry zero weight.
  virtual std::int64_t start(std::uint64_t seed, bool reverse) = 0;

  /// Runs steps [k_begin, k_end) of the path started last (1 ≤ k_begin ≤ k_end ≤ N + 1).
  virtual IterationStats run(const AisSettings<T>& settings, std::uint32_t k_begin,
                             std::uint32_t k_end) = 0;

  /// Σ Δβ (log p̃ − log q̃) of every particle, [problem][particle]; add log Z_q for log w.
  virtual std::vector<double> log_weights() const = 0;
  /// Current positions, [particle][dim] (problem-major like log_weights).
  virtual std::vector<T> positions() const = 0;
};

/// Declared here, defined in kernels/cuda_ais_backend.cuh and instantiated for the built-in
/// targets (kernels/builtin_instances.cmake). In a build without CUDA it is this inline
/// definition, which throws myriad::unavailable_error.
#if defined(MYRIAD_HAS_CUDA)
template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cuda_ais_backend(const Target& target, AisLayout<T> layout);
#else
template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cuda_ais_backend(const Target&, AisLayout<T>) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
