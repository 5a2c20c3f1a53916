// BM_temper/boltzmann_d30/<method>/<device>/chains:C — the tempering samplers (run/temper.hpp)
// through their backend interface (backend/tempering_backend.hpp) as myriad::temper drives it,
// on the thesis's workload: a 30-unit Boltzmann-machine relaxation (thesis §9.6, seed 201702,
// Λ = cI), the thesis's HMC settings (δt = 0.5, L = 20) and a unit Gaussian base with log ζ at the
// exact log Z. One benchmark iteration advances every chain by kChunk transitions, the kept ones
// adding to the estimators' sums and the β trace; after kDraws kept transitions the chains are
// started again, untimed. Items: chain-iterations.
//
// Counters:
//   chain_iterations_per_second  the throughput (items per second);
//   bytes_per_ci, flops_per_ci   per chain-iteration (roofline.hpp, tempering_roofline);
//   roofline_fraction            CUDA rows: the achieved FLOP rate over min(peak FP64,
//                                intensity × DRAM bandwidth);
//   vs_one_core                  CUDA rows: throughput over the same method's cpu1 row of this
//                                process (registered first; 0 when the filter left it out).
// `cpu1` rows run the CPU backend on one OpenMP thread, `cpu` rows on all. The log Z RMSE per
// second of each method is a study, not a throughput: bench/results/tempering-comparison-cpu.md.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "myriad/backend/device.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/run/temper.hpp"
#include "one_core_baseline.hpp"
#include "roofline.hpp"
#include "thread_limit.hpp"

namespace myriad::bench {
namespace {

constexpr int kUnits = 30;
constexpr int kChunk = 10;
constexpr int kDraws = 200;
constexpr const char* kTarget = "boltzmann_d30";

using Clock = std::chrono::steady_clock;

/// The workload's target, built once per process: its exact log Z enumerates 2^30 states
/// (about 27 s on two cores, 4 s on sixteen).
models::BoltzmannRelaxationData<double>& boltzmann() {
  static models::BoltzmannRelaxationData<double> data =
      models::BoltzmannRelaxationData<double>::synthetic(kUnits, 201702);
  return data;
}

/// Its exact log Z (the base's log ζ), enumerated once per process on every core: computed inside
/// a cpu1 row's one-thread limit it took the first row about a minute on the GPU machine's host.
double boltzmann_log_z() {
  static const double log_z = boltzmann().host_model().exact_log_z(0);
  return log_z;
}

void temper_benchmark(benchmark::State& state, TemperMethod method, Device device, int threads) {
  const std::int64_t chains = state.range(0);
  if (device == Device::cuda && !cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  const double log_z = boltzmann_log_z();
  ThreadLimit limit(device == Device::cpu ? threads : 0);
  auto& data = boltzmann();
  const auto target = device == Device::cuda ? data.device_model() : data.host_model();
  TemperConfig config;
  config.method = method;
  config.chains = chains;
  config.warmup = 0;
  config.draws = kDraws;
  config.log_zeta = log_z;
  const TemperingSetup setup = make_tempering_setup(target, config);
  std::unique_ptr<TemperingBackend> backend;
  try {
    backend = make_tempering_backend(target, setup, device);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  backend->start();
  backend->run(0, kChunk);  // untimed: first-launch costs stay out
  int done = kChunk;
  Clock::duration timed{};  // the same calls as the benchmark's timer, for vs_one_core
  for (auto _ : state) {
    if (done + kChunk > kDraws) {
      state.PauseTiming();
      backend->start();
      done = 0;
      state.ResumeTiming();
    }
    const auto begin = Clock::now();
    const IterationStats stats = backend->run(done, kChunk);
    timed += Clock::now() - begin;
    benchmark::DoNotOptimize(stats.accepted);
    done += kChunk;
  }
  const double work = static_cast<double>(chains) * kChunk;
  const double seconds = std::chrono::duration<double>(timed).count();
  const std::string workload = std::string("BM_temper/") + kTarget + "/" + to_string(method);
  if (seconds > 0) {
    const double rate = work * static_cast<double>(state.iterations()) / seconds;
    if (device == Device::cpu && threads == 1) record_one_core(workload, rate);
    if (device == Device::cuda) report_vs_one_core(state, workload, rate);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(work) * state.iterations());
  state.counters["chain_iterations_per_second"] =
      benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate);
  const int dim = data.host_model().dim();
  const Roofline roofline = tempering_roofline(boltzmann_relaxation_gradient_cost(kUnits, dim), dim,
                                               sizeof(double), config.leapfrog_steps);
  state.counters["bytes_per_ci"] = roofline.bytes;
  state.counters["flops_per_ci"] = roofline.flops;
  if (device == Device::cuda) {
    const std::optional<DevicePeak> peak = cuda_device_peak();
    if (peak && peak->fp64_flops > 0) {
      state.counters["roofline_fraction"] = benchmark::Counter(
          work * roofline.flops / peak->attainable_flops(roofline, sizeof(double)),
          benchmark::Counter::kIsIterationInvariantRate);
    }
  }
  state.SetLabel(backend->device_name());
}

void register_method(TemperMethod method) {
  struct Row {
    const char* device_name;
    Device device;
    int threads;
    std::int64_t min_chains, max_chains;
  };
  // cpu1 first: the CUDA rows' vs_one_core reads its figure.
  for (const Row& row : {Row{"cpu1", Device::cpu, 1, 64, 64}, Row{"cpu", Device::cpu, 0, 64, 256},
                         Row{"cuda", Device::cuda, 0, 1024, 131072}}) {
    const std::string name =
        std::string("BM_temper/") + kTarget + "/" + to_string(method) + "/" + row.device_name;
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
      temper_benchmark(state, method, row.device, row.threads);
    });
    b->ArgName("chains")->UseRealTime()->Unit(benchmark::kMillisecond);
    for (std::int64_t c = row.min_chains; c <= row.max_chains; c *= 4) b->Arg(c);
  }
}

const bool registered = [] {
  for (TemperMethod method :
       {TemperMethod::gibbs_ct, TemperMethod::ct_hmc, TemperMethod::simulated_tempering})
    register_method(method);
  return true;
}();

}  // namespace
}  // namespace myriad::bench
