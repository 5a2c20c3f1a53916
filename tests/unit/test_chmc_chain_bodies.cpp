// The constrained-HMC kernels' per-chain bodies (detail/chmc_chain_bodies.hpp:
// initialize_chain_at, chain_iterations_at) run on the host, over host arrays in the device
// layout of each chain mapping, against the CPU backend. Needs no GPU: it checks, in every
// build, everything of the kernels except the launch itself.
//   thread per chain: SerialTeam, scratch [element][chain] with the stride padded to 32;
//   warp per chain:   a team of host threads (tests/common/thread_team.hpp) per chain, with
//                     real barriers, and the scratch [chain][element] padded to 32 bytes.
// Both sides run the same host-compiled per-chain code and a team reproduces one lane bit for
// bit (mcmc/chmc.hpp), so positions, statistics and recorded draws must be
// identical. A missing barrier in the team code shows up here as a mismatch or a flaky run.
//
// The batched Gram factorisation (GramFactorization) runs the same way: the transition in
// phases (begin_transition_at, resume_transition_at) with the Gram matrices in their column-major
// batches, factored between phases by linalg::batched_cholesky_cpu, the CPU twin of the CUDA
// tiers. Its Cholesky rounds as the chain's own does, so this too must match the CPU backend bit
// for bit; on a GPU only the batched call differs (tests/cuda/test_cuda_chmc.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/test_generators.hpp"
#include "common/thread_team.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/gram_factorization.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/chmc_chain_bodies.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"

namespace myriad {
namespace {

/// An ensemble in the CUDA backend's layout for one chain mapping, in host memory, advanced by
/// the kernels' per-chain bodies in a host loop: with `lanes` = 0 one chain at a time on this
/// thread (thread per chain), else each chain by a team of `lanes` host threads in the warp
/// mapping's layout. Chains run in reverse order: any schedule must give the same result.
/// `batched`: the Gram matrices factored between phases by batched_cholesky_cpu, as the CUDA
/// backend's batched factorisation does with its tiers.
template <class Generator>
class HostKernelEnsemble {
 public:
  HostKernelEnsemble(const Generator& generator, std::int64_t chains, int lanes,
                     bool batched = false)
      : generator_(generator),
        chains_(chains),
        stride_((chains + 31) / 32 * 32),
        lanes_(lanes),
        batched_(batched),
        layout_(chmc_layout<Generator, double>(generator, lanes > 0 ? lanes : 1, batched)),
        scratch_(lanes > 0 ? kernels::ChmcScratchPlacement::chain_major<double>(layout_)
                           : kernels::ChmcScratchPlacement::interleaved(stride_)) {
    const auto stride = static_cast<std::size_t>(stride_);
    position_.assign(static_cast<std::size_t>(layout_.n) * stride, 0.0);
    gradient_.assign(static_cast<std::size_t>(layout_.n) * stride, 0.0);
    potential_.assign(stride, 0.0);
    work_.assign(static_cast<std::size_t>(scratch_.work_values(layout_, chains_, stride_)), 0.0);
    dual_work_.assign(static_cast<std::size_t>(scratch_.dual_values(layout_, chains_, stride_)),
                      Dual<double>(0.0));
    nested_work_.assign(static_cast<std::size_t>(scratch_.nested_values(layout_, chains_, stride_)),
                        Dual<Dual<double>>(Dual<double>(0.0)));
    counters_.assign(kernels::ChainStatisticsView::kCounters * static_cast<std::size_t>(chains), 0);
    halvings_.assign(static_cast<std::size_t>(chains), 0);
    if (batched) {
      gram_.assign(2 * static_cast<std::size_t>(chains) * layout_.m * layout_.m, 0.0);
      info_.assign(static_cast<std::size_t>(chains), 0);
      progress_.resize(static_cast<std::size_t>(chains));
    }
  }

  std::int64_t initialize(std::uint64_t seed, int max_tries, std::int64_t chains_per_init) {
    std::int64_t failed = 0;
    for (std::int64_t c = chains_ - 1; c >= 0; --c) {
      const bool placed = on_chain_team([&](const auto& team) {
        return kernels::initialize_chain_at(generator_, view(), seed, max_tries, chains_per_init, c,
                                            team);
      });
      if (!placed) ++failed;
    }
    return failed;
  }

