#pragma once
// myriad::temper — continuous tempering (Gibbs CT, CT-HMC) and simulated tempering of any
// annealing target (estimate/annealing_target.hpp) against a diagonal Gaussian base: log Z with
// its standard error, the target's and the base's weighted means, and R-hat of the chains' β.
//
//   auto target = myriad::models::Gaussian<double>::make(10, 0.5, 1.0, 2.0);
//   myriad::TemperConfig config;
//   config.method = myriad::TemperMethod::gibbs_ct;
//   config.log_zeta = -1.0;                        // a guess of log Z (docs/tempering.md)
//   myriad::TemperResult result = myriad::temper(target, config);
//   // result.log_z.value, .se; result.target_mean[i]; result.max_base_error_in_se
//
// Chains run on the CPU, in an OpenMP loop over the per-chain transitions of
// estimate/continuous_tempering.hpp and simulated_tempering.hpp (docs/tempering.md); the CUDA
// backend and the `myriad temper` command are not written yet. HMC's step size and trajectory
// length are fixed (the thesis's δt = 0.5, L = 20 by default); warm-up draws are discarded.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/rhat.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

enum class TemperMethod { gibbs_ct, ct_hmc, simulated_tempering };

inline constexpr EnumName<TemperMethod> kTemperMethodNames[] = {
    {TemperMethod::gibbs_ct, "gibbs-ct"},
    {TemperMethod::ct_hmc, "ct-hmc"},
    {TemperMethod::simulated_tempering, "st"}};

inline const char* to_string(TemperMethod method) { return enum_name(kTemperMethodNames, method); }

struct TemperConfig {
  TemperMethod method = TemperMethod::gibbs_ct;
  std::int64_t chains = 64;
  int warmup = 500;  ///< iterations discarded
  int draws = 2000;  ///< iterations kept, every one used by the estimators
  std::uint64_t seed = 1;
  double step_size = 0.5;   ///< HMC's δt (thesis §5.6.1)
  int leapfrog_steps = 20;  ///< HMC's L
  double log_zeta = 0;      ///< log ζ, the guess of log Z
  AisBaseSpec base;         ///< q: N(mean, diag(scale²)), unit by default
  int temperatures = 1000;  ///< simulated tempering: K inverse temperatures, 0 … 1
  TemperatureSchedule schedule = TemperatureSchedule::sigmoidal;
  double u_scale = 1;      ///< CT-HMC: β = σ(u / s)
  double initial_u = -10;  ///< CT-HMC: u at the start (the thesis's code: β ≈ 0)
  Device device = Device::automatic;

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate() const {
    MYRIAD_EXPECTS(chains >= 2, "tempering needs at least 2 chains, got ", chains);
    MYRIAD_EXPECTS(warmup >= 0 && draws >= 2, "warmup must be >= 0 and draws >= 2, got ", warmup,
                   " and ", draws);
    MYRIAD_EXPECTS(std::isfinite(step_size) && step_size > 0, "step size must be positive, got ",
                   step_size);
    MYRIAD_EXPECTS(leapfrog_steps >= 1, "leapfrog steps must be >= 1, got ", leapfrog_steps);
    MYRIAD_EXPECTS(std::isfinite(log_zeta), "log zeta must be finite, got ", log_zeta);
    MYRIAD_EXPECTS(std::isfinite(u_scale) && u_scale > 0, "u scale must be positive, got ",
                   u_scale);
    MYRIAD_EXPECTS(std::isfinite(initial_u), "initial u must be finite, got ", initial_u);
    if (method == TemperMethod::simulated_tempering)
      check_inverse_temperatures(inverse_temperatures(temperatures, schedule));
  }
};

