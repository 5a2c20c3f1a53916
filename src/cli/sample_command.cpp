// `myriad sample`: many-chain HMC on a built-in model, writing summary.csv, draws.npy and
// run.json into a staged output directory that appears only when complete.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>

#include "command_line.hpp"
#include "commands.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/io/json.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/output_directory.hpp"
#include "myriad/io/summary_csv.hpp"
#include "myriad/models/registry.hpp"
#include "progress_bar.hpp"
#include "run_report.hpp"

namespace myriad::cli {

namespace {

std::vector<OptionSpec> sample_options() {
  return {
      {"model", "NAME", "", "built-in model to sample (see 'myriad models')"},
      {"model-arg", "KEY=VALUE", "", "model argument", true},
      {"chains", "N", "1024", "number of chains"},
      {"warmup", "W", "1000", "warm-up iterations per chain"},
      {"draws", "D", "1000", "recorded draws per chain"},
      {"thin", "T", "1", "keep every T-th draw in draws.npy and the diagnostics"},
      {"seed", "S", "1", "random seed"},
      {"device", "auto|cpu|cuda", "auto", "where to run"},
      {"output", "DIR", "", "output directory (summary.csv, draws.npy, run.json)"},
      {"precision", "double|float", "double", "floating-point precision"},
      {"leapfrog-steps", "L", "16", "maximum leapfrog steps per iteration"},
      {"jitter", "J", "0.5", "step counts uniform on {ceil((1-J)L), ..., L}"},
      {"target-accept", "A", "0.8", "target acceptance for step-size adaptation"},
      {"step-size", "E", "0", "initial step size (0: automatic)"},
      {"superchains", "K", "0", "superchains for nested R-hat (0: automatic, 1: none)"},
      {"no-progress", "", "", "no progress bar"},
      {"quiet", "", "", "print nothing on success"},
      {"help", "", "", "show this help"},
  };
}

std::pair<std::string, std::string> split_model_arg(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{"--model-arg expects KEY=VALUE, got '" + text + "'"};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

int sample_command(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  CommandLine line("sample", sample_options());
  line.parse(argc, argv, 2);
  if (line.flag("help")) {
    std::cout << line.help();
    return 0;
  }
  if (!line.has("model")) throw UsageError{"--model is required (see 'myriad models')"};
  if (!line.has("output")) throw UsageError{"--output is required"};

  SampleConfig config;
  config.chains = line.integer("chains", 1, 0xFFFFFFFFll - 1);
  config.warmup = static_cast<int>(line.integer("warmup", 0, 100000000));
  config.draws = static_cast<int>(line.integer("draws", 1, 100000000));
  config.thin = static_cast<int>(line.integer("thin", 1, 100000000));
  config.seed = line.unsigned_integer("seed");
  config.leapfrog_steps = static_cast<int>(line.integer("leapfrog-steps", 1, 1 << 20));
  config.jitter = line.number("jitter");
  config.target_accept = line.number("target-accept");
  config.initial_step_size = line.number("step-size");
  config.superchains = static_cast<int>(line.integer("superchains", 0, 1 << 30));
  config.device = parse_device(line.text("device"));
  const Precision precision = parse_precision(line.text("precision"));
  config.validate();

  const ModelSpec& spec = find_model(line.text("model"));
  std::vector<std::pair<std::string, std::string>> given;
  for (const auto& text : line.all("model-arg")) given.push_back(split_model_arg(text));
  const ModelArguments arguments(spec, given);

  RunDescription run;
  run.model = spec.name;
  run.model_arguments = arguments.values();
  run.requested_device = to_string(config.device);
  run.precision = to_string(precision);
  if (spec.exact) run.exact = spec.exact(arguments);  // also validates the arguments early

  // Fail on a missing GPU or an unwritable output before any computation.
  resolve_device(config.device);
  io::OutputDirectory output(line.text("output"));

  const bool quiet = line.flag("quiet");
  ProgressBar bar(!quiet && !line.flag("no-progress"));
  config.progress = [&bar](const Progress& p) { bar.update(p); };
  const SampleResult result = spec.sample(arguments, config, precision);
  bar.finish();

  const auto write_start = std::chrono::steady_clock::now();
  io::write_summary_csv(output.path("summary.csv"), result.summary);
  const std::vector<std::int64_t> shape = {result.chains, result.kept_draws,
                                           static_cast<std::int64_t>(result.names.size())};
  io::write_npy(output.path("draws.npy"), result.draws_data.data(), shape);
  run.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::json::Value report = sample_report(run, config, result);
  report["wall_time"]["output_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  io::write_text_file_atomically(output.path("run.json"), report.dump() + "\n");
  output.commit();

  if (!quiet) {
    const DiagnosticExtremes worst = diagnostic_extremes(result);
    std::cout << io::format_summary_table(result.summary);
    const double evaluations = double(result.warmup_stats.gradient_evaluations +
                                      result.sampling_stats.gradient_evaluations);
    std::printf(
        "\n%s: %lld chains x (%d warmup + %d draws) on %s\n"
        "  %.3g gradient evaluations in %.2f s: %.3g gradient evaluations/s\n"
        "  step size %.4g, acceptance %.3f, divergences %lld, non-finite %lld\n"
        "  max R-hat %.4f, max nested R-hat %.4f (%d superchains), min ESS bulk %.0f, tail %.0f\n"
        "  wrote %s/{summary.csv,draws.npy,run.json}\n",
        spec.name.c_str(), static_cast<long long>(result.chains), result.warmup, result.draws,
        result.device.c_str(), evaluations, result.warmup_seconds + result.sampling_seconds,
        result.gradient_evaluations_per_second(), result.step_size,
        result.sampling_stats.mean_accept_prob(),
        static_cast<long long>(result.sampling_stats.divergent),
        static_cast<long long>(result.sampling_stats.non_finite), worst.max_rhat,
        worst.max_nested_rhat, result.superchains, worst.min_ess_bulk, worst.min_ess_tail,
        output.final_path().c_str());
  }
  return 0;
}

}  // namespace myriad::cli
