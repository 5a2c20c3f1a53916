#pragma once
// One constrained-HMC chain's state and workspaces on the host, contiguous (stride 1): for the
// tests and benchmarks that run the per-chain body (mcmc/chmc.hpp) directly, without a backend
// (tests/unit/test_chmc.cpp, bench/bm_chmc.cpp's BM_chmc_gradient).

#include <cstddef>
#include <vector>

#include "myriad/core/dual.hpp"
#include "myriad/mcmc/chmc.hpp"

namespace myriad::testing {

/// The chain's positions u (`points` of them, one after another: a view may move the chain among
/// them) share its gradient, potential and workspaces.
template <class Generator>
struct HostChmcChain {
  explicit HostChmcChain(const Generator& g, int points = 1)
      : layout(chmc_layout<Generator, double>(g)),
        u(static_cast<std::size_t>(points) * static_cast<std::size_t>(layout.n), 0.0),
        grad(static_cast<std::size_t>(layout.n), 0.0),
        work(static_cast<std::size_t>(layout.size()), 0.0),
        dual(static_cast<std::size_t>(layout.dual_size()), Dual<double>(0.0)),
        nested(static_cast<std::size_t>(layout.nested_size()),
               Dual<Dual<double>>(Dual<double>(0.0))) {}

  /// The chain at position `point`.
  ChmcChain<double> view(int point = 0) {
    return {ChainVector<double>{u.data() + static_cast<std::size_t>(point) * layout.n, 1, layout.n},
            ChainVector<double>{grad.data(), 1, layout.n},
            &potential,
            ChainWorkspace<double>{work.data(), 1},
            ChainWorkspace<Dual<double>>{dual.data(), 1},
            ChainWorkspace<Dual<Dual<double>>>{nested.data(), 1}};
  }

  ChmcLayout layout;
  std::vector<double> u, grad, work;
  std::vector<Dual<double>> dual;
  std::vector<Dual<Dual<double>>> nested;
  double potential = 0;
};

}  // namespace myriad::testing
