#pragma once
// Derivatives of generator models (model/generator.hpp) by forward-mode dual numbers.
//
// jacobian_by_duals runs generate() N times, once per input coordinate n, on the input lifted
// to duals with a unit tangent in coordinate n (SeededDualView, model/autodiff.hpp); the
// tangents of the M outputs are column n of J = ∂g_x/∂u (constrained-hmc.md §0). The outputs
// go straight into J through a write-only sink, so no scratch memory is needed and the same
// code runs in a GPU thread. This is the reference that analytic Jacobians are tested against
// and the fallback for generators without one.
//
// Sink contract: generate() assigns each output x[m] once (x[m] = value) and never reads x
// back. Every built-in generator follows it; a generator that reads its outputs does not
// compile with the sinks below (they have no read access).

#include <type_traits>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// A write-only output vector whose element m, when assigned a dual number d, stores the
/// tangent d.eps into J(m, column): the sink through which generate() fills one Jacobian column.
template <class Jac>
struct JacobianColumnSink {
  Jac& jacobian;
  int column;

  struct Entry {
    Jac& jacobian;
    int row;
    int column;
    template <class D>
    MYRIAD_HD void operator=(const D& value) const {
      jacobian(row, column) = value.eps;
    }
  };
  MYRIAD_HD Entry operator[](int m) const { return Entry{jacobian, m, column}; }
};

/// J(m, n) = ∂g_m/∂u_n for all m < M, n < N by N forward-mode passes of generate().
template <class Generator, class Vec, class Jac>
MYRIAD_HD void jacobian_by_duals(const Generator& generator, const Vec& u, Jac& J) {
  const int num_inputs = generator.input_dim();
  for (int n = 0; n < num_inputs; ++n) {
    JacobianColumnSink<Jac> column{J, n};
    generator.generate(SeededDualView<Vec>{u, n}, column);
  }
}

/// log ρ(u) and g = ∇ log ρ(u) by N forward-mode passes of log_prior(); returns log ρ(u).
template <class Generator, class Vec, class Grad>
MYRIAD_HD auto log_prior_gradient_by_duals(const Generator& generator, const Vec& u, Grad& g) {
  using T = element_t<Vec>;
  const int num_inputs = generator.input_dim();
  T value = T(0);
  for (int n = 0; n < num_inputs; ++n) {
    const auto f = generator.log_prior(SeededDualView<Vec>{u, n});
    g[n] = f.eps;
    value = f.val;
  }
  if (num_inputs == 0) value = generator.log_prior(u);
  return value;
}

/// The Jacobian from the generator's own jacobian() when it has one, else by duals.
template <class Generator, class Vec, class Jac>
MYRIAD_HD void generator_jacobian(const Generator& generator, const Vec& u, Jac& J) {
  if constexpr (generator_has_jacobian<Generator>) {
    generator.jacobian(u, J);
  } else {
    jacobian_by_duals(generator, u, J);
  }
}

/// log ρ(u) and ∇ log ρ(u) from the generator's own log_prior_gradient() when it has one, else
/// by duals; returns log ρ(u).
template <class Generator, class Vec, class Grad>
MYRIAD_HD auto generator_log_prior_and_gradient(const Generator& generator, const Vec& u, Grad& g) {
  if constexpr (generator_has_log_prior_gradient<Generator>) {
    return generator.log_prior_gradient(u, g);
  } else {
    return log_prior_gradient_by_duals(generator, u, g);
  }
}

}  // namespace myriad
