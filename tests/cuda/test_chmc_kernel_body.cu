// The constrained-HMC kernels' per-chain bodies (kernels/chmc_kernels.cuh: initialize_chain_at,
// chain_iterations_at) run on the host, over host arrays in the device layout ([element][chain],
// stride padded to 32), against the CPU backend. Compiled by nvcc (CUDA builds only) but needs
// no GPU: it checks, wherever the CUDA code is built, everything of the kernels except the launch
// itself — the [element][chain] views of state and workspaces, the superchain streams, the
// statistics' definitions and the recorded-draw layout. Both sides run the same host-compiled
// per-chain code, so the results must be bit-identical.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/test_generators.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/kernels/chmc_kernels.cuh"
#include "myriad/mcmc/constrained_hmc.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/lotka_volterra.hpp"

namespace myriad {
namespace {

/// An ensemble in the CUDA backend's layout, in host memory, advanced by the kernels' per-chain
/// bodies in a host loop. Chains run in reverse order: any schedule must give the same result.
template <class Generator>
class HostKernelEnsemble {
 public:
  HostKernelEnsemble(const Generator& generator, std::int64_t chains)
      : generator_(generator),
        chains_(chains),
        stride_((chains + 31) / 32 * 32),
        layout_(chmc_layout<Generator, double>(generator)) {
    const auto stride = static_cast<std::size_t>(stride_);
    position_.assign(static_cast<std::size_t>(layout_.n) * stride, 0.0);
    gradient_.assign(static_cast<std::size_t>(layout_.n) * stride, 0.0);
    potential_.assign(stride, 0.0);
    work_.assign(static_cast<std::size_t>(layout_.size()) * stride, 0.0);
    dual_work_.assign(static_cast<std::size_t>(layout_.dual_size()) * stride, Dual<double>(0.0));
    nested_work_.assign(static_cast<std::size_t>(layout_.nested_size()) * stride,
                        Dual<Dual<double>>(Dual<double>(0.0)));
    counters_.assign(9 * static_cast<std::size_t>(chains), 0);
  }

  std::int64_t initialize(std::uint64_t seed, int max_tries, std::int64_t chains_per_init) {
    std::int64_t failed = 0;
    for (std::int64_t c = chains_ - 1; c >= 0; --c) {
      if (!kernels::initialize_chain_at(generator_, view(), seed, max_tries, chains_per_init, c))
        ++failed;
    }
    return failed;
  }

  /// One launch's worth: n iterations of every chain; recorded as the kernel writes it.
  IterationStats run(const ChmcSettings<double>& settings, std::uint32_t first_iteration, int n,
                     std::vector<double>* recorded) {
    std::fill(counters_.begin(), counters_.end(), 0);
    const int quantities = recorded_quantity_count(generator_);
    if (recorded) recorded->assign(static_cast<std::size_t>(n) * quantities * chains_, 0.0);
    const kernels::ChmcStatisticsView stats = statistics();
    for (std::int64_t c = chains_ - 1; c >= 0; --c) {
      kernels::chain_iterations_at(generator_, view(), settings, first_iteration, n,
                                   recorded ? recorded->data() : nullptr, quantities, stats, c);
    }
    IterationStats total;
    total.transitions = chains_ * n;
    for (std::int64_t c = 0; c < chains_; ++c) {
      total.accept_prob_fixed += stats.accept_prob_fixed[c];
      total.accepted += stats.accepted[c];
      total.divergent += stats.divergent[c];
      total.non_finite += stats.non_finite[c];
      total.not_converged += stats.not_converged[c];
      total.not_reversible += stats.not_reversible[c];
      total.cholesky_failures += stats.cholesky_failures[c];
      total.gradient_evaluations += stats.gradient_evaluations[c];
      total.newton_iterations += stats.newton_iterations[c];
    }
    return total;
  }

  /// [dim][chain] without the padding, as ChmcBackend::positions returns it.
  std::vector<double> positions() const {
    std::vector<double> out(static_cast<std::size_t>(layout_.n * chains_));
    for (int d = 0; d < layout_.n; ++d)
      for (std::int64_t c = 0; c < chains_; ++c)
        out[static_cast<std::size_t>(d * chains_ + c)] =
            position_[static_cast<std::size_t>(d * stride_ + c)];
    return out;
  }

