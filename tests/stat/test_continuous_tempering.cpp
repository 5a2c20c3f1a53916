// Continuous tempering against exact answers (issue 26's first workload): a Gaussian target
// p̃ = Z N(m 1, s² I) with a standard normal base, where log Z, the target's moments and the
// β-marginal p(β) ∝ z(β) e^{−β log ζ} are closed form (tests/common/tempering_targets.hpp).
// Gibbs CT (Alg. 14), CT-HMC (Alg. 15) and simulated tempering (Alg. 7 with Gibbs index updates,
// 11 linear inverse temperatures), each chain run serially by the per-chain transitions of
// estimate/continuous_tempering.hpp and simulated_tempering.hpp (the backends' loops are not
// written yet), chains independent and in parallel. Simulated tempering's index marginal is
// p(k) ∝ z(β_k) e^{−β_k log ζ}, tested like β's bins.
//
// Tolerances: every estimate is a ratio of per-chain sums over 64 independent chains with its
// delta-method standard error (estimate/tempering_estimate.hpp): log Ẑ within 4 SE (the issue's
// bound), moments within 5 SE; the β-marginal's bin probabilities within 5 SE of the spread of
// the chains' bin fractions. ζ is set one nat below Z so that p(β) is not flat.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/tempering_targets.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/mcmc/hmc.hpp"

