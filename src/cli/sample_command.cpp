// `myriad sample`: many-chain HMC on a built-in model, writing summary.csv, draws.npy and
// run.json into a staged output directory that appears only when complete.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>

#include "command_line.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "myriad/app/option_names.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/summary_csv.hpp"
#include "myriad/mcmc/chain_restarts.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/run/auxiliary_config.hpp"
#include "myriad/run/host_memory.hpp"
#include "option_settings.hpp"
#include "resume_record.hpp"
#include "run_report.hpp"
#include "run_session.hpp"
#include "stop_signals.hpp"

namespace myriad::cli {

namespace {

/// The points of --init: a .npy array of shape (dim,) or (chains, dim), or a JSON array of
/// numbers or of arrays of numbers, flattened [chain][dim] (run_hmc checks the count).
std::vector<double> read_initial_positions(const std::string& path);

/// --metric's choice.
MetricKind parse_metric(const std::string& name) {
  if (const auto metric = enum_value(kMetricKindNames, name)) return *metric;
  throw UsageError{"unknown --metric '" + name + "' (auto, diag or dense)"};
}

/// Where `sample` puts what it reads beyond its SampleConfig.
struct SampleCommandExtras {
  Precision precision = Precision::float64;
  int checkpoint_every = 0;
};

/// The options of `sample`, the ones every run reads bound to `config` and `own`.
std::vector<OptionSpec> sample_options(SampleConfig& config, SampleCommandExtras& own) {
  return run_command_options(
      "built-in model to sample (see 'myriad models')",
      "output directory (summary.csv, draws.npy, run.json)",
      {
          data_option(),
          {"chains", "N", "1024", "number of chains",
           integer_setting(config.chains, 1, 0xFFFFFFFFll - 1)},
          {"warmup", "W", "1000", "warm-up iterations per chain",
           integer_setting(config.warmup, 0, 100000000)},
          {"draws", "D", "1000", "recorded draws per chain",
           integer_setting(config.draws, 1, 100000000)},
          {"thin", "T", "1", "keep every T-th draw in draws.npy and the diagnostics",
           integer_setting(config.thin, 1, 100000000)},
          {"precision", "double|float", "double", "floating-point precision (HMC)",
           choice_setting(own.precision, parse_precision)},
          {"sampler", "NAME", "",
           "chees (density models, the default) or snaper: HMC with the trajectory length "
           "adapted across the ensemble; nuts (No-U-Turn); hmc (fixed-length HMC; on "
           "generators: HMC on the Gaussian-kernel ABC target); chmc (generators, the default), "
           "abc-reject, abc-mcmc; slice, elliptical-slice, reflective-slice (density models; "
           "the last two need a Gaussian prior factor); pm-mh, apm-mi-mh, apm-ss-mh, apm-mi-ss, "
           "apm-ss-ss (estimator models; docs/pseudo-marginal.md)"},
          {"walk-step", "L", "0",
           "pm-mh, apm-*-mh: initial random-walk step in units of the ensemble's sd (0: "
           "2.38/sqrt(dim)), adapted in warm-up"},
          {"walk-target-accept", "A", "0",
           "pm-mh, apm-*-mh: the random walk's target acceptance (0: 0.07 for pm-mh, 0.234 for "
           "apm-*-mh)"},
          {"slice-width", "W", "3",
           "slice, apm-*-ss: bracket width in units of the ensemble's sd (reflective-slice: in "
           "cube units, default 1)"},
          {"step-out", "M", "4", "slice samplers: step-out budget per update (0: none)"},
          {"max-shrinks", "K", "64",
           "slice samplers: cap on evaluations inside a bracket (a capped update keeps its point "
           "and is counted)"},
          {"coordinate-wise", "", "",
           "slice: one update per coordinate instead of a random direction"},
          {"abc-epsilon", "E", "", "ABC tolerance (abc-reject, abc-mcmc, hmc on a generator)"},
          {"abc-kernel", "uniform|gaussian", "uniform", "ABC-MCMC kernel"},
          {"inner-steps", "N", "3", "constrained HMC: geodesic sub-steps per step (N_g)"},
          {"min-steps", "N", "4", "constrained HMC: fewest steps per trajectory"},
          {"max-steps", "N", "8", "constrained HMC: most steps per trajectory"},
          {"no-step-back-off", "", "",
           "constrained HMC: no per-chain step back-off in warm-up (every chain at the "
           "ensemble's step)"},
          {"chain-mapping", "auto|thread|warp", "auto",
           "constrained HMC on CUDA: one thread or one warp per chain"},
          {"gram-factorization", "auto|chain|registers|thread|tile|library", "auto",
           "constrained HMC on CUDA: Gram Cholesky in the chain or batched across chains"},
          {"leapfrog-steps", "L", "16", "hmc: maximum leapfrog steps per iteration",
           integer_setting(config.leapfrog_steps, 1, 1 << 20)},
          {"max-leapfrog-steps", "L", "1024",
           "chees, snaper: most leapfrog steps of an adapted trajectory",
           integer_setting(config.max_leapfrog_steps, 1, kMaxAdaptedLeapfrogSteps)},
          {"jitter", "J", "0.5", "step counts uniform on {ceil((1-J)L), ..., L}",
           number_setting(config.jitter)},
          {"max-tree-depth", "D", "10", "nuts: most tree doublings (1-15; 2^D - 1 steps)",
           integer_setting(config.max_tree_depth, 1, kLargestMaxTreeDepth)},
          {"metric", "auto|diag|dense", "auto",
           "HMC samplers: mass matrix adapted from the ensemble's variances (diag) or covariance "
           "(dense: not with snaper; dimension at most 1024); auto: dense up to dimension 100 "
           "(diag beyond, and with snaper)",
           choice_setting(config.metric, parse_metric)},
          {"init", "FILE", "",
           "HMC: initial points instead of drawn ones: a .json array (one point for every chain, "
           "or one per chain) or a .npy float64 array of shape (dim,) or (chains, dim)",
           when_given(choice_setting(config.initial_positions, read_initial_positions))},
          {"no-restarts", "", "",
           "HMC and constrained HMC: keep chains that have not moved in 25 warm-up iterations "
           "where they are (default: restart them from healthy chains)",
           unless_flag_setting(config.restart_stranded)},
          {"target-accept", "A", "0.8", "target acceptance for step-size adaptation",
           number_setting(config.target_accept)},
          {"step-size", "E", "0", "initial step size (0: automatic)",
           number_setting(config.initial_step_size)},
          {"superchains", "K", "0", "superchains for nested R-hat (0: automatic, 1: none)",
           integer_setting(config.superchains, 0, 1 << 30)},
          {"no-simd", "", "",
           "CPU, HMC samplers and chmc: one chain at a time instead of chains in SIMD lanes (the "
           "same draws to rounding, slower)",
           unless_flag_setting(config.cpu_simd_lanes)},
          {"checkpoint-every", "N", "",
           "HMC samplers and chmc: write the run's whole state every N iterations (warm-up and "
           "draws together; 0: only when stopped) and stop cleanly on SIGINT or SIGTERM; "
           "continue an interrupted run with 'myriad resume DIR' (docs/checkpoints.md)",
           when_given(integer_setting(own.checkpoint_every, 0, 1 << 30))},
          {"memory-limit", "BYTES", "",
           "host memory the run may use (e.g. 512M, 8G): a run that would need more is refused "
           "before it starts, and the diagnostics read draws.npy back in blocks that fit "
           "(default: the memory available)",
           when_given(choice_setting(
               config.memory_limit,
               [](const std::string& text) { return parse_bytes(text, "--memory-limit"); }))},
      },
      {config.seed, config.device});
}

std::vector<double> read_initial_positions(const std::string& path) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    const io::NpyArray array = io::read_npy(path);
    if (array.shape.size() != 1 && array.shape.size() != 2)
      throw UsageError{"--init " + path + ": expected a 1-D or 2-D array, got " +
                       std::to_string(array.shape.size()) + " dimensions"};
    return array.values;
  }
  std::ifstream in(path);
  if (!in) throw io_error("--init: cannot read " + path);
  const Json json = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<double> values;
  const auto add_numbers = [&](const Json& row) {
    if (!row.is_array()) return false;
    for (const Json& v : row) {
      if (!v.is_number()) return false;
      values.push_back(v.get<double>());
    }
    return true;
  };
  bool ok = json.is_array() && !json.empty();
  if (ok && json.front().is_array()) {
    for (const Json& row : json)
      ok = ok && row.is_array() && row.size() == json.front().size() && add_numbers(row);
  } else if (ok) {
    ok = add_numbers(json);
  }
  if (!ok)
    throw UsageError{"--init " + path +
                     ": expected a JSON array of numbers, or of arrays of numbers of one length"};
  return values;
}

