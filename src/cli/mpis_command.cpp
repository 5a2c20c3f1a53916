// `myriad mpis`: massively parallel importance sampling of a built-in plated model, writing
// run.json (log marginal likelihood over runs, plan, memory), summary.csv (posterior moments),
// draws.npy (exact posterior draws, with --samples) and, with --write-weights, particles.npy and
// marginal_weights.npy, into a staged output directory that appears only when complete.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "mpis_report.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/summary_csv.hpp"
#include "option_settings.hpp"
#include "run_session.hpp"

namespace myriad::cli {

namespace {

/// The options of `mpis`, the ones every run reads bound to `config`.
std::vector<OptionSpec> mpis_options(MpisConfig& config) {
  return run_command_options(
      "built-in plated model (see 'myriad models')", "output directory",
      {
          {"k", "K", "10", "particles per latent instance (mpis) or joint samples (global)",
           integer_setting(config.k, 1, 0x7FFFFFFF)},
          {"runs", "R", "10", "independent runs, for the standard error of log P",
           integer_setting(config.runs, 1, 1000000)},
          {"samples", "N", "0", "exact posterior draws per run, written to draws.npy",
           integer_setting(config.samples, 0, 100000000)},
          {"method", "mpis|global", "mpis",
           "massively parallel IS over all K^n combinations, or the global IS baseline",
           choice_setting(config.method, parse_mpis_method)},
          {"no-moments", "", "", "skip the backward pass (no posterior moments in summary.csv)",
           unless_flag_setting(config.moments)},
          {"write-weights", "", "",
           "also write particles.npy and marginal_weights.npy "
           "(runs x quantities x K)",
           flag_setting(config.keep_weights)},
          {"memory-limit", "GiB", "",
           "memory budget of one batch of runs, in GiB (2^30 bytes; default: 80% of the "
           "device's available memory)"},
          {"runs-per-batch", "B", "", "runs computed together (default: as many as fit)",
           when_given(integer_setting(config.runs_per_batch, 1, 1000000))},
          {"chunk", "PLATE[=SIZE]", "",
           "compute a top-level plate SIZE elements at a time to bound "
           "memory (default: automatic when one run does not fit)"},
          {"contraction", "auto|generic|tiled|cublas", "auto",
           "CUDA: how log-sum-product steps run (docs/mpis.md)",
           choice_setting(config.contraction, parse_contraction_path)},
          {"no-simd", "", "",
           "CPU: log-sum-product steps one output element at a time instead of in SIMD lanes "
           "(the same estimates to rounding, slower)",
           unless_flag_setting(config.cpu_simd_lanes)},
      },
      {config.seed, config.device});
}

}  // namespace

int mpis_command(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  MpisConfig config;
  CommandLine line("mpis", mpis_options(config));
  if (parse_run_command(line, argc, argv)) return 0;  // --help

  if (config.keep_weights && config.method == MpisMethod::global)
    throw UsageError{"--write-weights needs --method mpis"};
  if (config.keep_weights && !config.moments)
    throw UsageError{"--write-weights needs the backward pass (drop --no-moments)"};
  if (line.has("memory-limit")) {
    const double gibibytes = line.number("memory-limit");
    config.memory_budget = gibibytes * 1073741824.0;
    if (!(gibibytes > 0) || !std::isfinite(config.memory_budget))
      throw UsageError{"--memory-limit must be a positive number of GiB, got '" +
                       line.text("memory-limit") + "'"};
  }
  if (line.has("chunk") && config.method == MpisMethod::global)
    throw UsageError{"--chunk needs --method mpis (global IS draws its samples in chunks itself)"};
  if (line.has("chunk")) {
    const std::string chunk = line.text("chunk");
    const auto equals = chunk.find('=');
    config.chunk_plate = chunk.substr(0, equals);
    if (equals != std::string::npos) {
      char* end = nullptr;
      const long long size = std::strtoll(chunk.c_str() + equals + 1, &end, 10);
      if (*end != '\0' || size < 1)
        throw UsageError{"--chunk: '" + chunk + "' is not PLATE=SIZE with SIZE >= 1"};
      config.chunk_size = size;
    }
  }
  config.validate();

  const auto [spec, arguments] = chosen_model(
      line, [](const ModelSpec& s) { return bool(s.mpis); }, "a plated model");
  MpisRunDescription run;
  static_cast<RunIdentity&>(run) = run_identity(spec, arguments, config.device);

  RunSession session(line, config.device, start);
  if (session.device() != Device::cuda && line.has("contraction") &&
      config.contraction != ContractionPath::automatic)
    throw UsageError{"--contraction chooses a CUDA path; this run is on the CPU"};
  config.progress = session.phase_progress();
  const MpisResult result = spec.mpis(arguments, config);
  session.progress().finish();

  const auto quantities = static_cast<std::int64_t>(result.names.size());
  if (config.moments) io::write_summary_csv(session.path("summary.csv"), mpis_summary_rows(result));
  if (config.samples > 0)
    io::write_npy(session.path("draws.npy"), result.draws.data(),
                  {config.runs, config.samples, quantities});
  if (config.keep_weights) {
    io::write_npy(session.path("particles.npy"), result.particles.data(),
                  {config.runs, quantities, config.k});
    io::write_npy(session.path("marginal_weights.npy"), result.weights.data(),
                  {config.runs, quantities, config.k});
  }
  run.total_seconds = session.seconds();
  session.commit(mpis_report(run, config, result));

  if (!session.quiet()) {
    std::printf("%s: %s, K = %lld, %d run(s) on %s\n", spec.name.c_str(), result.method.c_str(),
                static_cast<long long>(result.k), result.runs, result.device.c_str());
    if (config.method == MpisMethod::massively_parallel)
      std::printf("  %d index variables, largest clique %d K-dims, peak memory %.3g MB\n",
                  result.index_variables, result.max_clique, result.peak_bytes / 1e6);
    std::printf("  log P = %.4f +- %.4f (se over runs)", result.log_marginal_mean,
                result.log_marginal_se);
    if (!std::isnan(result.exact_log_marginal))
      std::printf(", exact %.4f", result.exact_log_marginal);
    std::printf(
        "\n  %.3g s per run (log P), %.3g s moments, %.3g s draws; %d failed run(s), "
        "%lld non-finite factor entries\n",
        result.seconds_estimate / result.runs, result.seconds_moments, result.seconds_sampling,
        result.failed_runs, static_cast<long long>(result.nonfinite_entries));
    std::printf("  wrote %s/{run.json%s%s%s}\n", session.final_path().c_str(),
                config.moments ? ",summary.csv" : "", config.samples > 0 ? ",draws.npy" : "",
                config.keep_weights ? ",particles.npy,marginal_weights.npy" : "");
  }
  return 0;
}

}  // namespace myriad::cli
