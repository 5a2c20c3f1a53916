// `myriad sbc`: simulation-based calibration of a built-in model's sampler (run/sbc.hpp),
// writing ranks.npy (replications × quantities), sbc.csv (each quantity's rank-uniformity tests)
// and run.json into a staged output directory that appears only when complete.

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/atomic_file.hpp"
#include "myriad/io/npy.hpp"
#include "option_settings.hpp"
#include "run_report.hpp"
#include "run_session.hpp"

namespace myriad::cli {

namespace {

/// The options of `sbc`, the ones every run reads bound to `sbc` and `config` (the sampler's).
std::vector<OptionSpec> sbc_options(SbcConfig& sbc, ChmcConfig& config) {
  return run_command_options(
      "built-in model that states how to simulate its data (see 'myriad models')",
      "output directory (ranks.npy, sbc.csv, run.json)",
      {
          {"data", "FILE", "",
           "the model's data (CmdStan's JSON) where SBC keeps part of it: eight_schools's "
           "standard errors, a posteriordb regression's design; the outcomes are simulated"},
          {"replications", "R", "100", "prior draws, each with its simulated data and run",
           integer_setting(sbc.replications, 2, 1ll << 30)},
          {"posterior-draws", "L", "99",
           "posterior draws each true value is ranked among (ranks 0..L), spread over the run",
           integer_setting(sbc.posterior_draws, 1, 1 << 24)},
          {"bins", "B", "20", "rank histogram bins for the chi-square test (must divide L + 1)",
           integer_setting(sbc.bins, 2, 1 << 24)},
          {"alpha", "A", "0.05", "the ECDF bands hold all points with probability 1 - A",
           number_setting(sbc.alpha)},
          {"chains", "N", "16", "chains per replication (batched: each chain carries all)",
           integer_setting(config.chains, 1, 1ll << 30)},
          {"warmup", "W", "500", "warm-up iterations per chain",
           integer_setting(config.warmup, 0, 100000000)},
          {"draws", "D", "500", "draws per chain", integer_setting(config.draws, 1, 100000000)},
          {"batch", "auto|on|off", "auto",
           "density models: every replication in one batch of chains, each chain carrying all "
           "of them (on), or one run per replication with its own adaptation (off); auto: on "
           "with CUDA, off on the CPU (measured faster there). Generators: off"},
          {"sampler", "NAME", "",
           "density models: chees (default), snaper, nuts or hmc; generators: chmc"},
      },
      {sbc.seed, config.device});
}

Json histogram_json(const diag::RankHistogram& h) {
  return Json{{"bins", h.bins},
              {"counts", h.counts},
              {"chi_square", h.chi_square},
              {"degrees_of_freedom", h.degrees_of_freedom},
              {"p_value", h.p_value}};
}

Json bands_json(const diag::EcdfBands& b) {
  return Json{{"alpha", b.alpha},
              {"gamma", b.gamma},
              {"inside", b.inside},
              {"z", b.z},
              {"ecdf_difference", b.ecdf_difference},
              {"lower", b.lower},
              {"upper", b.upper}};
}

}  // namespace

int sbc_command(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  SbcConfig sbc;
  ChmcConfig config;  // constrained HMC's settings at their defaults; a density model's run
                      // reads only the SampleConfig part
  CommandLine line("sbc", sbc_options(sbc, config));
  if (parse_run_command(line, argc, argv)) return 0;  // --help
  sbc.validate();

  const ModelSpec& spec = find_model(line.text("model"));
  if (!spec.sbc)
    throw UsageError{spec.name +
                     " does not state how to simulate its data: no SBC (see 'myriad "
                     "models')"};
  const ModelArguments arguments(spec, model_arguments(line), data_path(line));
  if (spec.sbc_check) spec.sbc_check(arguments);
  const bool generator = spec.kind == ModelKind::generator;
  const std::string sampler =
      line.has("sampler") ? line.text("sampler") : (generator ? "chmc" : "chees");

  config.seed = sbc.seed;
  if (generator) {
    if (sampler != "chmc")
      throw UsageError{"--sampler " + sampler + ": SBC of a generator runs constrained HMC (chmc)"};
    config.sampler = HmcSampler::hmc;
    config.metric = MetricKind::diag;
    config.validate_chmc();
  } else if (const auto chosen = enum_value(kHmcSamplerNames, sampler)) {
    config.sampler = *chosen;
    config.validate();
  } else {
    throw UsageError{"unknown --sampler '" + sampler +
                     "' for a density model (chees, snaper, "
                     "nuts or hmc)"};
  }
  if (config.chains * config.draws < sbc.posterior_draws)
    throw UsageError{"--chains x --draws = " + std::to_string(config.chains * config.draws) +
                     " draws per replication, fewer than --posterior-draws " +
                     std::to_string(sbc.posterior_draws)};

  const std::string batch = line.text("batch");
  if (batch != "auto" && batch != "on" && batch != "off")
    throw UsageError{"unknown --batch '" + batch + "' (auto, on or off)"};
  if (!spec.sbc_batch && batch == "on")
    throw UsageError{"--batch on applies to density models (" + spec.name +
                     "'s replications run one after another)"};

  RunSession session(line, config.device, start);
  const bool batched = static_cast<bool>(spec.sbc_batch) &&
                       (batch == "on" || (batch == "auto" && session.device() == Device::cuda));
  ProgressBar& bar = session.progress();
  // On the CPU the replications, not the chains of one, share the cores (run_sbc).
  const int concurrent = session.device() == Device::cpu ? cpu_threads() : 1;
  const auto progress = [&](std::int64_t r) {
    bar.update(Progress{"replications", r + 1, sbc.replications});
  };
  const SbcResult result = batched ? spec.sbc_batch(arguments, sbc, config, progress)
                                   : run_sbc(
                                         sbc, config,
                                         [&](std::int64_t r, const SampleConfig& run) {
                                           ChmcConfig settings = config;
                                           static_cast<SampleConfig&>(settings) = run;
                                           return spec.sbc(arguments, sbc.seed, r, settings);
                                         },
                                         progress, concurrent);
  bar.finish();

  const auto quantities = static_cast<std::int64_t>(result.names.size());
  std::vector<double> ranks(result.ranks.begin(), result.ranks.end());
  io::write_npy(session.path("ranks.npy"), ranks.data(), {result.replications, quantities});
  {
    std::string csv = "variable,bins,chi_square,degrees_of_freedom,p_value,ecdf_inside,gamma\n";
    char row[256];
    for (const auto& q : result.quantities) {
      std::snprintf(row, sizeof row, ",%d,%.6g,%d,%.6g,%s,%.6g\n", q.histogram.bins,
                    q.histogram.chi_square, q.histogram.degrees_of_freedom, q.histogram.p_value,
                    q.bands.inside ? "true" : "false", q.bands.gamma);
      csv += "\"" + q.name + "\"" + row;
    }
    io::write_text_file_atomically(session.path("sbc.csv"), csv);
  }

  Json report = report_header("sbc", run_identity(spec, arguments, config.device));
  report["sampler"] = sampler;
  report["settings"] = Json{{"replications", sbc.replications},
                            {"posterior_draws", sbc.posterior_draws},
                            {"bins", sbc.bins},
                            {"alpha", sbc.alpha},
                            {"seed", static_cast<std::int64_t>(sbc.seed)},
                            {"chains", config.chains},
                            {"warmup", config.warmup},
                            {"draws", config.draws},
                            {"batched", batched},
                            {"device", to_string(config.device)}};
  Json per_quantity = Json::object();
  for (const auto& q : result.quantities)
    per_quantity[q.name] =
        Json{{"histogram", histogram_json(q.histogram)}, {"ecdf", bands_json(q.bands)}};
  report["quantities"] = per_quantity;
  report["replications"] = Json{{"min_ess_bulk", result.min_ess_bulk},
                                {"max_rhat", result.max_rhat},
                                {"below_ess", result.replications_below_ess}};
  report["divergences"] = result.divergences;
  report["gradient_evaluations"] = result.gradient_evaluations;
  report["sampling_seconds"] = result.seconds;
  report["total_seconds"] = session.seconds();
  session.commit(report);

  if (!session.quiet()) {
    std::printf("%s, %s: %lld replications x %lld chains x (%d + %d), ranks among %d draws\n",
                spec.name.c_str(), sampler.c_str(), static_cast<long long>(sbc.replications),
                static_cast<long long>(config.chains), config.warmup, config.draws,
                sbc.posterior_draws);
    std::printf("  %-16s %10s %8s %6s\n", "variable", "chi2 p", "ECDF", "gamma");
    for (const auto& q : result.quantities)
      std::printf("  %-16s %10.4f %8s %6.4f\n", q.name.c_str(), q.histogram.p_value,
                  q.bands.inside ? "inside" : "OUTSIDE", q.bands.gamma);
    std::printf(
        "  chi-square: %d bins of %d ranks, %d degrees of freedom; ECDF bands: "
        "simultaneous %.0f%% (Sailynoja et al. 2022)\n",
        sbc.bins, (sbc.posterior_draws + 1) / sbc.bins, sbc.bins - 1, 100 * (1 - sbc.alpha));
    if (result.replications_below_ess > 0)
      std::printf(
          "  note: %lld replications had a bulk ESS below L = %d: their draws are not "
          "independent enough for the tests' assumptions\n",
          static_cast<long long>(result.replications_below_ess), sbc.posterior_draws);
    if (result.divergences > 0)
      std::printf("  note: %lld divergent transitions over all replications\n",
                  static_cast<long long>(result.divergences));
    std::printf("  wrote %s/{ranks.npy,sbc.csv,run.json}\n", session.final_path().c_str());
  }
  return 0;
}

}  // namespace myriad::cli