struct TemperResult {
  std::string method;
  int dim = 0;
  std::int64_t chains = 0;
  int warmup = 0, draws = 0;
  double log_zeta = 0;
  double log_z_base = 0;  ///< log Z_q of the base
  EstimateWithError log_z;
  double log_z_exact = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> names;
  std::vector<EstimateWithError> target_mean;  ///< E_p[x_i], weights w₁ (or p(K | x))
  std::vector<EstimateWithError> base_mean;    ///< E_q[x_i], weights w₀ (or p(0 | x))
  std::vector<double> base_exact_mean;         ///< the base's own means, which base_mean estimates
  double max_base_error_in_se = 0;             ///< max |base_mean − base mean| / se: the check
  double beta_rhat = std::numeric_limits<double>::quiet_NaN();  ///< of the chains' β traces
  double mean_accept_prob = 0;  ///< HMC's, over every kept transition
  std::int64_t divergent = 0, non_finite = 0, failed_starts = 0;
  double seconds = 0;
};

namespace detail {

/// One chain's scratch for either method: x (and u last, for CT-HMC) with HMC's vectors.
struct TemperChainStorage {
  std::vector<double> position, gradient, proposal, momentum, proposal_gradient;
  double log_density = 0;
  explicit TemperChainStorage(int n)
      : position(n), gradient(n), proposal(n), momentum(n), proposal_gradient(n) {}
  HmcChain<double> view() {
    const int n = static_cast<int>(position.size());
    const auto v = [n](std::vector<double>& a) { return ChainVector<double>{a.data(), 1, n}; };
    return {v(position), v(gradient), &log_density, v(proposal), v(momentum), v(proposal_gradient)};
  }
};

/// What one chain's run adds to the ensemble's.
struct TemperChainTotals {
  double accept_prob = 0;
  std::int64_t divergent = 0, non_finite = 0;
  bool started = false;
};

/// Chain c's whole run: start from the base (β = 0, u = initial_u, index 0), warm-up, then the
/// kept draws into `sums` (x's coordinates) and `beta` (its β per draw).
template <class Target>
TemperChainTotals run_tempering_chain(const Target& target, const AnnealingBase<double>& base,
                                      const TemperConfig& config,
                                      const TemperingConstants<double>& constants,
                                      const TemperatureLadder<double>& ladder,
                                      const HmcStep<double>& step, std::int64_t c,
                                      TemperingSums& sums, double* beta_trace) {
  using Extended = ContinuouslyTemperedDensity<Target, AnnealingBase<double>>;
  const Extended extended{target, base, constants, config.u_scale};
  const int d = target.dim();
  const bool ct_hmc = config.method == TemperMethod::ct_hmc;
  const RandomStream rng(config.seed, static_cast<std::uint64_t>(c));
  TemperChainStorage storage(ct_hmc ? d + 1 : d);
  const HmcChain<double> chain = storage.view();
  base.sample(rng, 0, Purpose::initial_point, chain.position);
  double beta = 0;
  int index = 0;
  TemperChainTotals totals;
  if (ct_hmc) {
    chain.position[d] = config.initial_u;
    totals.started = evaluate_chain(extended, chain.position, chain.gradient, chain.log_density);
  } else {
    const TemperedDensity<Target, AnnealingBase<double>> tempered{target, base, beta};
    totals.started = evaluate_chain(tempered, chain.position, chain.gradient, chain.log_density);
  }
  if (!totals.started) return totals;
  std::vector<double> x(static_cast<std::size_t>(d));
  for (int i = 0; i < config.warmup + config.draws; ++i) {
    const auto iteration = static_cast<std::uint32_t>(i + 1);
    TemperingOutcome<double> moved;
    if (config.method == TemperMethod::gibbs_ct) {
      moved = gibbs_ct_transition(target, base, constants, chain, beta, rng, iteration, step);
    } else if (ct_hmc) {
      moved = ct_hmc_transition(extended, chain, rng, iteration, step);
      beta = extended.beta_at(chain.position[d]);
    } else {
      moved = simulated_tempering_transition(target, base, constants, ladder, chain, index, rng,
                                             iteration, step);
      beta = ladder.beta[index];
    }
    if (i < config.warmup) continue;
    totals.accept_prob += moved.hmc.accept_prob;
    totals.divergent += (moved.hmc.status & kStatusDivergent) != 0;
    totals.non_finite += (moved.hmc.status & kStatusNonFinite) != 0 || !std::isfinite(moved.gap);
    for (int k = 0; k < d; ++k) x[k] = chain.position[k];
    sums.add(c, moved.weights, x.data());
    beta_trace[i - config.warmup] = beta;
  }
  return totals;
}

}  // namespace detail