 private:
  kernels::ChmcEnsembleView<double> view() {
    return {EnsembleView<double>{position_.data(), chains_, layout_.n, stride_},
            EnsembleView<double>{gradient_.data(), chains_, layout_.n, stride_},
            potential_.data(),
            work_.data(),
            dual_work_.data(),
            nested_work_.data()};
  }
  kernels::ChmcStatisticsView statistics() {
    std::int64_t* base = counters_.data();
    return {base,
            base + chains_,
            base + 2 * chains_,
            base + 3 * chains_,
            base + 4 * chains_,
            base + 5 * chains_,
            base + 6 * chains_,
            base + 7 * chains_,
            base + 8 * chains_};
  }

  Generator generator_;
  std::int64_t chains_;
  std::int64_t stride_;
  ChmcLayout layout_;
  std::vector<double> position_, gradient_, potential_, work_;
  std::vector<Dual<double>> dual_work_;
  std::vector<Dual<Dual<double>>> nested_work_;
  std::vector<std::int64_t> counters_;
};

/// Collects the CPU backend's chunks in delivery order.
class CollectingSink final : public DrawSink<double> {
 public:
  CollectingSink(std::int64_t chains, int quantities) : chains_(chains), quantities_(quantities) {}
  void consume(const double* values, std::int64_t, int n_draws) override {
    values_.insert(values_.end(), values, values + n_draws * quantities_ * chains_);
  }
  std::vector<double> take() { return std::exchange(values_, {}); }

 private:
  std::int64_t chains_;
  int quantities_;
  std::vector<double> values_;
};

template <class Generator>
void expect_kernel_body_matches_cpu(const Generator& generator, std::int64_t chains,
                                    double step_size, std::int64_t chains_per_init,
                                    const std::string& what) {
  SCOPED_TRACE(what);
  ChmcSettings<double> settings;
  settings.seed = 77;
  settings.step.step_size = step_size;
  settings.min_steps = 2;
  settings.max_steps = 5;
  CpuChmcBackend<Generator, double> cpu(generator, chains);
  HostKernelEnsemble<Generator> kernel(generator, chains);
  EXPECT_EQ(kernel.initialize(settings.seed, 10, chains_per_init),
            cpu.initialize(settings.seed, 10, chains_per_init));
  ASSERT_EQ(kernel.positions(), cpu.positions()) << "initial points";
  CollectingSink sink(chains, cpu.num_quantities());
  std::uint32_t iteration = 0;
  IterationStats cpu_total, kernel_total;
  for (int n : {1, 3, 2}) {  // launches of several sizes, as chunks would be
    SCOPED_TRACE("launch of " + std::to_string(n) + " iterations from " +
                 std::to_string(iteration));
    const IterationStats a = cpu.run(settings, iteration, n, &sink, iteration, 0);
    std::vector<double> recorded;
    const IterationStats b = kernel.run(settings, iteration, n, &recorded);
    iteration += static_cast<std::uint32_t>(n);
    EXPECT_EQ(b.transitions, a.transitions);
    EXPECT_EQ(b.accept_prob_fixed, a.accept_prob_fixed);
    EXPECT_EQ(b.accepted, a.accepted);
    EXPECT_EQ(b.divergent, a.divergent);
    EXPECT_EQ(b.non_finite, a.non_finite);
    EXPECT_EQ(b.not_converged, a.not_converged);
    EXPECT_EQ(b.not_reversible, a.not_reversible);
    EXPECT_EQ(b.cholesky_failures, a.cholesky_failures);
    EXPECT_EQ(b.gradient_evaluations, a.gradient_evaluations);
    EXPECT_EQ(b.newton_iterations, a.newton_iterations);
    EXPECT_EQ(recorded, sink.take()) << "recorded draws";
    EXPECT_EQ(kernel.positions(), cpu.positions());
    cpu_total += a;
    kernel_total += b;
  }
  // The comparison is only as strong as the run is varied: moves and rejections both occur.
  EXPECT_GT(cpu_total.accepted, 0);
  EXPECT_LT(cpu_total.accepted, cpu_total.transitions);
}

TEST(CudaChmcKernelBody, MatchesTheCpuBackendOnTheHost) {
  // 37 chains: a padded stride (64) and a last superchain of one chain when 4 share a point.
  expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 37, 1.6, 1, "sphere");
  expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 37, 1.2, 4,
                                 "curved, 4 chains per initial point");
  models::LotkaVolterraSettings settings;
  settings.num_steps = 10;
  settings.r0 = 1;
  settings.f0 = 1;
  settings.true_parameters = {0.3, 0.1, 0.2, 0.1};
  const auto problem = models::LotkaVolterraProblem::make(7, settings);
  expect_kernel_body_matches_cpu(problem.host_model(), 37, 0.4, 1, "lotka_volterra S = 10");
}

}  // namespace
}  // namespace myriad
