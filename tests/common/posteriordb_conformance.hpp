#pragma once
// posteriordb conformance (tests/stat/test_posteriordb_conformance.cpp on the CPU,
// tests/cuda/test_cuda_posteriordb.cpp on CUDA): every posteriordb port among the built-in
// models, run as a user runs it (`myriad sample --model NAME --data data.json`: the registry's
// model, its data read from posteriordb's data.json), at default settings (ChEES, the automatic
// metric, target acceptance 0.8) from Stan's starts (independent, uniform(−2, 2) on the
// unconstrained scale), against the summary of Stan's reference draws
// (tests/data/posteriordb/<posterior>/reference.csv).
//
// For every reference variable, four z-scores, each an estimate's distance from the reference in
// units of the two runs' Monte Carlo errors combined (posteriordb's README):
//
//   mean      |m − m_ref| / sqrt(mcse² + mcse_ref²),
//   variance  |v − sd_ref²| / sqrt(mcse_v² + se_ref²), v the run's mean of (x − m_ref)² with its
//             own MCSE, se_ref = sd_sq / sqrt(ESS_ref) with sd_sq the run's sd of (x − m_ref)²
//             (the reference's error of its variance, (μ₄ − σ⁴)/ESS, with the fourth moment taken
//             from this run: the normal approximation 2σ⁴/ESS understates it for heavy tails),
//   q5, q95   |P̂(x ≤ q_ref) − p| / sqrt(mcse_P² + p(1 − p)/ESS_ref): the run's probability
//             mass below the reference quantile, the reference's own error mapped to the
//             probability scale; checked where the ESS allows, when the run's effective number
//             of draws in that tail, p · ESS of the indicator, is at least 20 (so that the normal
//             approximation of the binomial count holds).
//
// Each must be at most kZ = 4: a false alarm per comparison has probability 6.3e-5 under
// normality; the suite makes about 4 × 110 comparisons, so a correct sampler fails it by chance
// with probability below 3% (at most, since the comparisons are positively correlated), and a
// bias of a quarter of a posterior sd at these sizes (mcse ≈ sd/50) is found. ESS_ref is each
// variable's bulk ESS from reference.csv. Every R-hat must also be below 1.01.
//
// Sizes keep the suite inside CI's budget: 64 chains, 1000 warm-up and 500 draws (32 000
// draws); diamonds, whose 5000 × 26 design makes each gradient 100 times dearer, 32 chains of
// 400 + 400; garch11 and low_dim_gauss_mix (a recursion over 200 observations and a mixture over
// 1000, differentiated by duals) 32 chains; gp_pois_regr (a dual Cholesky factor of an 11 × 11
// kernel matrix per gradient) and one_comp_mm_elim_abs (an adaptive ODE solve over duals) 16. A
// failing posterior is a finding to investigate (adaptation, geometry, a wrong transform), never a
// tolerance to loosen.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/posteriordb_port_checks.hpp"
#include "common/run_configs.hpp"
#include "myriad/app/registry.hpp"
#include "stat/posterior_check.hpp"