/// The options of the auxiliary-variable samplers alone.
constexpr const char* kAuxiliaryOptions[] = {"walk-step", "walk-target-accept", "slice-width",
                                             "step-out",  "max-shrinks",        "coordinate-wise"};

/// The options of the HMC samplers and of the generator samplers.
constexpr const char* kNotForAuxiliary[] = {"metric",
                                            "max-tree-depth",
                                            "leapfrog-steps",
                                            "jitter",
                                            "max-leapfrog-steps",
                                            "init",
                                            "no-simd",
                                            "no-restarts",
                                            "target-accept",
                                            "step-size",
                                            "superchains",
                                            "checkpoint-every",
                                            "abc-epsilon",
                                            "abc-kernel",
                                            "inner-steps",
                                            "min-steps",
                                            "max-steps",
                                            "chain-mapping",
                                            "gram-factorization",
                                            "no-step-back-off"};

/// The auxiliary-variable samplers' part of check_sampler.
void check_auxiliary_sampler(const CommandLine& line, const ModelSpec& spec,
                             const ModelArguments& arguments, AuxiliaryMethod method) {
  const std::string sampler = to_string(method);
  const bool generator = spec.kind == ModelKind::generator;
  if (generator && !line.has("abc-epsilon"))
    throw UsageError{"--sampler " + sampler +
                     " on a generator samples its ABC posterior and needs "
                     "--abc-epsilon"};
  if (generator && uses_estimator(method) && !spec.generator.has_parameters(arguments))
    throw UsageError{"--sampler " + sampler +
                     " on a generator needs its inputs split into "
                     "parameters and noise; " +
                     spec.name +
                     " does not say which are which (use a slice sampler, abc-mcmc or chmc)"};
  if (!generator && !spec.auxiliary) {
    std::string names;
    for (const ModelSpec& m : builtin_models())
      if (m.auxiliary) names += (names.empty() ? "" : ", ") + m.name;
    throw UsageError{"--sampler " + sampler + " does not run on " + spec.name + " (it runs on " +
                     names + ")"};
  }
  if (!generator) {
    try {
      spec.auxiliary_check(method);
    } catch (const std::invalid_argument& e) {
      throw UsageError{spec.name + ": " + e.what()};
    }
  }
  // The HMC samplers' and the generator samplers' settings would be ignored: refuse them (the
  // ABC tolerance and kernel apply to a generator's ABC target).
  for (const char* name : kNotForAuxiliary) {
    const bool abc_option = std::string(name).rfind("abc-", 0) == 0;
    if (line.has(name) && !(generator && abc_option))
      throw UsageError{std::string("--") + name + " does not apply to --sampler " + sampler +
                       (abc_option ? " on a density model" : "")};
  }
  const bool walk = random_walk_on_x(method);
  const bool slices_x = !walk && method != AuxiliaryMethod::elliptical_slice;
  const bool slices = method != AuxiliaryMethod::pm_mh && method != AuxiliaryMethod::apm_mi_mh;
  for (const char* name : {"walk-step", "walk-target-accept"})
    if (!walk && line.has(name))
      throw UsageError{std::string("--") + name + " applies to pm-mh and apm-*-mh, not " + sampler};
  for (const char* name : {"slice-width", "step-out"})
    if (!slices_x && line.has(name))
      throw UsageError{std::string("--") + name +
                       " applies to slice, reflective-slice and apm-*-ss, not " + sampler};
  if (!slices && line.has("max-shrinks"))
    throw UsageError{"--max-shrinks applies to the samplers with a slice update, not " + sampler};
  if (method != AuxiliaryMethod::slice && line.has("coordinate-wise"))
    throw UsageError{"--coordinate-wise applies to --sampler slice, not " + sampler};
  if (line.has("precision") && line.text("precision") != "double")
    throw UsageError{"--precision " + line.text("precision") + " does not apply to --sampler " +
                     sampler + ", which runs in double precision"};
}

