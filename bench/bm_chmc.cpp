// BM_chmc/<generator>/<device>/chains:N — many-chain constrained HMC (backend/chmc_backend.hpp)
// on the built-in generators, CPU and CUDA side by side, for the goal: a GPU ensemble
// delivering ≥ 1000× the effective samples per second of one CPU core running one chain. The
// `cuda` rows use the automatic chain mapping; generators with a dense Gram have `cuda-thread`
// and `cuda-warp` rows instead (one thread or one warp per chain, ChmcChainMapping), the
// measurement that sets kWarpPerChainMinOutputs (backend/chmc_backend.hpp), and rows suffixed
// `-library` whose Gram matrices are factored by cuSOLVER across all chains between the phases
// of a transition instead of in the chain (GramFactorization::library), the measurement behind
// what `automatic` factors with (resolve_gram_factorization, backend/gram_factorization.hpp).
// lotka_volterra_summaries (M = 9) also has a `cuda-thread-registers` row: the same batched
// phases with the fixed-size registers tier (linalg/fixed_cholesky.hpp) in place of cuSOLVER.
//
// Figures per row:
//  * items_per_second: chain-iterations per second (gradient_evaluations_per_second: the same
//    loop's gradient evaluations of ∇φ, one per outer step and chain). One benchmark iteration is
//    one constrained-HMC iteration of every chain through ChmcBackend::run (momentum draw and
//    projection, N_s ∈ {4, …, 8} outer steps of N_g = 3 geodesic sub-steps with quasi-Newton
//    projections and reversibility checks, accept), nothing recorded, continuing from the
//    ensemble the ESS run below warmed up, at the step size it adapted. Wall-clock (UseRealTime):
//    on CUDA the time covers the fused kernel and the per-call statistics reduction and
//    synchronisation.
//  * ess_per_second: once per row, before the timed loop and on the same backend, a short run of
//    the scheduler (run_chmc on make_chmc_backend's backend, which is what sample_chmc
//    does): warm-up with step-size adaptation, then sampling; the smallest bulk ESS over the
//    recorded quantities divided by the sampling wall time (warm-up excluded, as is usual for
//    ESS/s; reported as min_ess and sampling_seconds), with the run's largest R-hat (max_rhat)
//    and the chains whose step was still backed off at the end of warm-up (backed_off_chains):
//    a few stranded chains are what keeps many-chain ESS per draw low.
//  * vs_one_core (CUDA rows): the GPU-vs-one-core ratio of the goal, ess_per_second over that of
//    the generator's chains:1 CPU row, which runs first when the filter selects it (0 if not).
//
// Rows: CPU with 1 chain (the single-core baseline; one OpenMP thread does all the work, one
// chain at a time) and a few small ensembles, so that the CPU rows finish in seconds on a
// two-core machine, in SIMD lanes where the library holds the generator's lane kernels (all of
// them: detail/chmc_lane_blocks.hpp), with `cpu_scalar` rows of the same ensembles one chain at a
// time beside them; CUDA with
// 2^8 … 2^14 chains (2^12 for linear_gaussian_m128), skipped with an error when no device is
// present. Generators: the CLI's sphere (N = 10), linear_gaussian with M = 32, N = 64 (dense
// Gram; the automatic mapping gives it a warp per chain) and with M = 128, N = 160 (automatic:
// cuSOLVER; one CPU row of one chain only, ~50 ms per iteration), lotka_volterra_summaries (the
// paper's summary-statistic variant: dense 9 × 9 Gram, N = 104, add_jacobian_vjp; thread per
// chain by default), gld (the paper's 250 observations; diagonal + low-rank Gram), a
// Lotka–Volterra problem of 10 steps (triangular + low-rank Gram; M = 20, N = 24) and the paper's
// 50-step Lotka–Volterra problem (lotka_volterra_paper: M = 100, N = 104), whose chains start
// from the gradient-matching estimate (LotkaVolterra::initialize). Both Lotka–Volterra rows use
// the generator's add_jacobian_vjp for the log-determinant gradient.
//
// BM_chmc_mapping/<generator>/<device>/chains:N — the same timed loop after a 20-iteration
// adaptation and no ESS run (register_mapping_rows): chain-iterations per second of each chain
// mapping and Gram factorisation, the figure that sets the `auto` thresholds.
//
// BM_chmc_gradient/<generator> — one gradient evaluation of the constrained-HMC potential
// φ = −log ρ + ½ log|J Jᵀ| on one CPU core: ChmcMachine::evaluate_current, i.e. J, the Gram
// factorisation, φ and ∇φ (constrained-hmc.md §8) at a point on the manifold, cycling through 8
// points placed by initialize(). Items: gradient evaluations. The generators are the papers'
// sizes: lotka_volterra (M = 100, N = 104; triangular + low-rank Gram),
// lotka_volterra_summaries (M = 9, N = 104; dense) and gld (M = 250, N = 254; diagonal +
// low-rank), so that the rows measure the cost that dominates a CPU run of each workload.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/host_chmc_chain.hpp"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/models/builtin_generators.hpp"
#include "myriad/run/sample_chmc.hpp"
#include "one_core_baseline.hpp"

