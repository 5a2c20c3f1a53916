#pragma once
// Agreement of two constrained-HMC runs of one generator from one seed whose arithmetic differs
// only by rounding: the CUDA backend against the CPU backend (tests/cuda/test_cuda_chmc.cpp),
// and the CPU backend built with FMA contraction against the same code built without it, which
// perturbs the arithmetic the way nvcc does (tests/unit/test_chmc_fma_agreement.cpp, no GPU).
// A run is recorded one iteration per run() call (record_chmc), then two recordings are
// compared (expect_recordings_agree). Double precision throughout.
//
// What "agree" means, and why the tolerances are what they are:
//  * Initial points agree to rounding: initialize() draws normals (Box–Muller: log, sqrt, sin,
//    cos) and normalises or solves for the remaining inputs (sin); glibc and CUDA's libdevice
//    differ by an ulp or two in these, and nvcc contracts a · b + c into FMAs where g++
//    (baseline x86-64) rounds twice. ~10 operations of a few ulp each: kInitialTolerance = 1e-13
//    relative (≈ 450 ulp), far below anything a wrong index or stride would produce. The paper's
//    Lotka–Volterra start (S = 50) comes out of a least-squares fit (gradient matching) and a
//    forward substitution whose noise values are differences of data and drift of size ~100 that
//    cancel to size ~1, amplifying the rounding up to ~100-fold: that comparison alone takes
//    kLotkaVolterraInitialTolerance = 1e-11.
//  * Trajectories agree to rounding amplified by the dynamics, which is far below the projection
//    tolerance: kPositionTolerance = position_tol = 1e-8 (relative to max(1, |u|)). Rounding
//    differences start at ~1e-16 and grow along the trajectory; at the step sizes used here, near
//    where projections start to fail, they reach ~4e-11 after five transitions (measured with the
//    CPU backend built with and without FMA contraction; the H100 gave 3.5e-12 on Lotka–Volterra).
//    A difference as large as position_tol can only come from a projection that stopped at a
//    different iterate on the two sides ("stop flip"): a converging projection stops at the first
//    iterate with ‖r‖∞ < constraint_tol (1e-9) and ‖Δ‖∞ < position_tol, and the compared
//    quantities differ by rounding of the residual's normal component, ~1e-15, i.e. ~1e-6
//    relative to the threshold. Such stop flips are rare but real (FMA experiment: ~2e-5 per
//    Newton iteration for Lotka–Volterra, whose residuals come out of a recursion, none of them
//    moving a chain by 1e-8), and each changes the Newton iteration count by one.
//  * A projection that fails is different: where the iteration stagnates or wanders (a reverse
//    projection that lands elsewhere, or one that never meets the tolerances), which iterate first
//    passes or misses a threshold depends on rounding, and its Newton count can move by tens of
//    iterations with the same outcome. Seen in the FMA experiment (Lotka–Volterra, δt = 0.2,
//    chain 225, iteration 2: not reversible after one gradient evaluation on both sides, 225
//    Newton iterations without FMA, 260 with) and on the H100 (86 more in one iteration, one
//    gradient evaluation fewer, no chain parted). So each transition that fails in a projection
//    (not converged or not reversible, on either side) may change the Newton total by up to one
//    outer step's projections, N_g forward and N_g reverse of at most I_max iterations each, and
//    the gradient evaluations by up to max_steps (the failure may come at another step), without
//    moving the chain: it stays put on both sides.
//  * Hence the rule: while the per-iteration Newton totals agree within those allowances, every
//    chain must agree to kPositionTolerance with the same decisions and the same status counters
//    exactly; once they differ by k in all (stop flips), up to k chains may part (their
//    trajectories legitimately separate), the decisions and the failures in all may differ by at
//    most the number of parted chains, and each failure kind by that plus k (a stop flip inside a
//    failing transition can change which failure it was).
//  * Accept/reject decisions and failure statuses agree: an accept decision flips only when
//    log U falls within the energy difference's rounding error (~1e-12) of H0 − H1, and a status
//    only when a thresholded quantity (reverse-check distance against 2e-8, the Newton cap of 50,
//    divergence at 1e10) lands within rounding of its threshold: ~1e-12 per transition.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common/recording_sink.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"