/// Rejects sampler/model combinations and options that do not apply, before any work.
void check_sampler(const CommandLine& line, const ModelSpec& spec, const ModelArguments& arguments,
                   const std::string& sampler) {
  if (spec.kind == ModelKind::annealing)
    throw UsageError{spec.name + " is an annealing target: run it with 'myriad ais'"};
  if (spec.kind == ModelKind::plated)
    throw UsageError{spec.name + " is a plated model: run it with 'myriad mpis'"};
  const bool generator = spec.kind == ModelKind::generator;
  if (const auto method = enum_value(kAuxiliaryMethodNames, sampler)) {
    check_auxiliary_sampler(line, spec, arguments, *method);
    return;
  }
  for (const char* name : kAuxiliaryOptions) {
    if (line.has(name))
      throw UsageError{std::string("--") + name +
                       " applies to the slice and pseudo-marginal samplers, not " + sampler};
  }
  const bool adaptive = sampler == "chees" || sampler == "snaper";
  const bool density_sampler = sampler == "hmc" || adaptive || sampler == "nuts";
  if (!density_sampler && sampler != "chmc" && sampler != "abc-reject" && sampler != "abc-mcmc")
    throw UsageError{"unknown sampler '" + sampler +
                     "' (hmc, chees, snaper, nuts, chmc, abc-reject, abc-mcmc, slice, "
                     "elliptical-slice, reflective-slice, pm-mh, apm-mi-mh, apm-ss-mh, apm-mi-ss, "
                     "apm-ss-ss)"};
  if (!generator && density_sampler && !spec.sample)
    throw UsageError{"--sampler " + sampler + " needs a density model; " + spec.name +
                     " is an estimator model (use pm-mh or apm-*)"};
  if (generator && density_sampler && sampler != "hmc")
    throw UsageError{"--sampler " + sampler + " needs a density model; " + spec.name +
                     " is a generator (use chmc, abc-reject, abc-mcmc or hmc)"};
  if (!generator && !density_sampler)
    throw UsageError{"--sampler " + sampler + " needs a generator model; " + spec.name +
                     " is a density model (use hmc, chees, snaper or nuts)"};
  if (sampler != "nuts" && line.has("max-tree-depth"))
    throw UsageError{"--max-tree-depth applies to --sampler nuts, not " + sampler};
  if ((generator || !density_sampler) && line.has("metric"))
    throw UsageError{"--metric applies to HMC samplers on a density model"};
  const bool abc = generator && sampler != "chmc";
  if (abc && !line.has("abc-epsilon"))
    throw UsageError{"--sampler " + sampler + " on a generator needs --abc-epsilon"};
  if (!abc && line.has("abc-epsilon"))
    throw UsageError{"--abc-epsilon applies to abc-reject, abc-mcmc and hmc on a generator"};
  // A setting of another sampler would be ignored without a word: refuse it.
  if (sampler != "chmc") {
    for (const char* name : {"inner-steps", "min-steps", "max-steps", "chain-mapping",
                             "gram-factorization", "no-step-back-off"}) {
      if (line.has(name))
        throw UsageError{std::string("--") + name + " applies to --sampler chmc, not " + sampler};
    }
  }
  if (((generator && sampler != "chmc") || (!generator && !density_sampler)) &&
      line.has("checkpoint-every"))
    throw UsageError{
        "--checkpoint-every applies to the HMC samplers (hmc, chees, snaper, nuts) "
        "and constrained HMC (chmc), not " +
        sampler};
  if (sampler != "hmc") {
    for (const char* name : {"leapfrog-steps", "jitter"}) {
      if (line.has(name))
        throw UsageError{std::string("--") + name + " applies to --sampler hmc, not " + sampler +
                         (adaptive            ? " (which adapts the trajectory length)"
                          : sampler == "nuts" ? " (whose trees choose their lengths)"
                                              : "")};
    }
  }
  if (!adaptive && line.has("max-leapfrog-steps"))
    throw UsageError{"--max-leapfrog-steps applies to --sampler chees and snaper, not " + sampler};
  if (!density_sampler && line.has("init"))
    throw UsageError{"--init applies to --sampler hmc, chees, snaper and nuts, not " + sampler};
  if (((!density_sampler && sampler != "chmc") || sampler == "nuts") && line.has("no-simd"))
    throw UsageError{"--no-simd applies to --sampler hmc, chees, snaper and chmc, not " + sampler};
  if ((sampler == "abc-mcmc" || sampler == "abc-reject") && line.has("no-restarts"))
    throw UsageError{"--no-restarts applies to --sampler hmc and chmc, not " + sampler};
  if (sampler != "abc-mcmc" && line.has("abc-kernel"))
    throw UsageError{
        "--abc-kernel applies to --sampler abc-mcmc (abc-reject uses the uniform "
        "ball, hmc the Gaussian kernel), not " +
        sampler};
  // ABC-MCMC adapts its random-walk scale to a fixed acceptance of 0.25 and starts every chain
  // on its own; ABC rejection draws independent prior simulations, chains x draws of them.
  std::vector<const char*> unused;
  if (generator && (sampler == "abc-mcmc" || sampler == "abc-reject"))
    unused = {"target-accept", "step-size", "superchains"};
  if (generator && sampler == "abc-reject") {
    unused.push_back("warmup");
    unused.push_back("thin");
  }
  for (const char* name : unused) {
    if (line.has(name))
      throw UsageError{std::string("--") + name + " does not apply to --sampler " + sampler};
  }
  if ((sampler != "hmc" || generator) && line.has("precision") &&
      line.text("precision") != "double")
    throw UsageError{"--precision " + line.text("precision") +
                     " applies to HMC on a density model; this run is double precision"};
}

