#pragma once
// What the host runs of the CUDA AIS backend's kernel bodies (detail/ais_particle_bodies.hpp) in
// its two layouts share (tests/unit/test_ais_device_layout.cpp: the thread mapping;
// test_ais_team.cpp: the warp mapping): the per-particle arrays and the kernels' view of them,
// reading them back in particle order, the padding check, the base view built from a layout,
// and HAIS settings.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/detail/ais_particle_bodies.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/hais.hpp"

namespace myriad::testing {

/// The per-particle arrays of an AIS backend's state: six vectors in whatever layout the owner
/// indexes, and three scalars per particle in particle order.
template <class T>
struct ParticleArrays {
  std::vector<T> position, momentum, gradient, proposal, proposal_momentum, proposal_gradient;
  std::vector<T> target_log_density, base_log_density;
  std::vector<double> log_weight;

  /// `values` entries per vector and one scalar per particle, all NaN (so that anything the code
  /// under test leaves unwritten shows).
  void fill_nan(std::size_t values, std::int64_t particles) {
    for (auto* array : all()) array->assign(values, std::numeric_limits<T>::quiet_NaN());
    const auto n = static_cast<std::size_t>(particles);
    target_log_density.assign(n, std::numeric_limits<T>::quiet_NaN());
    base_log_density.assign(n, std::numeric_limits<T>::quiet_NaN());
    log_weight.assign(n, std::numeric_limits<double>::quiet_NaN());
  }

  /// The six vectors.
  std::vector<std::vector<T>*> all() {
    return {&position, &momentum, &gradient, &proposal, &proposal_momentum, &proposal_gradient};
  }
  std::vector<const std::vector<T>*> all() const {
    return {&position, &momentum, &gradient, &proposal, &proposal_momentum, &proposal_gradient};
  }

  /// The kernels' view of the arrays (kernels::AisEnsembleView, as CudaAisBackend::state_view
  /// builds it), with view(array) the owner's EnsembleView of one of the six vectors.
  template <class View>
  kernels::AisEnsembleView<T> ensemble_view(View view, T* scratch = nullptr,
                                            int scratch_size = 0) {
    return {view(position),
            view(momentum),
            view(gradient),
            view(proposal),
            view(proposal_momentum),
            view(proposal_gradient),
            target_log_density.data(),
            base_log_density.data(),
            log_weight.data(),
            scratch,
            scratch_size};
  }
};

/// The [particle][dim] values of `array` in a layout that keeps coordinate d of particle i at
/// array[offset(i, d)] (CudaAisBackend::positions).
template <class T, class Offset>
std::vector<T> particle_major(const std::vector<T>& array, std::int64_t particles, int dim,
                              Offset offset) {
  std::vector<T> out(static_cast<std::size_t>(particles) * dim);
  for (std::int64_t i = 0; i < particles; ++i)
    for (int d = 0; d < dim; ++d)
      out[static_cast<std::size_t>(i * dim + d)] = array[static_cast<std::size_t>(offset(i, d))];
  return out;
}

/// Entries of the six arrays that no (particle, coordinate) maps to under `offset` (the
/// layout's padding, filled with NaN by the mirror) and that are no longer NaN.
template <class T, class Offset>
std::int64_t written_padding(const ParticleArrays<T>& arrays, std::int64_t particles, int dim,
                             Offset offset) {
  std::int64_t written = 0;
  for (const std::vector<T>* array : arrays.all()) {
    std::vector<bool> coordinate(array->size(), false);
    for (std::int64_t i = 0; i < particles; ++i)
      for (int d = 0; d < dim; ++d) coordinate[static_cast<std::size_t>(offset(i, d))] = true;
    for (std::size_t k = 0; k < array->size(); ++k)
      written += !coordinate[k] && !std::isnan((*array)[k]) ? 1 : 0;
  }
  return written;
}

/// The base q of a layout as the backends pass it to the per-particle code.
template <class T>
AnnealingBase<T> base_view_of(const AisLayout<T>& layout) {
  const auto data_or_null = [](const std::vector<T>& v) -> const T* {
    return v.empty() ? nullptr : v.data();
  };
  return {layout.dim, data_or_null(layout.base_mean), data_or_null(layout.base_scale),
          data_or_null(layout.lower), data_or_null(layout.upper)};
}

/// HAIS settings with step size ε and the default refresh γ = 1 − 0.5^ε.
template <class T>
AisSettings<T> hais_settings(double step_size = 0.2) {
  AisSettings<T> s;
  s.step_size = static_cast<T>(step_size);
  s.refresh = static_cast<T>(default_refresh(step_size));
  return s;
}

}  // namespace myriad::testing