  /// One launch's worth: n iterations of every chain; recorded as the kernel writes it.
  IterationStats run(const ChmcSettings<double>& settings, std::uint32_t first_iteration, int n,
                     std::vector<double>* recorded) {
    std::fill(counters_.begin(), counters_.end(), 0);
    const int quantities = recorded_quantity_count(generator_);
    if (recorded) recorded->assign(static_cast<std::size_t>(n) * quantities * chains_, 0.0);
    const kernels::ChainStatisticsView stats = statistics();
    double* slots = recorded ? recorded->data() : nullptr;
    if (batched_) {
      run_phased(settings, first_iteration, n, slots, quantities, stats);
    } else {
      for (std::int64_t c = chains_ - 1; c >= 0; --c) {
        on_chain_team([&](const auto& team) {
          kernels::chain_iterations_at(generator_, view(), settings, first_iteration, n, slots,
                                       quantities, stats, c, team);
          return true;
        });
      }
    }
    IterationStats total;
    for (std::int64_t c = 0; c < chains_; ++c) total += stats.load(c);
    EXPECT_EQ(total.transitions, chains_ * n) << "each chain counts its own transitions";
    return total;
  }

  const std::vector<std::uint8_t>& step_halvings() const { return halvings_; }

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
  /// CudaChmcBackend::run_phased with host loops for the launches and batched_cholesky_cpu.
  /// With a warp layout one team of lanes_ threads runs the whole launch: it takes the chains in
  /// turn within each phase, lane 0 factors the batch between phases, and a team barrier stands
  /// for each launch boundary (a team per chain per phase would start ~25 times as many threads
  /// as the fused path). Like every thread-team test it is slow beside other busy processes, so
  /// ctest runs it alone (tests/CMakeLists.txt).
  void run_phased(const ChmcSettings<double>& settings, std::uint32_t first_iteration, int n,
                  double* slots, int quantities, const kernels::ChainStatisticsView& stats) {
    const kernels::ChmcEnsembleView<double> state = view();
    on_ensemble_team([&](const auto& team) {
      for (int i = 0; i < n; ++i) {
        const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
        double* recorded_iteration =
            slots != nullptr ? slots + static_cast<std::int64_t>(i) * quantities * chains_
                             : nullptr;
        kernels::run_phased_iteration(
            settings, iteration,
            [&] {
              for (std::int64_t c = chains_ - 1; c >= 0; --c)
                kernels::begin_transition_at(generator_, state, progress_.data(), c, team);
              team.sync();
            },
            [&](int which) {
              if (team.rank() == 0)
                linalg::batched_cholesky_cpu(state.gram_batch(which), layout_.m, chains_,
                                             info_.data());
              team.sync();
            },
            [&](const ChmcStep<double>& step, int phase, bool last) {
              for (std::int64_t c = chains_ - 1; c >= 0; --c)
                kernels::resume_transition_at(generator_, state, settings.seed, iteration, step,
                                              settings.step_back_off, phase, info_.data(),
                                              progress_.data(), last, recorded_iteration,
                                              quantities, stats, c, team);
              team.sync();
            });
      }
    });
  }

  /// body(team) once: on this thread with SerialTeam, or on one team of lanes_ threads.
  template <class Body>
  void on_ensemble_team(Body body) {
    if (lanes_ == 0) {
      body(SerialTeam{});
      return;
    }
    testing::run_team(lanes_, [&](const testing::ThreadTeam& team) { body(team); });
  }

  /// body(team) for one chain: on this thread with SerialTeam, or on a team of lanes_ threads
  /// (every lane must return the same value; lane 0's is returned).
  template <class Body>
  bool on_chain_team(Body body) {
    if (lanes_ == 0) return body(SerialTeam{});
    std::vector<char> results(static_cast<std::size_t>(lanes_), 0);
    testing::run_team(lanes_, [&](const testing::ThreadTeam& team) {
      results[static_cast<std::size_t>(team.rank())] = body(team) ? 1 : 0;
    });
    for (char r : results) EXPECT_EQ(r, results[0]) << "lanes disagree";
    return results[0] != 0;
  }

  kernels::ChmcEnsembleView<double> view() {
    return {EnsembleView<double>{position_.data(), chains_, layout_.n, stride_},
            EnsembleView<double>{gradient_.data(), chains_, layout_.n, stride_},
            potential_.data(),
            work_.data(),
            dual_work_.data(),
            nested_work_.data(),
            scratch_,
            batched_ ? gram_.data() : nullptr,
            layout_.m,
            halvings_.data()};
  }
  kernels::ChainStatisticsView statistics() { return {counters_.data(), chains_}; }

