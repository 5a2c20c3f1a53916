#pragma once
// A model seen through its dimension and log density only, as a user writes one: whatever
// gradient the model supplies is hidden, so the library differentiates log_density with
// forward-mode duals (model/autodiff.hpp). For the benchmarks of dual gradients
// (bench/bm_gradient.cpp) and the checks of supplied gradients against them
// (tests/common/posteriordb_port_checks.hpp).

namespace myriad::testing {

template <class Model>
struct DensityOnly {
  Model model;
  int dim() const { return model.dim(); }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return model.log_density(x);
  }
};

}  // namespace myriad::testing