AbcKernel parse_abc_kernel(const std::string& name) {
  if (name == "uniform") return AbcKernel::uniform_ball;
  if (name == "gaussian") return AbcKernel::gaussian;
  throw UsageError{"unknown --abc-kernel '" + name + "' (uniform or gaussian)"};
}

/// The settings of the samplers with their own configuration (on a generator; the
/// auxiliary-variable samplers), read (and checked) before the run starts.
/// A slice sampler's ABC target on a generator (AbcSliceTarget, mcmc/abc.hpp).
struct AbcTarget {
  AbcKernel kernel = AbcKernel::gaussian;
  double epsilon = 0;
};

struct SamplerSettings {
  ChmcConfig chmc;
  AbcConfig abc;
  AuxiliaryConfig auxiliary;
  AbcTarget abc_target;  ///< a slice sampler's ABC target on a generator
};

/// Reads an auxiliary-variable sampler's options and records them for run.json.
AuxiliaryConfig read_auxiliary_settings(const CommandLine& line, const SampleConfig& config,
                                        AuxiliaryMethod method, RunDescription& run) {
  AuxiliaryConfig auxiliary;
  static_cast<SampleConfig&>(auxiliary) = config;
  auxiliary.method = method;
  auxiliary.walk_step = line.number("walk-step");
  auxiliary.target_accept_walk = line.number("walk-target-accept");
  auxiliary.step_out = static_cast<int>(line.integer("step-out", 0, 1000));
  auxiliary.max_shrinks = static_cast<int>(line.integer("max-shrinks", 1, 60000));
  auxiliary.coordinate_wise = line.flag("coordinate-wise");
  if (on_unit_cube(method)) {
    auxiliary.cube_width = line.has("slice-width") ? line.number("slice-width") : 1.0;
  } else {
    auxiliary.slice_width = line.number("slice-width");
  }
  try {
    auxiliary.validate_auxiliary();
  } catch (const std::invalid_argument& e) {
    throw UsageError{e.what()};
  }
  Json settings = Json::object();
  if (random_walk_on_x(method)) {
    settings["walk"] = Json{{"initial_step", auxiliary.walk_step},
                            {"target_accept", auxiliary.walk_target_accept()}};
  }
  if (method != AuxiliaryMethod::pm_mh && method != AuxiliaryMethod::apm_mi_mh) {
    settings["slice"] =
        Json{{"width", on_unit_cube(method) ? auxiliary.cube_width : auxiliary.slice_width},
             {"step_out", auxiliary.step_out},
             {"max_shrinks", auxiliary.max_shrinks},
             {"coordinate_wise", auxiliary.coordinate_wise}};
  }
  run.extra["auxiliary"] = settings;
  return auxiliary;
}