namespace myriad::testing {

inline constexpr double kConformanceZ = 4.0;
inline constexpr double kMinTailDraws = 20.0;
inline constexpr std::uint64_t kConformanceSeed = 20261127;

/// The sd of f(quantity q) over every draw.
template <class F>
double sd_of(const SampleResult& result, int q, F f) {
  const std::vector<double> v = transformed_draws(result, q, f);
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

struct Posterior {
  const char* model;      ///< the built-in model's name (posteriordb's model name)
  const char* posterior;  ///< the folder under tests/data/posteriordb
  int chains = 64, warmup = 1000, draws = 500;
};

inline void PrintTo(const Posterior& p, std::ostream* os) { *os << p.model; }

/// Runs posterior p on `device` as a user runs it and expects it to agree with Stan's reference
/// (the file comment).
inline void expect_conformance(const Posterior& p, Device device) {
  const ModelSpec& spec = find_model(p.model);
  const ModelArguments arguments(spec, {}, posteriordb_path(p.posterior, "data.json"));
  SampleConfig config = run_config(p.chains, p.warmup, p.draws, kConformanceSeed, device);
  config.superchains = 1;  // every chain from its own start, as Stan's reference chains were
  const SampleResult result = spec.sample(arguments, config, Precision::float64);

  double worst = 0;
  std::string worst_what;
  const auto check = [&](double z, const std::string& what) {
    EXPECT_LE(z, kConformanceZ) << what;
    if (!(z <= worst)) {
      worst = z;
      worst_what = what;
    }
  };
  for (const ReferenceSummary& ref : posteriordb_reference_rows(p.posterior)) {
    const int q = quantity_index(result, ref.name);
    const std::string& n = ref.name;
    const MomentCheck mean = mean_of(result, q, [](double x) { return x; });
    check(std::abs(mean.estimate - ref.mean) / std::hypot(mean.mcse, ref.mcse_mean),
          n + " mean " + std::to_string(mean.estimate) + " vs " + std::to_string(ref.mean));

    const auto squared = [&](double x) { return (x - ref.mean) * (x - ref.mean); };
    const MomentCheck variance = mean_of(result, q, squared);
    const double ref_variance_se = sd_of(result, q, squared) / std::sqrt(ref.ess_bulk);
    check(
        std::abs(variance.estimate - ref.sd * ref.sd) / std::hypot(variance.mcse, ref_variance_se),
        n + " sd " + std::to_string(std::sqrt(variance.estimate)) + " vs " +
            std::to_string(ref.sd));

    for (const auto& [prob, quantile] : {std::pair{0.05, ref.q5}, std::pair{0.95, ref.q95}}) {
      const double cut = quantile;
      const MomentCheck below =
          mean_of(result, q, [cut](double x) { return x <= cut ? 1.0 : 0.0; });
      // The indicator's ESS, from its variance p(1 − p) and its MCSE.
      const double ess = prob * (1 - prob) / (below.mcse * below.mcse);
      if (!(std::min(prob, 1 - prob) * ess >= kMinTailDraws)) continue;
      check(std::abs(below.estimate - prob) /
                std::hypot(below.mcse, std::sqrt(prob * (1 - prob) / ref.ess_bulk)),
            n + " P(x <= q" + std::to_string(static_cast<int>(prob * 100)) + ") " +
                std::to_string(below.estimate));
    }
    EXPECT_LT(result.summary[q].rhat, 1.01) << n;
  }
  EXPECT_EQ(result.sampling_stuck_chains, 0);
  std::printf("%s (%s): max z %.2f (%s); %lld divergent transitions\n", p.model,
              device == Device::cuda ? "cuda" : "cpu", worst, worst_what.c_str(),
              static_cast<long long>(result.sampling_stats.divergent));
}

/// The fifteen posteriors and their sizes (the file comment).
inline std::vector<Posterior> conformance_posteriors() {
  return {Posterior{"eight_schools_noncentered", "eight_schools-eight_schools_noncentered"},
          Posterior{"kidscore_momhsiq", "kidiq-kidscore_momhsiq"},
          Posterior{"logearn_interaction_z", "earnings-logearn_interaction_z"},
          Posterior{"logmesquite_logvash", "mesquite-logmesquite_logvash"},
          Posterior{"nes", "nes1992-nes"},
          Posterior{"kilpisjarvi", "kilpisjarvi_mod-kilpisjarvi"},
          Posterior{"blr", "sblrc-blr"},
          Posterior{"diamonds", "diamonds-diamonds", 32, 400, 400},
          Posterior{"arK", "arK-arK"},
          Posterior{"arma11", "arma-arma11"},
          Posterior{"garch11", "garch-garch11", 32},
          Posterior{"low_dim_gauss_mix", "low_dim_gauss_mix-low_dim_gauss_mix", 32},
          Posterior{"gp_pois_regr", "gp_pois_regr-gp_pois_regr", 16},
          Posterior{"hmm_example", "hmm_example-hmm_example"},
          Posterior{"one_comp_mm_elim_abs", "one_comp_mm_elim_abs-one_comp_mm_elim_abs", 16}};
}

/// INSTANTIATE_TEST_SUITE_P(Posteriors, Suite, ::testing::ValuesIn(conformance_posteriors()),
/// PosteriorName{}): each test named by its posterior's model.
struct PosteriorName {
  std::string operator()(const ::testing::TestParamInfo<Posterior>& info) const {
    return info.param.model;
  }
};

}  // namespace myriad::testing