namespace myriad::bench {
namespace {

/// The ESS run: warm-up and sampling iterations of sample_chmc.
constexpr int kEssWarmup = 100;
constexpr int kEssDraws = 200;
/// BM_chmc_mapping rows: a short step-size adaptation and one draw before the timed loop.
constexpr int kMappingWarmup = 20;
constexpr int kMappingDraws = 1;

/// Iteration settings of the timed loop (the ChmcConfig defaults) at a given step size.
ChmcSettings<double> timed_settings(double step_size) {
  const ChmcConfig defaults;
  ChmcSettings<double> settings;
  settings.seed = 1;
  settings.step.step_size = step_size;
  settings.step.inner_steps = defaults.inner_steps;
  settings.min_steps = defaults.min_steps;
  settings.max_steps = defaults.max_steps;
  return settings;
}

/// A row's device: cpu or cuda, and for cuda the chain mapping and Gram factorisation.
struct RowDevice {
  Device device = Device::cpu;
  ChmcChainMapping mapping = ChmcChainMapping::automatic;
  GramFactorization gram = GramFactorization::automatic;
  bool cpu_simd_lanes = true;  ///< false: the `cpu_scalar` rows, one chain at a time
  /// "cpu", "cpu_scalar", "cuda", "cuda-thread", "cuda-warp-library", …
  std::string name() const {
    std::string n = to_string(device);
    if (!cpu_simd_lanes) n += "_scalar";
    if (mapping != ChmcChainMapping::automatic) n += std::string("-") + to_string(mapping);
    if (gram != GramFactorization::automatic) n += std::string("-") + to_string(gram);
    return n;
  }
};

/// One row's backend after its ESS run, kept while Google Benchmark calls the row's function
/// repeatedly (it sizes the timed loop that way); released when the next row starts, so that
/// at most one ensemble occupies the device.
struct RowState {
  /// family, generator, RowDevice::name, chains
  std::tuple<std::string, std::string, std::string, std::int64_t> key;
  std::unique_ptr<ChmcBackend<double>> backend;
  double ess_per_second = 0;
  double min_ess = 0;
  double sampling_seconds = 0;
  double max_rhat = 0;                 ///< over the recorded quantities
  std::int64_t backed_off_chains = 0;  ///< step back-off still on at the end of warm-up
  double step_size = 0;
  std::uint32_t next_iteration = 0;
};

/// The ESS run of a row through the scheduler (run_chmc, as sample_chmc runs it, on a
/// backend built by make_chmc_backend for the requested device): warm-up with step-size
/// adaptation, then `draws` draws. The timed loop continues on the same backend, from the
/// warmed-up ensemble at the adapted step size.
template <class Generator>
void ess_run(const Generator& generator, const RowDevice& device, int warmup, int draws,
             RowState& row) {
  const std::int64_t chains = std::get<3>(row.key);
  ChmcConfig config;
  config.chains = chains;
  config.warmup = warmup;
  config.draws = draws;
  config.seed = 1;
  config.device = device.device;
  config.chain_mapping = device.mapping;
  config.gram_factorization = device.gram;
  config.cpu_simd_lanes = device.cpu_simd_lanes;
  row.backend = make_chmc_backend<Generator, double>(
      generator, chains, choose_chmc_device<Generator>(device.device),
      ChmcCudaOptions(device.mapping, device.gram), device.cpu_simd_lanes);
  const SampleResult result = run_chmc(*row.backend, config);
  row.min_ess = std::numeric_limits<double>::infinity();
  for (const auto& s : result.summary) {
    row.min_ess = std::min(row.min_ess, s.ess_bulk);
    row.max_rhat = std::max(row.max_rhat, s.rhat);
  }
  row.backed_off_chains = result.warmup_backed_off_chains;
  if (result.summary.empty() || !(row.min_ess >= 0)) row.min_ess = 0;
  row.sampling_seconds = result.sampling_seconds;
  row.ess_per_second = result.sampling_seconds > 0 ? row.min_ess / result.sampling_seconds : 0;
  row.step_size = result.step_size;
  row.next_iteration = static_cast<std::uint32_t>(warmup + draws + 1000);
}

/// The ensemble of the row being measured, shared by every generator's rows (one static in a
/// template would keep one ensemble per generator on the device: ~67 GB after BM_chmc).
RowState& current_row() {
  static RowState row;
  return row;
}

/// One BM_chmc row, or with `with_ess` false one BM_chmc_mapping row (no ESS figures: a short
/// adaptation, then the timed loop). `make_generator(device)` returns the generator with its
/// data where the device reads it (a problem's host_model() or device_model()).
template <class MakeGenerator>
void chmc_benchmark(benchmark::State& state, const std::string& name, const RowDevice& device,
                    MakeGenerator make_generator, bool with_ess = true) {
  const std::int64_t chains = state.range(0);
  if (device.device == Device::cuda && !cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  RowState& row = current_row();
  const auto key =
      std::make_tuple(std::string(with_ess ? "ess" : "mapping"), name, device.name(), chains);
  if (!row.backend || row.key != key) {
    row = RowState{};  // frees the previous row's ensemble first
    row.key = key;
    try {
      ess_run(make_generator(device.device), device, with_ess ? kEssWarmup : kMappingWarmup,
              with_ess ? kEssDraws : kMappingDraws, row);
    } catch (const std::exception& e) {
      row = RowState{};
      state.SkipWithError(e.what());
      return;
    }
  }
  ChmcBackend<double>& backend = *row.backend;
  const ChmcSettings<double> settings = timed_settings(row.step_size);
  IterationStats total;
  for (auto _ : state) total += backend.run(settings, row.next_iteration++, 1, nullptr, 0, 0);

  state.SetItemsProcessed(total.transitions);
  const double transitions = static_cast<double>(std::max<std::int64_t>(total.transitions, 1));
  if (with_ess) {
    state.counters["ess_per_second"] = row.ess_per_second;
    // The goal side by side: the chains:1 CPU row is the one-core baseline of the CUDA rows.
    if (device.device == Device::cpu && chains == 1) {
      record_one_core("BM_chmc/" + name, row.ess_per_second);
    } else if (device.device == Device::cuda) {
      report_vs_one_core(state, "BM_chmc/" + name, row.ess_per_second);
    }
    state.counters["min_ess"] = row.min_ess;
    state.counters["sampling_seconds"] = row.sampling_seconds;
    // Stranded chains (bench/results/gpu-2026-11-26-h100.md) show here: an R-hat above 1.01 and
    // chains whose step was still backed off when warm-up ended.
    state.counters["max_rhat"] = row.max_rhat;
    state.counters["backed_off_chains"] = static_cast<double>(row.backed_off_chains);
  }
  state.counters["step_size"] = row.step_size;
  state.counters["gradient_evaluations_per_second"] = benchmark::Counter(
      static_cast<double>(total.gradient_evaluations), benchmark::Counter::kIsRate);
  state.counters["accept_rate"] = total.mean_accept_prob();
  state.counters["newton_per_transition"] =
      static_cast<double>(total.newton_iterations) / transitions;
  state.counters["failed_fraction"] =
      static_cast<double>(total.not_converged + total.not_reversible + total.cholesky_failures +
                          total.non_finite + total.divergent) /
      transitions;
  state.SetLabel(backend.device_name());
}

/// The small Lotka–Volterra problem of the file comment (10 steps from r₀ = f₀ = 1).
models::LotkaVolterraProblem& small_lotka_volterra() {
  static models::LotkaVolterraProblem problem =
      models::LotkaVolterraProblem::make(7, models::LotkaVolterraSettings::short_series());
  return problem;
}

/// linear_gaussian with M outputs and N inputs (seed 1), made once. The rows: M = 32, N = 64 and
/// M = 128, N = 160 (the file comment's dense and large dense rows); M = 16, N = 32, a mapping row
/// between M = 9 and M = 32, where the first H100 run saw the thread mapping win (M = 9) and the
/// warp mapping win by 3.8× (M = 32); M = 64, N = 96, a mapping row between M = 32 and M = 128.
template <int M, int N>
models::LinearGaussianProblem& linear_gaussian_problem() {
  static models::LinearGaussianProblem problem = models::LinearGaussianProblem::make(M, N, 1);
  return problem;
}

models::GldProblem& gld_problem() {
  static models::GldProblem problem = models::GldProblem::make();
  return problem;
}

/// The CUDA rows of a generator with a dense Gram: each chain mapping with the Gram factored in
/// the chain and by cuSOLVER. (The automatic row would repeat one of them: labels name which.)
const std::vector<RowDevice> kDenseGramRows = {
    {Device::cuda, ChmcChainMapping::thread, GramFactorization::chain},
    {Device::cuda, ChmcChainMapping::warp, GramFactorization::chain},
    {Device::cuda, ChmcChainMapping::thread, GramFactorization::library},
    {Device::cuda, ChmcChainMapping::warp, GramFactorization::library}};

/// kDenseGramRows and, for M within the registers tier (≤ 12 in double), its batched row.
std::vector<RowDevice> small_dense_gram_rows() {
  std::vector<RowDevice> rows = kDenseGramRows;
  rows.push_back({Device::cuda, ChmcChainMapping::thread, GramFactorization::registers});
  return rows;
}

/// Registers BM_chmc_mapping/<name>/<device>/chains:N for each of `cuda_rows`: chain-iterations
/// per second after a short adaptation, no ESS run, at 2^10, 2^12 and 2^14 chains (up to
/// max_chains). The mappings and factorisations sample the same target by the same transition,
/// so the one with more chain-iterations per second gives more ESS per second: these rows set
/// kWarpPerChainMinOutputs and the automatic Gram factorisation in seconds of GPU time rather
/// than minutes.
template <class MakeGenerator>
void register_mapping_rows(const std::string& name, MakeGenerator make_generator,
                           const std::vector<RowDevice>& cuda_rows, int max_chains = 1 << 14) {
  for (const RowDevice& device : cuda_rows) {
    auto* b = benchmark::RegisterBenchmark(
        ("BM_chmc_mapping/" + name + "/" + device.name()).c_str(),
        [=](benchmark::State& s) { chmc_benchmark(s, name, device, make_generator, false); });
    b->ArgName("chains")->UseRealTime()->Unit(benchmark::kMillisecond);
    b->RangeMultiplier(4)->Range(1 << 10, max_chains);
  }
}

/// Registers BM_chmc/<name>/<device>: a CPU row and `cuda_rows` (by default the automatic one).
/// CPU rows: 1, 4, 16, … chains up to max_cpu_chains; CUDA rows: 2^8, 2^10, … up to
/// max_cuda_chains (2^14 unless the generator's chains are too slow for every row's 300-iteration
/// ESS run to finish in a minute or two).
template <class MakeGenerator>
void register_generator(const std::string& name, int max_cpu_chains, MakeGenerator make_generator,
                        const std::vector<RowDevice>& cuda_rows = {{Device::cuda}},
                        int max_cuda_chains = 1 << 14) {
  std::vector<RowDevice> devices = {{Device::cpu}};
  using Generator = decltype(make_generator(Device::cpu));
  if constexpr (library_holds<Generator, library_backend::cpu_chmc_lanes>::value) {
    RowDevice scalar;
    scalar.cpu_simd_lanes = false;
    devices.push_back(scalar);
  }
  devices.insert(devices.end(), cuda_rows.begin(), cuda_rows.end());
  for (const RowDevice& device : devices) {
    auto* b = benchmark::RegisterBenchmark(
        ("BM_chmc/" + name + "/" + device.name()).c_str(),
        [=](benchmark::State& s) { chmc_benchmark(s, name, device, make_generator); });
    b->ArgName("chains")->UseRealTime()->Unit(benchmark::kMillisecond);
    if (device.device == Device::cpu && !device.cpu_simd_lanes) {
      for (int chains = 4; chains <= max_cpu_chains; chains *= 4) b->Arg(chains);
    } else if (device.device == Device::cpu) {
      for (int chains = 1; chains <= max_cpu_chains; chains *= 4) b->Arg(chains);
    } else {
      b->RangeMultiplier(4)->Range(1 << 8, max_cuda_chains);
    }
  }
}

/// Scratch of one chain on the host, and its state at a few points on the manifold.
template <class Generator>
struct OneChainPoints {
  static constexpr int kPoints = 8;

  explicit OneChainPoints(const Generator& g) : generator(g), scratch(g, kPoints) {
    for (int p = 0; p < kPoints; ++p) {
      MYRIAD_EXPECTS(initialize_chmc_chain(generator, chain(p), RandomStream(p, 0), 100),
                     "BM_chmc_gradient: no initial point for seed ", p);
    }
  }
  ChmcChain<double> chain(int point) { return scratch.view(point); }

  Generator generator;
  testing::HostChmcChain<Generator> scratch;
};

/// One BM_chmc_gradient row: evaluate_current at the kPoints points in turn, one core.
template <class Generator>
void chmc_gradient_benchmark(benchmark::State& state, const Generator& generator) {
  OneChainPoints<Generator> one(generator);
  int point = 0;
  std::int64_t failures = 0;
  for (auto _ : state) {
    ChmcMachine<Generator, double> machine(one.generator, one.chain(point));
    failures += machine.evaluate_current() != kStatusOk;
    benchmark::DoNotOptimize(one.scratch.grad.data());
    benchmark::ClobberMemory();
    point = (point + 1) % OneChainPoints<Generator>::kPoints;
  }
  if (failures > 0) state.SkipWithError("evaluate_current failed at a point on the manifold");
  state.SetItemsProcessed(state.iterations());
}

models::LotkaVolterraProblem& lotka_volterra_problem() {
  static models::LotkaVolterraProblem problem = models::LotkaVolterraProblem::make();
  return problem;
}

void register_chmc_gradient_benchmarks() {
  const auto configure = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond);
  };
  configure(
      benchmark::RegisterBenchmark("BM_chmc_gradient/lotka_volterra", [](benchmark::State& s) {
        chmc_gradient_benchmark(s, lotka_volterra_problem().host_model());
      }));
  configure(benchmark::RegisterBenchmark(
      "BM_chmc_gradient/lotka_volterra_summaries", [](benchmark::State& s) {
        chmc_gradient_benchmark(s, lotka_volterra_problem().host_summaries_model());
      }));
  configure(benchmark::RegisterBenchmark("BM_chmc_gradient/gld", [](benchmark::State& s) {
    chmc_gradient_benchmark(s, gld_problem().host_model());
  }));
}

/// The generator of `problem()` with its data where the device reads it.
template <class Problem>
auto data_where_read(Problem& (*problem)()) {
  return [problem](Device d) {
    return d == Device::cuda ? problem().device_model() : problem().host_model();
  };
}

void register_chmc_benchmarks() {
  const auto m32 = data_where_read(linear_gaussian_problem<32, 64>);
  const auto m128 = data_where_read(linear_gaussian_problem<128, 160>);
  const auto lotka_volterra = data_where_read(small_lotka_volterra);
  const auto summaries = [](Device d) {
    return d == Device::cuda ? lotka_volterra_problem().device_summaries_model()
                             : lotka_volterra_problem().host_summaries_model();
  };
  register_generator("sphere", 64, [](Device) { return models::Sphere::make(10, 1.0); });
  register_generator("linear_gaussian_m32", 64, m32, kDenseGramRows);
  // M = 128: a thread-per-chain row factors a 128 × 128 Gram matrix in one thread ~50 times per
  // iteration, so its 2^14-chain ESS run would take many minutes; rows stop at 2^12 chains.
  register_generator("linear_gaussian_m128", 1, m128, kDenseGramRows, 1 << 12);
  register_generator("lotka_volterra_summaries", 64, summaries, small_dense_gram_rows());
  // ~10 ms per transition on one core one chain at a time: the CPU rows stop at 16 chains (two
  // AVX-512 groups).
  register_generator("gld", 16, data_where_read(gld_problem));
  register_generator("lotka_volterra", 64, lotka_volterra);
  // ~2 ms per chain-iteration on one core one chain at a time, ~0.5 ms in lanes: the CPU rows go
  // to 64 chains (8 AVX-512 groups) so that the lanes show, ~10 s per row's ESS run.
  register_generator("lotka_volterra_paper", 64, data_where_read(lotka_volterra_problem));

  // The mapping rows: the automatic choices' thresholds at M = 9, 16, 32, 64 and 128 (dense
  // Gram); thread against warp per chain for Lotka–Volterra (M = 20, triangular + low-rank),
  // whose thread rows leave the first H100 run at 6% occupancy with 4096 chains, up to 2^16
  // chains (bench/results/gpu-2026-11-26-h100.md); and GLD's automatic row, whose 300-iteration
  // ESS run does not fit a GPU window (its chain-iterations per second against the one-core
  // row's are the throughput ratio at the same transition).
  register_mapping_rows("linear_gaussian_m16", data_where_read(linear_gaussian_problem<16, 32>),
                        kDenseGramRows);
  register_mapping_rows("linear_gaussian_m32", m32, kDenseGramRows);
  register_mapping_rows("linear_gaussian_m64", data_where_read(linear_gaussian_problem<64, 96>),
                        kDenseGramRows, 1 << 12);
  register_mapping_rows("linear_gaussian_m128", m128, kDenseGramRows, 1 << 12);
  register_mapping_rows("lotka_volterra_summaries", summaries, small_dense_gram_rows());
  register_mapping_rows("lotka_volterra", lotka_volterra,
                        {{Device::cuda, ChmcChainMapping::thread, GramFactorization::chain},
                         {Device::cuda, ChmcChainMapping::warp, GramFactorization::chain}},
                        1 << 16);
  register_mapping_rows("gld", data_where_read(gld_problem), {{Device::cuda}}, 1 << 12);
}

[[maybe_unused]] const int registered =
    (register_chmc_benchmarks(), register_chmc_gradient_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