namespace myriad {
namespace {

using testing::ShiftedGaussian;
using Base = AnnealingBase<double>;

constexpr int kChains = 64;
constexpr int kWarmup = 300;
constexpr int kDraws = 3000;
constexpr int kBins = 8;

constexpr int kTemperatures = 11;  ///< simulated tempering's ladder, linear

enum class Method { gibbs_ct, ct_hmc, simulated_tempering };

/// β's bins (continuous tempering) or the ladder's indices (simulated tempering).
int categories(Method method) {
  return method == Method::simulated_tempering ? kTemperatures : kBins;
}

struct Run {
  explicit Run(Method method)
      : bin_fraction(static_cast<std::size_t>(kChains * categories(method)), 0.0) {}
  TemperingSums sums{kChains, 2};
  std::vector<double> bin_fraction;  ///< [chain][category]
};

/// One chain's state for either method: x (and u last, for CT-HMC) with HMC's scratch.
struct ChainStorage {
  std::vector<double> position, gradient, proposal, momentum, proposal_gradient;
  double log_density = 0;
  explicit ChainStorage(int n)
      : position(n), gradient(n), proposal(n), momentum(n), proposal_gradient(n) {}
  HmcChain<double> view() {
    const int n = static_cast<int>(position.size());
    const auto v = [n](std::vector<double>& a) { return ChainVector<double>{a.data(), 1, n}; };
    return {v(position), v(gradient), &log_density, v(proposal), v(momentum), v(proposal_gradient)};
  }
};

/// Chain c's run into its slots of `out`; false when its start or a sample's gap is not finite.
bool run_chain(Method method, const ShiftedGaussian& target, const Base& base,
               const ContinuouslyTemperedDensity<ShiftedGaussian, Base>& extended,
               const TemperingConstants<double>& constants, const TemperatureLadder<double>& ladder,
               const HmcStep<double>& step, std::uint64_t seed, int c, Run& out) {
  const int d = target.dim();
  const RandomStream rng(seed, static_cast<std::uint64_t>(c));
  ChainStorage storage(method == Method::ct_hmc ? d + 1 : d);
  const HmcChain<double> chain = storage.view();
  // Start from the base; β = 0 (Gibbs CT, as the thesis's code), u = −2 (CT-HMC).
  base.sample(rng, 0, Purpose::initial_point, chain.position);
  double beta = 0;
  int index = 0;
  bool started = false;
  if (method != Method::ct_hmc) {
    const TemperedDensity<ShiftedGaussian, Base> tempered{target, base, beta};
    started = evaluate_chain(tempered, chain.position, chain.gradient, chain.log_density);
  } else {
    chain.position[d] = -2.0;
    started = evaluate_chain(extended, chain.position, chain.gradient, chain.log_density);
  }
  if (!started) return false;
  for (int i = 0; i < kWarmup + kDraws; ++i) {
    const auto iteration = static_cast<std::uint32_t>(i + 1);
    TemperingOutcome<double> moved;
    if (method == Method::gibbs_ct) {
      moved = gibbs_ct_transition(target, base, constants, chain, beta, rng, iteration, step);
    } else if (method == Method::ct_hmc) {
      moved = ct_hmc_transition(extended, chain, rng, iteration, step);
      beta = extended.beta_at(chain.position[d]);
    } else {
      moved = simulated_tempering_transition(target, base, constants, ladder, chain, index, rng,
                                             iteration, step);
    }
    if (i < kWarmup) continue;
    if (!std::isfinite(moved.gap)) return false;
    const double f[2] = {chain.position[0], chain.position[1]};
    out.sums.add(c, moved.weights, f);
    const int bin = method == Method::simulated_tempering
                        ? index
                        : std::min(kBins - 1, static_cast<int>(beta * kBins));
    out.bin_fraction[static_cast<std::size_t>(c * categories(method) + bin)] += 1.0 / kDraws;
  }
  return true;
}

Run run(Method method, const ShiftedGaussian& target, const TemperingConstants<double>& constants,
        std::uint64_t seed) {
  const Base base{target.dim()};
  const int n = method == Method::ct_hmc ? target.dim() + 1 : target.dim();
  const std::vector<double> unit(static_cast<std::size_t>(n), 1.0);
  HmcStep<double> step;
  step.step_size = method == Method::ct_hmc ? 0.25 : 0.35;
  step.leapfrog_steps = 10;
  step.metric = MetricView<double>::diagonal_metric(unit.data(), n);
  const ContinuouslyTemperedDensity<ShiftedGaussian, Base> extended{target, base, constants, 1.0};
  const std::vector<double> schedule =
      inverse_temperatures(kTemperatures, TemperatureSchedule::linear);
  const TemperatureLadder<double> ladder{schedule.data(), kTemperatures};
  Run out(method);
  std::vector<int> failed(kChains, 0);
#pragma omp parallel for schedule(dynamic)
  for (int c = 0; c < kChains; ++c)
    failed[static_cast<std::size_t>(c)] =
        run_chain(method, target, base, extended, constants, ladder, step, seed, c, out) ? 0 : 1;
  for (int c = 0; c < kChains; ++c) EXPECT_EQ(failed[static_cast<std::size_t>(c)], 0) << c;
  return out;
}

/// The β-marginal's probability of each of kBins equal bins (Simpson's rule on p(β) ∝ z(β)/ζ^β).
std::vector<double> beta_bin_probabilities(const ShiftedGaussian& target, double log_zeta) {
  constexpr int kPerBin = 200;  // even
  std::vector<double> mass(kBins, 0.0);
  double total = 0;
  for (int b = 0; b < kBins; ++b) {
    const double h = 1.0 / (kBins * kPerBin);
    double sum = 0;
    for (int k = 0; k <= kPerBin; ++k) {
      const double beta = (b * kPerBin + k) * h;
      const double weight = (k == 0 || k == kPerBin) ? 1 : (k % 2 ? 4 : 2);
      sum += weight * std::exp(target.log_tempered_normaliser(beta) - beta * log_zeta);
    }
    mass[b] = sum * h / 3;
    total += mass[b];
  }
  for (double& m : mass) m /= total;
  return mass;
}

/// Simulated tempering's index marginal, p(k) ∝ z(β_k) e^{−β_k log ζ} (ω_k = −β_k log ζ).
std::vector<double> index_probabilities(const ShiftedGaussian& target, double log_zeta) {
  const std::vector<double> beta = inverse_temperatures(kTemperatures, TemperatureSchedule::linear);
  std::vector<double> p(beta.size());
  double total = 0;
  for (std::size_t k = 0; k < beta.size(); ++k) {
    p[k] = std::exp(target.log_tempered_normaliser(beta[k]) - beta[k] * log_zeta);
    total += p[k];
  }
  for (double& v : p) v /= total;
  return p;
}

void expect_exact(Method method, const std::string& name) {
  const ShiftedGaussian target{2, 1.2, 0.6, 3.0};
  const TemperingConstants<double> constants{
      target.log_z - 1.0, base_log_normaliser<double>(2, nullptr, nullptr, nullptr)};
  const Run r = run(method, target, constants, 20261129);

  const EstimateWithError log_z = r.sums.log_z(constants.log_zeta);
  EXPECT_NEAR(log_z.value, target.log_z, 4 * log_z.se) << name;
  EXPECT_LT(log_z.se, 0.05) << name << ": the test has power";
  for (int q = 0; q < 2; ++q) {
    const EstimateWithError mean = r.sums.target_mean(q);
    EXPECT_NEAR(mean.value, target.mean, 5 * mean.se) << name << " target mean " << q;
    EXPECT_LT(mean.se, 0.05) << name;
    const EstimateWithError base_mean = r.sums.base_mean(q);  // the built-in check: q = N(0, I)
    EXPECT_NEAR(base_mean.value, 0.0, 5 * base_mean.se) << name << " base mean " << q;
  }

  const std::vector<double> expected = method == Method::simulated_tempering
                                           ? index_probabilities(target, constants.log_zeta)
                                           : beta_bin_probabilities(target, constants.log_zeta);
  const int bins = categories(method);
  for (int b = 0; b < bins; ++b) {
    double sum = 0, sum_sq = 0;
    for (int c = 0; c < kChains; ++c) {
      const double f = r.bin_fraction[static_cast<std::size_t>(c * bins + b)];
      sum += f;
      sum_sq += f * f;
    }
    const double mean = sum / kChains;
    const double se = std::sqrt((sum_sq / kChains - mean * mean) / (kChains - 1));
    EXPECT_NEAR(mean, expected[b], 5 * se)
        << name << " β bin or index " << b << " expected " << expected[b];
  }
}

TEST(StatContinuousTempering, GibbsCtRecoversZMomentsAndTheBetaMarginalOfAGaussian) {
  expect_exact(Method::gibbs_ct, "gibbs-ct");
}

TEST(StatContinuousTempering, CtHmcRecoversZMomentsAndTheBetaMarginalOfAGaussian) {
  expect_exact(Method::ct_hmc, "ct-hmc");
}

TEST(StatSimulatedTempering, RecoversZMomentsAndTheIndexMarginalOfAGaussian) {
  expect_exact(Method::simulated_tempering, "simulated tempering");
}

}  // namespace
}  // namespace myriad