  Generator generator_;
  std::int64_t chains_;
  std::int64_t stride_;
  int lanes_;
  bool batched_;
  ChmcLayout layout_;
  kernels::ChmcScratchPlacement scratch_;
  std::vector<double> position_, gradient_, potential_, work_;
  std::vector<Dual<double>> dual_work_;
  std::vector<Dual<Dual<double>>> nested_work_;
  std::vector<std::int64_t> counters_;
  std::vector<std::uint8_t> halvings_;
  std::vector<double> gram_;  // batched: two batches of chains · M² values
  std::vector<int> info_;
  std::vector<ChmcProgress<double>> progress_;
};

/// Collects the CPU backend's chunks in delivery order.
class CollectingSink final : public DrawSink<double> {
 public:
  CollectingSink(std::int64_t chains, int quantities) : chains_(chains), quantities_(quantities) {}
  void consume(const double* values, std::int64_t, int num_draws) override {
    values_.insert(values_.end(), values, values + num_draws * quantities_ * chains_);
  }
  std::vector<double> take() { return std::exchange(values_, {}); }

 private:
  std::int64_t chains_;
  int quantities_;
  std::vector<double> values_;
};

/// Runs the CPU backend, one chain at a time (the kernels' per-chain code; its SIMD lanes are
/// tested in test_chmc_lanes.cpp), and the kernel bodies side by side and expects identical
/// results;
/// returns the chains found backed off (step back-off h > 0) after the launches, summed over
/// the launches, so that a test can require the back-off to have been exercised.
template <class Generator>
int expect_kernel_body_matches_cpu(const Generator& generator, std::int64_t chains,
                                   double step_size, std::int64_t chains_per_init, int lanes,
                                   const std::string& what, bool batched = false) {
  SCOPED_TRACE(what +
               (lanes == 0 ? ", thread per chain"
                           : ", a team of " + std::to_string(lanes) + " lanes per chain") +
               (batched ? ", Gram batched" : ""));
  ChmcSettings<double> settings;
  settings.seed = 77;
  settings.step.step_size = step_size;
  settings.min_steps = 2;
  settings.max_steps = 5;
  CpuChmcBackend<Generator, double> cpu(generator, chains, /*simd_lanes=*/false);
  HostKernelEnsemble<Generator> kernel(generator, chains, lanes, batched);
  EXPECT_EQ(kernel.initialize(settings.seed, 10, chains_per_init),
            cpu.initialize(settings.seed, 10, chains_per_init));
  if (kernel.positions() != cpu.positions()) {
    ADD_FAILURE() << "the initial points differ";
    return 0;
  }
  CollectingSink sink(chains, cpu.num_quantities());
  std::uint32_t iteration = 0;
  IterationStats cpu_total, kernel_total;
  int backed_off = 0;
  for (int n : {1, 3, 2}) {  // launches of several sizes, as chunks would be
    SCOPED_TRACE("launch of " + std::to_string(n) + " iterations from " +
                 std::to_string(iteration));
    // The first two launches as in warm-up (each chain's own step back-off), the last as in
    // sampling.
    settings.step_back_off = iteration < 4;
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
    EXPECT_EQ(kernel.step_halvings(), cpu.step_halvings()) << "step back-off";
    for (std::uint8_t h : cpu.step_halvings()) backed_off += h > 0;
    cpu_total += a;
    kernel_total += b;
  }
  // The comparison is only as strong as the run is varied: moves and rejections both occur.
  EXPECT_GT(cpu_total.accepted, 0);
  EXPECT_LT(cpu_total.accepted, cpu_total.transitions);
  return backed_off;
}

/// Lotka–Volterra with 10 steps (M = 20, N = 24): structured (triangular + low rank) Gram and
/// add_jacobian_vjp.
const models::LotkaVolterraProblem& short_lotka_volterra() {
  static const models::LotkaVolterraProblem problem =
      models::LotkaVolterraProblem::make(7, models::LotkaVolterraSettings::short_series());
  return problem;
}

/// linear_gaussian with M = 18 ≥ kWarpPerChainMinOutputs: a dense Gram that the automatic
/// mapping gives a warp (analytic Jacobian, a no-op add_jacobian_vjp).
const models::LinearGaussianProblem& linear_gaussian() {
  static const models::LinearGaussianProblem problem =
      models::LinearGaussianProblem::make(18, 23, 5);
  return problem;
}

TEST(ChmcChainBodies, ThreadPerChainMatchesTheCpuBackend) {
  // 37 chains: a padded stride (64) and a last superchain of one chain when 4 share a point.
  int backed_off =
      expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 37, 1.6, 1, 0, "sphere");
  backed_off += expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 37, 1.2, 4, 0,
                                               "curved, 4 chains per initial point");
  backed_off += expect_kernel_body_matches_cpu(short_lotka_volterra().host_model(), 37, 0.4, 1, 0,
                                               "lotka_volterra S = 10");
  EXPECT_GT(backed_off, 0) << "no chain backed off its step: the back-off went untested";
}

