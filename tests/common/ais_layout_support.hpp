#pragma once
// What the AIS tests that run the per-particle bodies themselves (test_ais_team.cpp: the warp
// mapping on host threads; test_ais_lanes.cpp: SIMD lanes) share: the base view built from a
// layout, as the backends pass it, and HAIS settings.

#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/hais.hpp"

namespace myriad::testing {

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
