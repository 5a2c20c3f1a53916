#pragma once
// Checks of a plated model (model/plated_model.hpp) shared by the tests of the built-in MP IS
// models (tests/unit/models): the arguments its densities take, spelt as lists; its synthetic
// data against the true latents they were simulated from; and the CPU engine on it at small K.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/estimate/mpis_engine.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::testing {

// ---------------------------------------------------------------------------------------------
// Density arguments

/// The parent values of a density call, in the order of the latent's parents.
inline ParentValues parent_values(std::initializer_list<const double*> values) {
  ParentValues p;
  for (const double* v : values) p.value[p.count++] = v;
  return p;
}
/// The plate index of an instance, outermost plate first.
inline PlateIndex plate_index(std::initializer_list<std::int64_t> indices) {
  PlateIndex at;
  for (std::int64_t i : indices) at.index[at.depth++] = i;
  return at;
}

/// actual within 1e-10 relative to max(1, |expected|).
inline void expect_close(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-10 * std::max(1.0, std::abs(expected))) << what;
}

// ---------------------------------------------------------------------------------------------
// Synthetic data

/// Sample mean within 5 standard errors of `mean`, sample sd within 5 standard errors of `sd`
/// (normal theory: se(sd) ≈ sd/√(2N)).
inline void expect_normal_moments(const std::vector<double>& x, double mean, double sd,
                                  const std::string& what) {
  const double n = static_cast<double>(x.size());
  const double m = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  const double s = std::sqrt(ss / (n - 1));
  EXPECT_NEAR(m, mean, 5 * sd / std::sqrt(n)) << what << ": mean";
  EXPECT_NEAR(s, sd, 5 * sd / std::sqrt(2 * n)) << what << ": sd";
}

/// Every value 0 or 1.
inline bool all_binary(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0 || v == 1.0; });
}
/// Both 0 and 1 occur.
inline bool has_both(const std::vector<double>& x) {
  return std::count(x.begin(), x.end(), 1.0) > 0 && std::count(x.begin(), x.end(), 0.0) > 0;
}

/// Σ outcomes against Σ E[outcome | true latents] within 5 standard deviations of the sum:
/// the data were simulated from the model with the recorded true values and covariates.
inline void expect_consistent_total(const std::vector<double>& outcomes,
                                    const std::function<double(std::size_t)>& mean,
                                    const std::function<double(std::size_t)>& variance,
                                    const std::string& what) {
  double total = 0, expected = 0, var = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    total += outcomes[i];
    expected += mean(i);
    var += variance(i);
  }
  EXPECT_NEAR(total, expected, 5 * std::sqrt(var)) << what;
}

// ---------------------------------------------------------------------------------------------
// The engine at small K

/// log P̂_MP over independent runs.
struct RunSummary {
  double mean = 0;
  double se = 0;  ///< standard error of the mean over runs
};

/// log P̂_MP of `runs` independent runs at K particles, all finite and with no scrubbed entry.
template <class Model>
RunSummary engine_log_marginal(const Model& model, std::int64_t k, int runs) {
  const PlatedStructure s = model.structure();
  MpisEngine<Model, CpuParallel> engine(model, s, plan_mpis(s, k, runs), CpuParallel{}, 2024);
  engine.forward();
  EXPECT_EQ(engine.nonfinite_entries(), 0) << "K = " << k;
  const std::vector<double> log_p = engine.log_marginal();
  RunSummary out;
  for (double x : log_p) {
    EXPECT_TRUE(std::isfinite(x)) << "K = " << k;
    out.mean += x / runs;
  }
  double ss = 0;
  for (double x : log_p) ss += (x - out.mean) * (x - out.mean);
  out.se = std::sqrt(ss / (runs - 1) / runs);
  return out;
}

/// E log P̂_MP does not decrease with K: for a factorised proposal, P̂ at K is the average over
/// random size-m subsets of every latent's particles of P̂ at m < K, so Jensen gives
/// E log P̂_K ≥ E log P̂_m (as for IWAE bounds, Burda et al. 2016). The number of runs is chosen
/// so that the measured gap from K = 2 to K = 5 is many standard errors: the strict comparison
/// is then no coin toss.
template <class Model>
void expect_log_marginal_increases(const Model& model, int runs) {
  const RunSummary k2 = engine_log_marginal(model, 2, runs);
  const RunSummary k5 = engine_log_marginal(model, 5, runs);
  const double se = std::sqrt(k2.se * k2.se + k5.se * k5.se);
  EXPECT_GT(k5.mean, k2.mean) << "mean log P̂ at K = 2: " << k2.mean << " ± " << k2.se
                              << ", at K = 5: " << k5.mean << " ± " << k5.se;
  std::printf(
      "  mean log P-hat over %d runs: K = 2: %.1f +- %.1f, K = 5: %.1f +- %.1f "
      "(gap %.1f se)\n",
      runs, k2.mean, k2.se, k5.mean, k5.se, (k5.mean - k2.mean) / se);
}

}  // namespace myriad::testing