// Lane counts that divide the sizes, do not, exceed them, and the warp's 32.
TEST(ChmcChainBodies, WarpPerChainMatchesTheCpuBackendOnASphere) {
  int backed_off =
      expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 9, 1.6, 1, 3, "sphere");
  backed_off +=
      expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 4, 1.6, 1, 32, "sphere");
  EXPECT_GT(backed_off, 0) << "no chain backed off its step: the back-off went untested";
}

TEST(ChmcChainBodies, WarpPerChainMatchesTheCpuBackendWithDualDerivatives) {
  // J's forward passes and the nested-dual passes dealt to the lanes, each with its own outputs;
  // with 5 lanes one lane has no input of the 4.
  expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 9, 1.2, 4, 2,
                                 "curved (duals, nested duals), 4 chains per initial point");
  expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 4, 1.2, 1, 5, "curved");
}

TEST(ChmcChainBodies, WarpPerChainMatchesTheCpuBackendOnADenseGram) {
  expect_kernel_body_matches_cpu(linear_gaussian().host_model(), 6, 1.5, 1, 5,
                                 "linear_gaussian M = 18");
}

TEST(ChmcChainBodies, WarpPerChainMatchesTheCpuBackendOnAStructuredGram) {
  expect_kernel_body_matches_cpu(short_lotka_volterra().host_model(), 5, 0.4, 1, 4,
                                 "lotka_volterra S = 10 (structured Gram: lane 0)");
}

TEST(ChmcChainBodies, BatchedGramFactorisationMatchesTheCpuBackend) {
  int backed_off =
      expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 37, 1.6, 1, 0, "sphere", true);
  backed_off += expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 37, 1.2, 4, 0,
                                               "curved, 4 chains per initial point", true);
  backed_off += expect_kernel_body_matches_cpu(linear_gaussian().host_model(), 11, 1.5, 1, 0,
                                               "linear_gaussian M = 18", true);
  EXPECT_GT(backed_off, 0) << "no chain backed off its step: the back-off went untested";
}

TEST(ChmcChainBodies, BatchedGramFactorisationWithAWarpPerChainMatchesTheCpuBackend) {
  int backed_off = expect_kernel_body_matches_cpu(test_generators::TestCurved{}, 9, 1.2, 4, 3,
                                                  "curved (duals, nested duals)", true);
  backed_off += expect_kernel_body_matches_cpu(linear_gaussian().host_model(), 6, 1.5, 1, 5,
                                               "linear_gaussian M = 18", true);
  backed_off +=
      expect_kernel_body_matches_cpu(test_generators::TestSphere{}, 9, 1.6, 1, 3, "sphere", true);
  EXPECT_GT(backed_off, 0) << "no chain backed off its step: the back-off went untested";
}