/// The ABC target of a slice sampler on a generator: kernel and tolerance, checked and recorded.
AbcTarget read_abc_target(const CommandLine& line, RunDescription& run) {
  AbcTarget target;
  target.epsilon = line.number("abc-epsilon");
  if (!(target.epsilon > 0)) throw UsageError{"--abc-epsilon must be positive"};
  target.kernel = parse_abc_kernel(line.text("abc-kernel"));
  run.extra["abc"] = Json{{"epsilon", target.epsilon}, {"kernel", line.text("abc-kernel")}};
  return target;
}

/// run.json's record of what an auxiliary-variable sampler found: the adapted walk step and
/// scale, the capped slice updates per chain (listed up to kListedChains chains), the
/// evaluations and, for APM, the acceptance of the updates of u.
void record_auxiliary_outcome(const SampleResult& result, const AuxiliaryReport& report,
                              Json& block) {
  constexpr std::size_t kListedChains = 65536;
  if (block.contains("walk")) block["walk"]["step"] = result.step_size;
  block["scale"] = report.scale;
  std::int64_t chains_capped = 0, most = 0;
  for (const std::int64_t n : report.capped) {
    chains_capped += n > 0;
    most = std::max(most, n);
  }
  Json capped = Json{{"warmup", result.warmup_stats.slice_capped},
                     {"sampling", result.sampling_stats.slice_capped},
                     {"chains_capped", chains_capped},
                     {"max_per_chain", most}};
  if (report.capped.size() <= kListedChains) capped["per_chain"] = report.capped;
  block["capped"] = capped;
  block["density_evaluations"] =
      result.warmup_stats.density_evaluations + result.sampling_stats.density_evaluations;
  const IterationStats& s = result.sampling_stats;
  if (s.auxiliary_updates > 0)
    block["auxiliary_acceptance"] = double(s.auxiliary_accepted) / double(s.auxiliary_updates);
}

