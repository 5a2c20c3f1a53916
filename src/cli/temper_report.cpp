#include "temper_report.hpp"

#include <cmath>
#include <limits>

#include "base_options.hpp"
#include "exact_posterior_check.hpp"
#include "myriad/estimate/log_z.hpp"
#include "run_report.hpp"

namespace myriad::cli {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// The target's moments as exact_posterior_check reads them.
std::vector<WeightedMoments> target_moments(const TemperResult& result) {
  std::vector<WeightedMoments> moments;
  for (int i = 0; i < result.dim; ++i) {
    const double sd = result.target_sd[i], se = result.target_mean[i].se;
    moments.push_back({result.target_mean[i].value, sd, se, kNan, kNan, kNan,
                       se > 0 ? sd * sd / (se * se) : kNan});
  }
  return moments;
}

}  // namespace

Json temper_report(const TemperRunDescription& run, const TemperConfig& config,
                   const TemperResult& result) {
  Json report = report_header(result.method, run);

  Json settings = {{"chains", config.chains},
                   {"warmup", config.warmup},
                   {"draws", config.draws},
                   {"step_size", config.step_size},
                   {"leapfrog_steps", config.leapfrog_steps},
                   {"metric", to_string(config.metric)},
                   {"log_zeta", result.log_zeta}};  // log ζ as given, or the fitted base's
  if (config.method == TemperMethod::simulated_tempering) {
    settings["temperatures"] = result.temperatures;
    settings["schedule"] = run.schedule;
    settings["schedule_parameter"] = run.schedule_parameter;  // null when none
  }
  if (config.method == TemperMethod::ct_hmc) {
    settings["u_scale"] = config.u_scale;
    settings["initial_u"] = config.initial_u;
  }
  settings["seed"] = static_cast<std::int64_t>(config.seed);
  settings["device"] = run.requested_device;
  report["settings"] = settings;

  report["device"] = result.device;
  report["wall_time"] = {{"sampling_seconds", result.seconds},
                         {"total_seconds", run.total_seconds}};
  report["chain_iterations_per_second"] = result.chain_iterations_per_second();
  report["gradient_evaluations"] = result.stats.gradient_evaluations;
  report["dim"] = result.dim;
  report["log_z_base"] = result.log_z_base;
  report["base"] =
      base_json(result.fitted_base ? result.fitted_base->spec() : config.base, result.fitted_base);

  report["log_z"] = result.log_z.value;
  report["log_z_se"] = result.log_z.se;
  if (!std::isnan(result.log_z_exact)) report["log_z_exact"] = result.log_z_exact;
  const Json check = exact_posterior_check(result.exact, result.names, target_moments(result));
  if (!check.is_null()) report["exact_posterior_check"] = check;
  // The w₀-weighted means against the base's own: off by many standard errors when the chains
  // have not mixed between the base and the target (docs/tempering.md).
  Json means = Json::array();
  for (int i = 0; i < result.dim; ++i) {
    means.push_back({{"name", result.names[i]},
                     {"estimate", result.base_mean[i].value},
                     {"se", result.base_mean[i].se},
                     {"exact", result.base_exact_mean[i]}});
  }
  report["base_check"] = {{"max_error_in_se", result.max_base_error_in_se}, {"means", means}};
  report["beta_rhat"] = result.beta_rhat;
  report["mean_beta"] = result.mean_beta;

  report["sampling"] = stats_json(result.stats);
  report["failures"] = {{"failed_starts", result.failed_starts},
                        {"divergent", result.stats.divergent},
                        {"non_finite", result.stats.non_finite},
                        {"dropped_samples", result.dropped}};
  report["acceptance"] = result.mean_accept_prob();
  return report;
}

std::vector<diag::VariableSummary> temper_summary_rows(const TemperResult& result) {
  std::vector<diag::VariableSummary> rows;
  const std::vector<WeightedMoments> moments = target_moments(result);
  for (int i = 0; i < result.dim; ++i) {
    const WeightedMoments& m = moments[i];
    rows.push_back(
        {result.names[i], m.mean, m.sd, m.mcse_mean, kNan, kNan, kNan, kNan, m.ess, m.ess});
  }
  return rows;
}

}  // namespace myriad::cli