namespace myriad::testing {

constexpr double kInitialTolerance = 1e-13;
constexpr double kLotkaVolterraInitialTolerance = 1e-11;
constexpr double kPositionTolerance = 1e-8;

/// A sanity bound on the stop flips of converging projections (file comment) per iteration: a
/// few, plus one per 10⁴ Newton iterations, five times the highest rate of the FMA experiment.
inline std::int64_t allowed_newton_difference(std::int64_t newton_iterations) {
  return 3 + newton_iterations / 10000;
}

/// Newton iterations that one transition failing in a projection may change (file comment): one
/// outer step's N_g forward and N_g reverse projections of at most I_max iterations each.
inline std::int64_t failing_transition_newton_allowance(const ChmcSettings<double>& settings) {
  return 2 * std::int64_t{settings.step.inner_steps} * settings.step.max_iterations;
}

/// Settings with a step size large enough that some transitions fail (not converged, not
/// reversible, divergent), so that the status counters are compared on non-zero values; with
/// the warm-up's per-chain step back-off on, so that each chain's back-off is compared too.
inline ChmcSettings<double> test_settings(double step_size) {
  ChmcSettings<double> settings;
  settings.seed = 20261122;
  settings.step.step_size = step_size;
  settings.min_steps = 3;
  settings.max_steps = 6;
  settings.step_back_off = true;
  return settings;
}

/// A small Lotka–Volterra problem whose data lie where prior draws of z keep the simulation
/// tame (S = 10 steps from r₀ = f₀ = 1, z = (0.3, 0.1, 0.2, 0.1)), so that chains started by
/// initialize() move: ~85% accepted at δt = 0.2, the rest spread over every failure counter.
inline models::LotkaVolterraProblem small_lotka_volterra() {
  return models::LotkaVolterraProblem::make(7, models::LotkaVolterraSettings::short_series());
}

/// |a − b| / max(1, |a|, |b|).
inline double relative_difference(double a, double b) {
  return std::fabs(a - b) / std::max({1.0, std::fabs(a), std::fabs(b)});
}


/// One run, one iteration per run() call: what expect_recordings_agree compares.
struct ChmcRecording {
  std::int64_t chains = 0;
  int dim = 0;
  int quantities = 0;
  std::int64_t initialize_failures = 0;         ///< initialize()'s return value
  std::vector<double> initial;                  ///< positions() after initialize(), [dim][chain]
  std::vector<IterationStats> stats;            ///< per iteration
  std::vector<std::vector<double>> positions;   ///< after each iteration
  std::vector<std::vector<std::uint8_t>> halvings;  ///< step_halvings() after each iteration
  std::vector<double> draws;                    ///< every recorded quantity, in sink order
};

/// Initializes `backend` from settings.seed and runs `iterations` iterations one per call.
inline ChmcRecording record_chmc(ChmcBackend<double>& backend, const ChmcSettings<double>& settings,
                                 int iterations, std::int64_t chains_per_init) {
  ChmcRecording r;
  r.chains = backend.chains();
  r.dim = backend.input_dim();
  r.quantities = backend.num_quantities();
  r.initialize_failures = backend.initialize(settings.seed, 10, chains_per_init);
  r.initial = backend.positions();
  RecordingSink<double> sink(r.chains, r.quantities, 0);
  for (int i = 0; i < iterations; ++i) {
    r.stats.push_back(backend.run(settings, static_cast<std::uint32_t>(i), 1, &sink, i, 0));
    r.positions.push_back(backend.positions());
    r.halvings.push_back(backend.step_halvings());
  }
  r.draws = sink.values();
  return r;
}

/// A recording as raw bytes (the FMA experiment's two programs, tests/tools/chmc_record.cpp,
/// hand theirs to the test this way; both are built by the same compiler for the same machine).
inline bool write_recording(const ChmcRecording& r, const std::string& path) {
  static_assert(std::is_trivially_copyable_v<IterationStats>, "IterationStats is written raw");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const auto put = [f](const void* data, std::size_t bytes) {
    return bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes;
  };
  const auto put_vector = [&](const auto& v) {
    const std::uint64_t n = v.size();
    return put(&n, sizeof n) && put(v.data(), n * sizeof(v[0]));
  };
  const std::uint64_t iterations = r.stats.size();
  bool ok = put(&r.chains, sizeof r.chains) && put(&r.dim, sizeof r.dim) &&
            put(&r.quantities, sizeof r.quantities) &&
            put(&r.initialize_failures, sizeof r.initialize_failures) &&
            put(&iterations, sizeof iterations) && put_vector(r.initial) && put_vector(r.draws);
  for (std::uint64_t i = 0; ok && i < iterations; ++i)
    ok = put(&r.stats[i], sizeof r.stats[i]) && put_vector(r.positions[i]) &&
         put_vector(r.halvings[i]);
  return std::fclose(f) == 0 && ok;
}

/// Reads what write_recording wrote; false when the file is missing or short.
inline bool read_recording(const std::string& path, ChmcRecording& r) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const auto get = [f](void* data, std::size_t bytes) {
    return bytes == 0 || std::fread(data, 1, bytes, f) == bytes;
  };
  const auto get_vector = [&](auto& v) {
    std::uint64_t n = 0;
    if (!get(&n, sizeof n) || n > (std::uint64_t{1} << 32)) return false;
    v.resize(n);
    return get(v.data(), n * sizeof(v[0]));
  };
  std::uint64_t iterations = 0;
  bool ok = get(&r.chains, sizeof r.chains) && get(&r.dim, sizeof r.dim) &&
            get(&r.quantities, sizeof r.quantities) &&
            get(&r.initialize_failures, sizeof r.initialize_failures) &&
            get(&iterations, sizeof iterations) && iterations < 1000 && get_vector(r.initial) &&
            get_vector(r.draws);
  r.stats.resize(ok ? iterations : 0);
  r.positions.resize(r.stats.size());
  r.halvings.resize(r.stats.size());
  for (std::uint64_t i = 0; ok && i < iterations; ++i)
    ok = get(&r.stats[i], sizeof r.stats[i]) && get_vector(r.positions[i]) &&
         get_vector(r.halvings[i]);
  std::fclose(f);
  return ok;
}