/// Reads the chosen sampler's own options and records them for run.json.
SamplerSettings read_generator_settings(const CommandLine& line, const SampleConfig& config,
                                        const ModelSpec& spec, const ModelArguments& arguments,
                                        RunDescription& run) {
  SamplerSettings settings;
  if (run.sampler == "chmc") {
    ChmcConfig& chmc = settings.chmc;
    static_cast<SampleConfig&>(chmc) = config;
    chmc.inner_steps = static_cast<int>(line.integer("inner-steps", 1, 1 << 16));
    chmc.min_steps = static_cast<int>(line.integer("min-steps", 1, 1 << 16));
    chmc.max_steps = static_cast<int>(line.integer("max-steps", 1, 1 << 16));
    chmc.chain_mapping = parse_team_mapping(line.text("chain-mapping"), "chain mapping");
    chmc.gram_factorization = parse_gram_factorization(line.text("gram-factorization"));
    check_gram_factorization(chmc.gram_factorization, spec.generator.gram_structure(arguments));
    chmc.step_back_off = !line.flag("no-step-back-off");
    chmc.validate_chmc();
    run.extra["integrator"] = Json{{"inner_steps", chmc.inner_steps},
                                   {"min_steps", chmc.min_steps},
                                   {"max_steps", chmc.max_steps},
                                   {"constraint_tol", chmc.constraint_tol},
                                   {"position_tol", chmc.position_tol},
                                   {"reverse_tol", chmc.reverse_tol},
                                   {"max_iterations", chmc.max_iterations},
                                   {"chain_mapping", to_string(chmc.chain_mapping)},
                                   {"gram_factorization", to_string(chmc.gram_factorization)},
                                   {"step_back_off", chmc.step_back_off}};
    return settings;
  }
  const double epsilon = line.number("abc-epsilon");
  if (!(epsilon > 0)) throw UsageError{"--abc-epsilon must be positive"};
  AbcConfig& abc = settings.abc;
  static_cast<SampleConfig&>(abc) = config;
  abc.epsilon = epsilon;
  abc.kernel = run.sampler == "abc-mcmc" ? parse_abc_kernel(line.text("abc-kernel"))
                                         : AbcKernel::uniform_ball;
  abc.validate_abc();
  const std::string kernel = run.sampler == "hmc"          ? "gaussian"
                             : run.sampler == "abc-reject" ? "uniform"
                                                           : line.text("abc-kernel");
  run.extra["abc"] = Json{{"epsilon", epsilon}, {"kernel", kernel}};
  if (run.sampler == "abc-mcmc") {
    run.extra["abc"]["initial_proposal_scale"] = abc.proposal_scale;
    run.extra["abc"]["target_accept"] = abc.target_accept_abc;
  }
  return settings;
}

/// Runs the chosen sampler and records what it found for run.json.
SampleResult run_sampler(const ModelSpec& spec, const ModelArguments& arguments,
                         const SampleConfig& config, const SamplerSettings& settings,
                         Precision precision, RunDescription& run) {
  if (enum_value(kAuxiliaryMethodNames, run.sampler)) {
    AuxiliaryReport report;
    SampleResult result = spec.kind == ModelKind::generator
                              ? spec.generator.abc_auxiliary(arguments, settings.auxiliary,
                                                             settings.abc_target.kernel,
                                                             settings.abc_target.epsilon, report)
                              : spec.auxiliary(arguments, settings.auxiliary, report);
    record_auxiliary_outcome(result, report, run.extra["auxiliary"]);
    return result;
  }
  if (spec.kind == ModelKind::density) return spec.sample(arguments, config, precision);
  if (run.sampler == "chmc") return spec.generator.chmc(arguments, settings.chmc);
  if (run.sampler == "hmc") return spec.generator.abc_hmc(arguments, settings.abc.epsilon, config);
  if (run.sampler == "abc-mcmc") return spec.generator.abc_mcmc(arguments, settings.abc);
  AbcRejectionSummary summary;
  SampleResult result = spec.generator.abc_rejection(arguments, settings.abc, summary);
  run.extra["abc"]["simulations"] = summary.simulations;
  run.extra["abc"]["accepted"] = summary.accepted;
  run.extra["abc"]["non_finite"] = summary.non_finite;
  return result;
}

}  // namespace

