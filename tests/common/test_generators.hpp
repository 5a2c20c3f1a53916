#pragma once
// Small generator models for constrained-HMC tests, independent of the built-in models: a
// sphere with an analytic Jacobian and a curved generator whose derivatives come from dual and
// nested dual numbers. Shared by tests/unit/test_chmc.cpp (CPU) and the CUDA tests
// (tests/cuda/test_cuda_chmc.cpp, whose kernels tests/cuda/chmc_test_generators.cu instantiates),
// so every member is MYRIAD_HD and uses myriad:: math, which works in device code too.

#include <cstdint>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/generator.hpp"

namespace myriad::test_generators {

/// g(u) = Σ u_i² conditioned on r², u ~ N(0, I): uniform on the sphere of radius r
/// (constrained-hmc.md §2). Analytic Jacobian 2uᵀ; initialize() normalises a normal draw.
struct TestSphere {
  using value_type = double;
  int n = 4;
  double radius = 1.5;
  MYRIAD_HD int input_dim() const { return n; }
  MYRIAD_HD int output_dim() const { return 1; }
  MYRIAD_HD double observed(int) const { return radius * radius; }
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    auto s = u[0] * u[0];
    for (int i = 1; i < n; ++i) s += u[i] * u[i];
    x[0] = s;
  }
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, n);
  }
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& j) const {
    for (int i = 0; i < n; ++i) j(0, i) = 2.0 * u[i];
  }
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    double norm = 0;
    for (int i = 0; i < n; ++i) {
      u[i] = rng.normal<double>(attempt, Purpose::initial_point, i);
      norm += u[i] * u[i];
    }
    norm = myriad::sqrt(norm);
    for (int i = 0; i < n; ++i) u[i] *= radius / norm;
    return true;
  }
};

/// A non-linear generator without an analytic Jacobian (duals and nested duals are used):
/// g(u) = (u₀ + u₁³/3 + u₂, u₁ − sin u₂ + u₃), N = 4, M = 2.
struct TestCurved {
  using value_type = double;
  MYRIAD_HD int input_dim() const { return 4; }
  MYRIAD_HD int output_dim() const { return 2; }
  MYRIAD_HD double observed(int m) const { return m == 0 ? 0.5 : -0.25; }
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    x[0] = u[0] + u[1] * u[1] * u[1] / 3.0 + u[2];
    x[1] = u[1] - myriad::sin(u[2]) + u[3];
  }
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, 4);
  }
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    // Draw u₁, u₂ and solve the (linear) constraints for u₀ and u₃.
    u[1] = rng.normal<double>(attempt, Purpose::initial_point, 1);
    u[2] = rng.normal<double>(attempt, Purpose::initial_point, 2);
    u[0] = 0.5 - u[1] * u[1] * u[1] / 3.0 - u[2];
    u[3] = -0.25 - u[1] + myriad::sin(u[2]);
    return true;
  }
};

}  // namespace myriad::test_generators