/// What a comparison found, for the log and for tests that want to check more.
struct Agreement {
  IterationStats reference_total;
  IterationStats candidate_total;
  double max_initial_difference = 0;
  double max_position_difference = 0;  ///< over the chains that did not part
  std::int64_t stop_flips = 0;         ///< Σ over iterations of |Δ Newton iterations|
  std::int64_t parted_chains = 0;
};

/// |a − b| for counters that may differ by at most `allowed`.
inline void expect_counts_within(const char* name, std::int64_t candidate, std::int64_t reference,
                                 std::int64_t allowed) {
  EXPECT_LE(std::llabs(candidate - reference), allowed)
      << name << ": candidate " << candidate << " vs reference " << reference;
}

/// Compares two recordings of one generator, seed and settings by the rule of the file comment:
/// initial points, per-chain decisions and positions, recorded draws and per-iteration statistics.
inline Agreement expect_recordings_agree(const ChmcRecording& reference,
                                         const ChmcRecording& candidate,
                                         const ChmcSettings<double>& settings,
                                         const std::string& what,
                                         double initial_tolerance = kInitialTolerance) {
  SCOPED_TRACE(what);
  Agreement result;
  const std::int64_t chains = reference.chains;
  const int dim = reference.dim;
  const auto size = static_cast<std::size_t>(dim * chains);
  EXPECT_EQ(candidate.chains, chains);
  EXPECT_EQ(candidate.dim, dim);
  EXPECT_EQ(candidate.quantities, reference.quantities);
  EXPECT_EQ(candidate.initialize_failures, reference.initialize_failures);
  if (reference.initial.size() != size || candidate.initial.size() != size ||
      candidate.stats.size() != reference.stats.size()) {
    ADD_FAILURE() << "the recordings differ in shape";
    return result;
  }
  for (std::size_t k = 0; k < size; ++k) {
    const double d = relative_difference(reference.initial[k], candidate.initial[k]);
    result.max_initial_difference = std::max(result.max_initial_difference, d);
  }
  EXPECT_LE(result.max_initial_difference, initial_tolerance) << "initial points differ";

  const auto failures = [](const IterationStats& s) {
    return s.divergent + s.non_finite + s.not_converged + s.not_reversible + s.cholesky_failures;
  };
  std::vector<bool> parted(static_cast<std::size_t>(chains), false);
  const std::vector<double>* reference_before = &reference.initial;
  const std::vector<double>* candidate_before = &candidate.initial;
  for (std::size_t i = 0; i < reference.stats.size(); ++i) {
    SCOPED_TRACE("iteration " + std::to_string(i));
    const IterationStats& r = reference.stats[i];
    const IterationStats& c = candidate.stats[i];
    result.reference_total += r;
    result.candidate_total += c;
    // Transitions that failed in a projection on either side (file comment).
    const std::int64_t projection_failures = std::max(c.not_converged + c.not_reversible,
                                                      r.not_converged + r.not_reversible);
    const std::int64_t newton_difference = std::llabs(c.newton_iterations - r.newton_iterations);
    EXPECT_LE(newton_difference,
              allowed_newton_difference(r.newton_iterations) +
                  projection_failures * failing_transition_newton_allowance(settings))
        << "projection failures " << projection_failures;
    result.stop_flips += newton_difference;

    // Chains that part from their twin this iteration: a position beyond the tolerance or a
    // different decision (a draw equal to its predecessor is a rejection or a failure).
    const std::vector<double>& reference_after = reference.positions[i];
    const std::vector<double>& candidate_after = candidate.positions[i];
    for (std::int64_t ch = 0; ch < chains; ++ch) {
      if (parted[static_cast<std::size_t>(ch)]) continue;
      bool reference_moved = false, candidate_moved = false, beyond = false;
      double chain_difference = 0;
      for (int d = 0; d < dim; ++d) {
        const std::size_t k = static_cast<std::size_t>(d * chains + ch);
        reference_moved = reference_moved || reference_after[k] != (*reference_before)[k];
        candidate_moved = candidate_moved || candidate_after[k] != (*candidate_before)[k];
        const double diff = relative_difference(reference_after[k], candidate_after[k]);
        chain_difference = std::max(chain_difference, diff);
        beyond = beyond || diff > kPositionTolerance;
      }
      // A different step back-off is a different decision too (a failure on one side, an
      // ordinary rejection on the other).
      beyond = beyond || candidate.halvings[i][static_cast<std::size_t>(ch)] !=
                             reference.halvings[i][static_cast<std::size_t>(ch)];
      if (beyond || reference_moved != candidate_moved) {
        parted[static_cast<std::size_t>(ch)] = true;
        ++result.parted_chains;
        if (result.parted_chains > result.stop_flips) {
          ADD_FAILURE() << "chain " << ch << " parted (max |du| " << chain_difference << ", "
                        << (reference_moved ? "moved" : "stayed") << " on the reference, "
                        << (candidate_moved ? "moved" : "stayed")
                        << " on the candidate) without a stop flip to explain it";
        }
      } else {
        result.max_position_difference = std::max(result.max_position_difference, chain_difference);
      }
    }
    // Exact while no chain has parted; otherwise within one per parted chain. A stop flip in a
    // transition that fails on both sides leaves the chain in place on both but may change
    // which failure it was (the Newton cap on one side, the reverse check on the other): so
    // the failures in all are compared like the decisions, each kind also allowing the stop
    // flips so far.
    const std::int64_t allowed = result.parted_chains;
    const std::int64_t allowed_kind = allowed + result.stop_flips;
    EXPECT_EQ(c.transitions, r.transitions);
    expect_counts_within("accepted", c.accepted, r.accepted, allowed);
    expect_counts_within("failures", failures(c), failures(r), allowed);
    expect_counts_within("divergent", c.divergent, r.divergent, allowed_kind);
    expect_counts_within("non_finite", c.non_finite, r.non_finite, allowed_kind);
    expect_counts_within("not_converged", c.not_converged, r.not_converged, allowed_kind);
    expect_counts_within("not_reversible", c.not_reversible, r.not_reversible, allowed_kind);
    expect_counts_within("cholesky_failures", c.cholesky_failures, r.cholesky_failures,
                         allowed_kind);
    // A failed trajectory stops early: a parted chain, or a transition failing in a projection
    // at another step, changes the count by at most max_steps.
    expect_counts_within("gradient_evaluations", c.gradient_evaluations, r.gradient_evaluations,
                         (allowed + projection_failures) * settings.max_steps);
    // min(1, e^x) is 1-Lipschitz: each agreeing transition's acceptance probability differs by at
    // most its energy error's difference (≪ kPositionTolerance), a parted chain's by at most 1.
    EXPECT_NEAR(c.accept_prob_sum(), r.accept_prob_sum(),
                static_cast<double>(chains) * kPositionTolerance + static_cast<double>(allowed));
    reference_before = &reference_after;
    candidate_before = &candidate_after;
  }
  // Recorded draws are functions of the positions (the quantities), so they agree as they do.
  const std::vector<double>& a = reference.draws;
  const std::vector<double>& b = candidate.draws;
  EXPECT_EQ(a.size(), b.size());
  int draw_mismatches = 0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (parted[k % static_cast<std::size_t>(chains)]) continue;
    if (relative_difference(a[k], b[k]) > kPositionTolerance && ++draw_mismatches <= 5)
      ADD_FAILURE() << "recorded value " << k << ": reference " << a[k] << " vs candidate " << b[k];
  }
  const IterationStats& rt = result.reference_total;
  std::printf(
      "[ %s ] max |du| initial %.2e, after %zu iterations %.2e; stop flips %lld, parted chains "
      "%lld of %lld; accepted %lld, not converged %lld, not reversible %lld, divergent %lld, "
      "non-finite %lld, Cholesky %lld of %lld transitions; Newton iterations %lld\n",
      what.c_str(), result.max_initial_difference, reference.stats.size(),
      result.max_position_difference, static_cast<long long>(result.stop_flips),
      static_cast<long long>(result.parted_chains), static_cast<long long>(chains),
      static_cast<long long>(rt.accepted), static_cast<long long>(rt.not_converged),
      static_cast<long long>(rt.not_reversible), static_cast<long long>(rt.divergent),
      static_cast<long long>(rt.non_finite), static_cast<long long>(rt.cholesky_failures),
      static_cast<long long>(rt.transitions), static_cast<long long>(rt.newton_iterations));
  return result;
}

}  // namespace myriad::testing