int sample_command(int argc, char** argv, bool resuming) {
  const auto start = std::chrono::steady_clock::now();
  SampleConfig config;
  SampleCommandExtras own;
  CommandLine line("sample", sample_options(config, own));
  if (parse_run_command(line, argc, argv)) return 0;  // --help
  const Precision precision = own.precision;
  const bool checkpointing = line.has("checkpoint-every");

  const ModelSpec& spec = find_model(line.text("model"));
  const ModelArguments arguments(spec, model_arguments(line), data_path(line));
  if (spec.double_only && precision != Precision::float64)
    throw UsageError{spec.name + " runs in double precision only (--precision double)"};

  RunDescription run;
  static_cast<RunIdentity&>(run) = run_identity(spec, arguments, config.device);
  run.precision = to_string(precision);
  run.sampler = line.has("sampler") ? line.text("sampler")
                                    : (spec.kind == ModelKind::generator ? "chmc" : "chees");
  check_sampler(line, spec, arguments, run.sampler);
  if (spec.kind == ModelKind::generator) {
    // Constrained HMC and HMC on the ABC target are fixed-length HMC with a diagonal metric;
    // the ABC samplers take neither (and --sampler, --metric name no other here).
    config.sampler = HmcSampler::hmc;
    config.metric = MetricKind::diag;
  } else if (const auto sampler = enum_value(kHmcSamplerNames, run.sampler)) {
    config.sampler = *sampler;
  }
  config.validate();
  if (spec.dim) check_metric_dimension(config, spec.dim(arguments));
  if (spec.exact) run.exact = spec.exact(arguments);  // also validates the arguments early
  const auto auxiliary_method = enum_value(kAuxiliaryMethodNames, run.sampler);
  SamplerSettings generator_settings =
      spec.kind == ModelKind::generator && !auxiliary_method
          ? read_generator_settings(line, config, spec, arguments, run)
          : SamplerSettings{};
  if (auxiliary_method) {
    generator_settings.auxiliary = read_auxiliary_settings(line, config, *auxiliary_method, run);
    if (spec.kind == ModelKind::generator)
      generator_settings.abc_target = read_abc_target(line, run);
  }

  RunSession session(line, config.device, start,
                     !checkpointing ? io::Staging::fresh
                                    : (resuming ? io::Staging::resume : io::Staging::resumable));
  ProgressBar& bar = session.progress();
  config.progress = [&bar](const Progress& p) { bar.update(p); };
  // The trace goes to draws.npy chunk by chunk (run/host_memory.hpp), not into memory.
  config.draws_path = session.path("draws.npy");
  if (checkpointing) {
    if (!resuming) write_resume_record(session.path("command.json"), "sample", line);
    config.checkpoint.path = session.path(io::kCheckpointFileName);
    config.checkpoint.every = own.checkpoint_every;
    config.checkpoint.resume = resuming;
    config.checkpoint.stop_requested = stop_requested;
    catch_stop_signals();
  }
  // The generator samplers' settings were copied from `config` before the session existed: they
  // take what it decided since (progress, the draws file, the checkpoint).
  for (SampleConfig* copy : {static_cast<SampleConfig*>(&generator_settings.chmc),
                             static_cast<SampleConfig*>(&generator_settings.abc),
                             static_cast<SampleConfig*>(&generator_settings.auxiliary)}) {
    copy->progress = config.progress;
    copy->draws_path = config.draws_path;
    copy->checkpoint = config.checkpoint;
  }
  SampleResult result;
  try {
    result = run_sampler(spec, arguments, config, generator_settings, precision, run);
  } catch (const interrupted& stopped) {
    bar.finish();
    std::fprintf(stderr,
                 "myriad: %s: %s; continue with: myriad resume %s (the run's state is in %s)\n",
                 stop_signal_name(), stopped.what(), session.final_path().c_str(),
                 session.staging_path().c_str());
    return 128 + stop_signal();
  }
  bar.finish();

  const double write_start = session.seconds();
  io::write_summary_csv(session.path("summary.csv"), result.summary);
  if (result.draws_path.empty()) {  // ABC rejection's draws are held, not streamed
    const std::vector<std::int64_t> shape = {result.chains, result.kept_draws,
                                             static_cast<std::int64_t>(result.names.size())};
    io::write_npy(session.path("draws.npy"), result.draws_data.data(), shape);
  }
  run.total_seconds = session.seconds();
  Json report = sample_report(run, config, result);
  report["wall_time"]["output_seconds"] = session.seconds() - write_start;
  session.commit(report);

  if (!session.quiet()) {
    const DiagnosticExtremes worst = diagnostic_extremes(result);
    std::cout << io::format_summary_table(result.summary);
    const double seconds = result.warmup_seconds + result.sampling_seconds;
    // The work line: gradients for HMC and constrained HMC, simulations for the ABC samplers
    // (one per ABC-MCMC transition), which take none.
    char work[160];
    if (auxiliary_method) {
      const double evaluations = double(result.warmup_stats.density_evaluations +
                                        result.sampling_stats.density_evaluations);
      const char* what = uses_estimator(*auxiliary_method) ? "estimates" : "density evaluations";
      std::snprintf(work, sizeof work, "%.3g %s in %.2f s: %.3g %s/s", evaluations, what, seconds,
                    seconds > 0 ? evaluations / seconds : 0.0, what);
    } else if (run.sampler == "abc-reject" || run.sampler == "abc-mcmc") {
      const double simulations =
          run.sampler == "abc-reject"
              ? run.extra["abc"]["simulations"].get<double>()
              : double(result.warmup_stats.transitions + result.sampling_stats.transitions);
      std::snprintf(work, sizeof work, "%.3g simulations in %.2f s: %.3g simulations/s",
                    simulations, seconds, seconds > 0 ? simulations / seconds : 0.0);
    } else {
      const double evaluations = double(result.warmup_stats.gradient_evaluations +
                                        result.sampling_stats.gradient_evaluations);
      std::snprintf(work, sizeof work,
                    "%.3g gradient evaluations in %.2f s: %.3g gradient evaluations/s", evaluations,
                    seconds, result.gradient_evaluations_per_second());
    }
    // The harmonic mean of the acceptance, which ChEES, SNAPER and NUTS adapt their step to.
    char harmonic[48] = "";
    if (spec.kind == ModelKind::density && run.sampler != "hmc" && !auxiliary_method)
      std::snprintf(harmonic, sizeof harmonic, " (harmonic mean %.3f)",
                    result.sampling_stats.harmonic_accept_prob());
    // The sampler that ran, and for the HMC samplers on a density the metric "auto" chose.
    std::string method = run.sampler;
    if (spec.kind == ModelKind::density && !auxiliary_method)
      method += std::string(" (") + to_string(result.metric) + " metric)";
    std::printf(
        "\n%s, %s: %lld chains x (%d warmup + %d draws) on %s\n"
        "  %s\n"
        "  %s %.4g, acceptance %.3f%s, divergences %lld, non-finite %lld\n"
        "  max R-hat %.4f, max nested R-hat %.4f (%d superchains), min ESS bulk %.0f, tail %.0f\n"
        "  wrote %s/{summary.csv,draws.npy,run.json}\n",
        spec.name.c_str(), method.c_str(), static_cast<long long>(result.chains), result.warmup,
        result.draws, result.device.c_str(), work,
        run.sampler == "abc-mcmc"                                 ? "proposal scale"
        : auxiliary_method && random_walk_on_x(*auxiliary_method) ? "walk step"
        : auxiliary_method && *auxiliary_method != AuxiliaryMethod::elliptical_slice ? "slice width"
        : auxiliary_method ? "no step size"
                           : "step size",
        result.step_size, result.sampling_stats.mean_accept_prob(), harmonic,
        static_cast<long long>(result.sampling_stats.divergent),
        static_cast<long long>(result.sampling_stats.non_finite), worst.max_rhat,
        worst.max_nested_rhat, result.superchains, worst.min_ess_bulk, worst.min_ess_tail,
        session.final_path().c_str());
    if (run.sampler == "chees" || run.sampler == "snaper") {
      std::printf("  trajectory length %.4g (at most %d leapfrog steps)\n",
                  result.trajectory_length, result.leapfrog_steps);
    }
    if (run.sampler == "nuts") {
      const IterationStats& s = result.sampling_stats;
      std::printf(
          "  tree depth mean %.2f, max %lld, cap %d hit %lld times; lockstep efficiency %.2f\n",
          s.mean_tree_depth(), static_cast<long long>(s.tree_depth_max), result.max_tree_depth,
          static_cast<long long>(s.tree_depth_capped),
          s.lockstep_gradient_evaluations > 0
              ? double(s.gradient_evaluations) / double(s.lockstep_gradient_evaluations)
              : 1.0);
    }
    if (auxiliary_method) {
      const IterationStats& s = result.sampling_stats;
      if (random_walk_on_x(*auxiliary_method) && result.step_size < 1e-3)
        std::printf(
            "  note: the walk step shrank to %.3g in warm-up: the estimate's noise keeps "
            "the acceptance below the target at any step; raise the estimator's samples "
            "or lower --walk-target-accept\n",
            result.step_size);
      if (s.auxiliary_updates > 0)
        std::printf("  auxiliary variates: %.3f of their updates moved them\n",
                    double(s.auxiliary_accepted) / double(s.auxiliary_updates));
      if (result.warmup_stats.slice_capped + s.slice_capped > 0)
        std::printf(
            "  note: %lld slice updates reached the --max-shrinks cap and kept their point "
            "(valid, but a sign the width is too large; run.json: auxiliary.capped)\n",
            static_cast<long long>(result.warmup_stats.slice_capped + s.slice_capped));
    }
    if (run.sampler == "abc-reject" && result.chains == 0) {
      std::printf(
          "  note: none of the %.0f prior simulations was within the tolerance (%.0f were not "
          "finite): no draws\n",
          run.extra["abc"]["simulations"].get<double>(),
          run.extra["abc"]["non_finite"].get<double>());
    }
    if (run.sampler == "abc-mcmc" && result.sampling_stats.transitions > 0 &&
        result.sampling_stats.accepted == 0) {
      std::printf(
          "  note: no ABC-MCMC proposal was accepted: the chains never moved from their start "
          "(the tolerance is too small for a random walk); the draws are not a posterior "
          "sample\n");
    }
    if (result.warmup_restarted_chains > 0) {
      std::printf(
          "  note: %lld chains were stranded in warm-up (no move in %d iterations, a log "
          "density far below the ensemble's, or under constrained HMC a step backed off %d or "
          "more times) and restarted from healthy chains (run.json: warmup.restarts)\n",
          static_cast<long long>(result.warmup_restarted_chains), kRestartCheckIterations,
          kStrandedStepHalvings);
    }
    if (result.sampling_stuck_chains > 0) {
      std::printf(
          "  note: %lld chains never moved during sampling: their draws repeat one point and "
          "the diagnostics above include them\n",
          static_cast<long long>(result.sampling_stuck_chains));
    }
    if (result.warmup_backed_off_chains > 0) {
      std::printf(
          "  note: %lld chains ended warm-up still backing off their step (the furthest at "
          "step/2^%d); if R-hat flags them, lengthen --warmup\n",
          static_cast<long long>(result.warmup_backed_off_chains), result.warmup_max_step_halvings);
    }
  }
  return 0;
}

}  // namespace myriad::cli
