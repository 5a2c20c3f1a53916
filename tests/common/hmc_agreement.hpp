#pragma once
// Agreement of two HMC backends run from one seed: the CPU backend one chain at a time (the
// reference, "cpu" below) against the CUDA backend (tests/cuda/test_cuda_hmc.cpp) or against the
// CPU backend with chains in SIMD lanes (tests/unit/test_hmc_lanes.cpp). The lanes differ from
// the reference as the GPU does: xsimd's exp and log against libm's by an ulp or two, and FMA
// contraction where the AVX2 and AVX-512 kernels are compiled with FMA and the reference is not.
//
// What "agree" means, and why the tolerances are what they are:
//  * Initial points are bit-identical: the uniform draws are integer arithmetic plus one exact
//    scaling, and radius · (2u − 1) rounds the same everywhere (2u is exact, so contracting
//    2u − 1 into an FMA changes nothing).
//  * Trajectories agree to rounding, not bits: the momenta come from log, sqrt, sin and cos,
//    which differ by an ulp or two between glibc and CUDA's libdevice, and nvcc contracts
//    a · b + c into FMAs where g++ (baseline x86-64, no FMA) rounds twice. The leapfrog map of
//    these targets is stable at the step sizes used, so such differences grow about linearly
//    with the number of steps: ≲ 5 iterations × 8 steps × ~10 operations of a few ulp each, i.e.
//    ~10³ ulp relative. Hence kPositionTolerance: 2e-3 for float (ulp 6e-8 → 6e-5, with a
//    margin of 30 for the condition of the map) and 1e-9 for double (ulp 1.1e-16 → 1.1e-13).
//  * Accept/reject decisions agree unless log u falls within the energy difference's rounding
//    error δ of log r. log u has density ≤ 1, so the chance is ≤ δ per transition: ~1e-4 in
//    float (energies ~10 with ~10³ ulp of error), ~1e-12 in double. With a few hundred
//    transitions per comparison, at most one flipped chain is tolerated in float and none in
//    double; flipped chains are excluded from the position comparison (their trajectories
//    legitimately part ways).
//  * Launch configuration and chunking change nothing: each chain's arithmetic is the same code
//    in the same order whatever the grid, so chunked and unchunked CUDA runs are bit-identical.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/recording_sink.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/model/concept.hpp"