/// Runs `config.chains` chains of `config.method` on Target (one problem) and reduces their
/// weighted sums (file comment). CPU only for now.
template <class Target>
TemperResult temper(const Target& target, const TemperConfig& config) {
  static_assert(std::is_same_v<typename Target::value_type, double>,
                "tempering runs targets in double precision");
  config.validate();
  MYRIAD_EXPECTS(problem_count(target) == 1, "tempering takes a target with one problem, got ",
                 problem_count(target));
  if (config.device == Device::cuda)
    throw unavailable_error("tempering runs on the CPU only so far; use --device cpu or auto");
  const auto start = std::chrono::steady_clock::now();
  const AisLayout<double> layout =
      make_ais_layout<Target, double>(target, 1, {0.0, 1.0}, config.base);
  MYRIAD_EXPECTS(layout.lower.empty(), "tempering does not take box-constrained targets yet");
  const int d = layout.dim;
  const auto data_or_null = [](const std::vector<double>& v) {
    return v.empty() ? nullptr : v.data();
  };
  const AnnealingBase<double> base{d, data_or_null(layout.base_mean),
                                   data_or_null(layout.base_scale)};
  const TemperingConstants<double> constants{config.log_zeta, layout.log_z_base};
  const std::vector<double> schedule =
      config.method == TemperMethod::simulated_tempering
          ? inverse_temperatures(config.temperatures, config.schedule)
          : std::vector<double>{0.0, 1.0};
  const TemperatureLadder<double> ladder{schedule.data(), static_cast<int>(schedule.size())};
  const int n = config.method == TemperMethod::ct_hmc ? d + 1 : d;
  const std::vector<double> unit(static_cast<std::size_t>(n), 1.0);
  HmcStep<double> step;
  step.step_size = config.step_size;
  step.leapfrog_steps = config.leapfrog_steps;
  step.metric = MetricView<double>::diagonal_metric(unit.data(), n);

  TemperingSums sums(config.chains, d);
  std::vector<double> beta(static_cast<std::size_t>(config.chains * config.draws));
  std::vector<detail::TemperChainTotals> totals(static_cast<std::size_t>(config.chains));
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t c = 0; c < config.chains; ++c)
    totals[static_cast<std::size_t>(c)] =
        detail::run_tempering_chain(target, base, config, constants, ladder, step, c, sums,
                                    beta.data() + c * static_cast<std::int64_t>(config.draws));

  TemperResult result;
  result.method = to_string(config.method);
  result.dim = d;
  result.chains = config.chains;
  result.warmup = config.warmup;
  result.draws = config.draws;
  result.log_zeta = config.log_zeta;
  result.log_z_base = layout.log_z_base;
  double accept = 0;
  for (const auto& t : totals) {
    result.failed_starts += t.started ? 0 : 1;
    accept += t.accept_prob;
    result.divergent += t.divergent;
    result.non_finite += t.non_finite;
  }
  MYRIAD_EXPECTS(result.failed_starts == 0, result.failed_starts,
                 " chains found no finite start from the base");
  result.mean_accept_prob = accept / (static_cast<double>(config.chains) * config.draws);
  result.log_z = sums.log_z(config.log_zeta);
  if constexpr (target_has_exact_log_z<Target>) result.log_z_exact = target.exact_log_z(0);
  for (int i = 0; i < d; ++i) {
    result.names.push_back("x[" + std::to_string(i) + "]");
    result.target_mean.push_back(sums.target_mean(i));
    result.base_mean.push_back(sums.base_mean(i));
    result.base_exact_mean.push_back(base.centre(i));
    const EstimateWithError& m = result.base_mean.back();
    result.max_base_error_in_se =
        std::max(result.max_base_error_in_se, std::fabs(m.value - base.centre(i)) / m.se);
  }
  result.beta_rhat =
      diag::rhat(diag::DrawsView{beta.data(), config.chains, config.draws, config.draws, 1});
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace myriad