TEST(ChmcChainBodies, BatchedGramFactoredOnlyWithZeroInfoAndFinitePositivePivots) {
  // Two chains, M = 2: factor 1 of chain 1 is the last matrix of the second batch.
  std::vector<double> gram(2 * 2 * 4, 1.0);
  kernels::ChmcEnsembleView<double> state{};
  state.position.chains = 2;
  state.gram = gram.data();
  state.gram_order = 2;
  double* l = state.gram_batch(1) + 4;  // column-major: pivots at 0 and 3
  EXPECT_TRUE(state.gram_factored(1, 1, 0));
  EXPECT_FALSE(state.gram_factored(1, 1, 2)) << "the library's info";
  l[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(state.gram_factored(1, 1, 0)) << "a NaN pivot the library did not flag";
  l[3] = 0.0;
  EXPECT_FALSE(state.gram_factored(1, 1, 0)) << "a zero pivot";
  EXPECT_TRUE(state.gram_factored(0, 1, 0)) << "the other factor's batch is untouched";
  EXPECT_TRUE(state.gram_factored(1, 0, 0)) << "the other chain is untouched";
}

TEST(ChmcChainBodies, AutomaticGramFactorisationBatchesDenseGramsUnderWarps) {
  const struct {
    GramFactorization requested;
    GramStructure structure;
    ChmcChainMapping mapping;
    GramFactorization resolved;
  } resolutions[] = {{GramFactorization::automatic, GramStructure::dense, ChmcChainMapping::warp,
                      GramFactorization::library},
                     {GramFactorization::automatic, GramStructure::dense, ChmcChainMapping::thread,
                      GramFactorization::chain},
                     {GramFactorization::automatic, GramStructure::diagonal_plus_low_rank,
                      ChmcChainMapping::warp, GramFactorization::chain},
                     {GramFactorization::tile, GramStructure::dense, ChmcChainMapping::thread,
                      GramFactorization::tile}};
  for (const auto& r : resolutions)
    EXPECT_EQ(resolve_gram_factorization(r.requested, r.structure, r.mapping), r.resolved)
        << to_string(r.requested) << " for structure " << static_cast<int>(r.structure)
        << " under mapping " << static_cast<int>(r.mapping);
  EXPECT_THROW(
      resolve_gram_factorization(GramFactorization::library,
                                 GramStructure::triangular_plus_low_rank, ChmcChainMapping::warp),
      invalid_argument);
  EXPECT_THROW(
      check_gram_factorization(GramFactorization::registers, GramStructure::diagonal_plus_low_rank),
      invalid_argument);
  // The automatic pair for the sizes the mapping rows measured: M = 9 thread and chain, M = 16
  // and beyond warp and library.
  for (int m : {9, 16, 128}) {
    const ChmcChainMapping mapping =
        resolve_chmc_chain_mapping(ChmcChainMapping::automatic, GramStructure::dense, m);
    EXPECT_EQ(
        resolve_gram_factorization(GramFactorization::automatic, GramStructure::dense, mapping),
        m < kWarpPerChainMinOutputs ? GramFactorization::chain : GramFactorization::library)
        << "M = " << m;
  }
  for (GramFactorization f :
       {GramFactorization::automatic, GramFactorization::chain, GramFactorization::registers,
        GramFactorization::thread, GramFactorization::tile, GramFactorization::library})
    EXPECT_EQ(parse_gram_factorization(to_string(f)), f);
  EXPECT_EQ(cholesky_tier(GramFactorization::registers), linalg::CholeskyTier::registers);
  EXPECT_EQ(cholesky_tier(GramFactorization::thread), linalg::CholeskyTier::thread);
  EXPECT_EQ(cholesky_tier(GramFactorization::tile), linalg::CholeskyTier::tile);
  EXPECT_EQ(cholesky_tier(GramFactorization::library), linalg::CholeskyTier::library);
  EXPECT_THROW(cholesky_tier(GramFactorization::chain), invalid_argument);
  EXPECT_THROW(parse_gram_factorization("cusolver"), invalid_argument);
}

TEST(ChmcChainBodies, AutomaticMappingGivesWarpsToLargeDenseGrams) {
  EXPECT_EQ(resolve_chmc_chain_mapping(ChmcChainMapping::automatic, GramStructure::dense, 18),
            ChmcChainMapping::warp);
  EXPECT_EQ(resolve_chmc_chain_mapping(ChmcChainMapping::automatic, GramStructure::dense, 9),
            ChmcChainMapping::thread);
  EXPECT_EQ(resolve_chmc_chain_mapping(ChmcChainMapping::automatic,
                                       GramStructure::triangular_plus_low_rank, 100),
            ChmcChainMapping::thread);
  EXPECT_EQ(resolve_chmc_chain_mapping(ChmcChainMapping::warp, GramStructure::dense, 1),
            ChmcChainMapping::warp);
  EXPECT_EQ(resolve_chmc_chain_mapping(ChmcChainMapping::thread, GramStructure::dense, 100),
            ChmcChainMapping::thread);
}

}  // namespace
}  // namespace myriad