namespace myriad::testing {

template <class T>
constexpr double kPositionTolerance = sizeof(T) == sizeof(float) ? 2e-3 : 1e-9;
template <class T>
constexpr int kAllowedFlippedChains = sizeof(T) == sizeof(float) ? 1 : 0;

template <class T>
HmcSettings<T> test_settings(std::uint64_t seed) {
  HmcSettings<T> settings;
  settings.seed = seed;
  settings.step_size = T(0.2);
  settings.max_leapfrog_steps = 8;
  settings.jitter = T(0.5);
  return settings;
}

/// |a − b| ≤ tolerance · max(1, |a|, |b|).
template <class T>
bool close(T a, T b, double tolerance) {
  const double scale = std::max({1.0, std::fabs(double(a)), std::fabs(double(b))});
  return std::fabs(double(a) - double(b)) <= tolerance * scale;
}

/// Per chain and draw: did the recorded quantities change from the previous draw (an accepted
/// proposal)? Draw 0 compares with `initial`, the same quantities before the run.
template <class T>
std::vector<std::vector<bool>> moves(const RecordingSink<T>& sink, const RecordingSink<T>& initial,
                                     std::int64_t chains, int quantities) {
  std::vector<std::vector<bool>> moved(static_cast<std::size_t>(chains));
  for (std::int64_t c = 0; c < chains; ++c) {
    for (int i = 0; i < sink.draws(); ++i) {
      bool changed = false;
      for (int q = 0; q < quantities; ++q) {
        const T before = i == 0 ? initial.at(0, q, c) : sink.at(i - 1, q, c);
        changed = changed || sink.at(i, q, c) != before;
      }
      moved[c].push_back(changed);
    }
  }
  return moved;
}

/// Runs two HMC backends of one model (`cpu`, the reference: the CPU backend one chain at a
/// time; `cuda`, the one under test: the CUDA backend, or the CPU backend in SIMD lanes) from the
/// same seed and compares initial points, decisions, draws, statistics and moments as described
/// at the top of the file. cpu_model is the model on the host (for its recorded quantities);
/// inverse_metric, when given, replaces the default diagonal one (a dense one: dim² entries).
template <class T, class Model>
void expect_hmc_backends_agree(const Model& cpu_model, HmcBackend<T>* cpu, HmcBackend<T>* cuda,
                               std::int64_t chains, std::int64_t chains_per_init = 1,
                               std::vector<T> inverse_metric = {}) {
  const std::uint64_t seed = 20261122;
  const int iterations = 5;
  ASSERT_EQ(cuda->chains(), chains);
  ASSERT_EQ(cuda->dim(), cpu->dim());
  ASSERT_EQ(cuda->num_quantities(), cpu->num_quantities());
  EXPECT_EQ(cuda->quantity_names(), cpu->quantity_names());
  const int dim = cpu->dim();
  const int quantities = cpu->num_quantities();

  EXPECT_EQ(cpu->initialize(seed, T(2), 100, chains_per_init),
            cuda->initialize(seed, T(2), 100, chains_per_init));
  ASSERT_EQ(cpu->positions(), cuda->positions()) << "initial points differ";

  if (inverse_metric.empty()) {  // a diagonal metric, unequal entries
    inverse_metric.resize(static_cast<std::size_t>(dim));
    for (int i = 0; i < dim; ++i) inverse_metric[i] = T(0.75) + T(0.125) * T(i % 4);
  }
  cpu->set_inverse_metric(inverse_metric);
  cuda->set_inverse_metric(inverse_metric);

  // The recorded quantities at the initial points (identical on both backends), from which
  // the first draw's decision is read.
  const std::vector<T> initial_positions = cpu->positions();
  std::vector<T> initial_quantities(static_cast<std::size_t>(quantities * chains));
  for (std::int64_t c = 0; c < chains; ++c) {
    const ChainVector<T> position{const_cast<T*>(initial_positions.data()) + c, chains, dim};
    ChainVector<T> slot{initial_quantities.data() + c, chains, quantities};
    record_quantities(cpu_model, position, slot);
  }
  RecordingSink<T> initial(chains, quantities, 0);
  initial.consume(initial_quantities.data(), 0, 1);

  RecordingSink<T> cpu_draws(chains, quantities, 7), cuda_draws(chains, quantities, 7);
  EnsembleMoments cpu_moments, cuda_moments;
  const HmcSettings<T> settings = test_settings<T>(seed);
  const IterationStats cpu_stats =
      cpu->run(settings, 0, iterations, &cpu_draws, 7, 2, &cpu_moments);
  const IterationStats cuda_stats =
      cuda->run(settings, 0, iterations, &cuda_draws, 7, 2, &cuda_moments);
  ASSERT_EQ(cuda_draws.draws(), iterations);
  EXPECT_EQ(cuda_draws.chunk_sizes, (std::vector<int>{2, 2, 1}));

  // Decisions: a draw equal to its predecessor is a rejection (or a divergence).
  const auto cpu_moves = moves(cpu_draws, initial, chains, quantities);
  const auto cuda_moves = moves(cuda_draws, initial, chains, quantities);
  std::vector<bool> flipped(static_cast<std::size_t>(chains), false);
  int n_flipped = 0;
  for (std::int64_t c = 0; c < chains; ++c) {
    if (cpu_moves[c] != cuda_moves[c]) {
      flipped[c] = true;
      ++n_flipped;
    }
  }
  EXPECT_LE(n_flipped, kAllowedFlippedChains<T>)
      << "accept/reject decisions differ in more chains than rounding explains";

  // Draws and final positions of the chains whose decisions agree.
  int mismatches = 0;
  for (std::int64_t c = 0; c < chains; ++c) {
    if (flipped[c]) continue;
    for (int i = 0; i < iterations; ++i)
      for (int q = 0; q < quantities; ++q) {
        const T a = cpu_draws.at(i, q, c), b = cuda_draws.at(i, q, c);
        if (!close(a, b, kPositionTolerance<T>) && ++mismatches <= 5) {
          ADD_FAILURE() << "draw " << i << ", quantity " << q << ", chain " << c << ": cpu " << a
                        << " vs cuda " << b;
        }
      }
  }
  const std::vector<T> cpu_positions = cpu->positions(), cuda_positions = cuda->positions();
  ASSERT_EQ(cuda_positions.size(), static_cast<std::size_t>(dim * chains));
  for (int d = 0; d < dim; ++d)
    for (std::int64_t c = 0; c < chains; ++c) {
      if (flipped[c]) continue;
      const std::size_t k = static_cast<std::size_t>(d * chains + c);
      if (!close(cpu_positions[k], cuda_positions[k], kPositionTolerance<T>) && ++mismatches <= 5)
        ADD_FAILURE() << "final position " << d << " of chain " << c << ": cpu " << cpu_positions[k]
                      << " vs cuda " << cuda_positions[k];
    }
  EXPECT_EQ(mismatches, 0);

  // Statistics: counts are exact where decisions agree (a flipped chain changes `accepted` by at
  // most one per iteration); the step counts are shared, so gradient evaluations match unless a
  // trajectory turned non-finite, which these targets do not at this step size.
  EXPECT_EQ(cuda_stats.transitions, cpu_stats.transitions);
  EXPECT_NEAR(double(cuda_stats.accepted), double(cpu_stats.accepted), n_flipped * iterations);
  EXPECT_EQ(cuda_stats.divergent, cpu_stats.divergent);
  EXPECT_EQ(cuda_stats.non_finite, cpu_stats.non_finite);
  EXPECT_EQ(cuda_stats.gradient_evaluations, cpu_stats.gradient_evaluations);
  // min(1, e^x) is 1-Lipschitz in x, so each transition's acceptance probability differs by at
  // most the energy error (bounded by the position tolerance); a flipped chain by at most 1.
  EXPECT_NEAR(
      cuda_stats.accept_prob_sum(), cpu_stats.accept_prob_sum(),
      static_cast<double>(chains * iterations) * kPositionTolerance<T> + n_flipped * iterations);

  // Moments: the device reduction against the CPU reduction of the same (device) positions
  // differs only in summation order, ~n ε relative; against the CPU backend by the position
  // tolerance (when no chain flipped).
  EnsembleMoments reference;
  ensemble_moments_cpu(EnsembleView<const T>{cuda_positions.data(), chains, dim, chains},
                       reference);
  ASSERT_EQ(cuda_moments.count, chains);
  ASSERT_EQ(cuda_moments.mean.size(), static_cast<std::size_t>(dim));
  for (int d = 0; d < dim; ++d) {
    EXPECT_NEAR(cuda_moments.mean[d], reference.mean[d],
                1e-12 * (1 + std::fabs(reference.mean[d])));
    EXPECT_NEAR(cuda_moments.m2[d], reference.m2[d], 1e-12 * (1 + std::fabs(reference.m2[d])));
    if (n_flipped == 0) {
      // Each position differs by at most tol · s_c with s_c = max(1, |x_c|), so the mean by at
      // most tol · mean(s_c), and M2 = Σ(x_c − x̄)² by at most Σ 2|x_c − x̄| · 2 tol s_c (to first
      // order; the 2 covers the mean's own shift).
      double mean_bound = 0, m2_bound = 0;
      for (std::int64_t c = 0; c < chains; ++c) {
        const double x = cpu_positions[static_cast<std::size_t>(d * chains + c)];
        const double scale = std::max(1.0, std::fabs(x));
        mean_bound += kPositionTolerance<T> * scale / static_cast<double>(chains);
        m2_bound += 4 * kPositionTolerance<T> * scale * (std::fabs(x - cpu_moments.mean[d]) + 1e-3);
      }
      EXPECT_NEAR(cuda_moments.mean[d], cpu_moments.mean[d], mean_bound);
      EXPECT_NEAR(cuda_moments.m2[d], cpu_moments.m2[d], m2_bound);
    }
  }
}

}  // namespace myriad::testing
