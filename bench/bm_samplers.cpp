// BM_sampler/diamonds/<sampler>/<metric>/chains:N — one whole run of myriad::sample (Stan's
// default starts, 200 warm-up + 200 draws, seed 1, CPU) on posteriordb's diamonds posterior
// (26 dimensions, N = 5000; tests/common/posteriordb_diamonds.hpp), for each HMC sampler and
// metric: the efficiency figures of bench/results/adaptive-samplers-cpu.md for the target the CLI
// cannot yet load (bench/adaptive_samplers.sh runs the others through the CLI). Manual time:
// warm-up + sampling seconds. Counters: min bulk ESS over the recorded quantities, per 1000
// gradient evaluations and per second, the largest R-hat, sampling-phase divergences and the
// gradient evaluations. One iteration each: a run is the unit.
//
// The data: $MYRIAD_POSTERIORDB_DIR/diamonds-diamonds/data.json, else the source tree's
// tests/data/posteriordb (the path compiled in).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/posteriordb_diamonds.hpp"
#include "myriad/run/sample.hpp"

namespace myriad::bench {
namespace {

std::string diamonds_data_path() {
  const char* dir = std::getenv("MYRIAD_POSTERIORDB_DIR");
  const std::string root = dir != nullptr ? dir : MYRIAD_SOURCE_DIR "/tests/data/posteriordb";
  return root + "/diamonds-diamonds/data.json";
}

void sampler_benchmark(benchmark::State& state, HmcSampler sampler, MetricKind metric) {
  static const auto data = testing::diamonds_regression<double>(diamonds_data_path());
  SampleConfig config;
  config.chains = state.range(0);
  config.warmup = 200;
  config.draws = 200;
  config.seed = 1;
  config.device = Device::cpu;
  config.sampler = sampler;
  config.metric = metric;
  SampleResult result;
  for (auto _ : state) {
    result = sample(data.host_model(), config);
    state.SetIterationTime(result.warmup_seconds + result.sampling_seconds);
  }
  double min_ess = std::numeric_limits<double>::infinity(), max_rhat = 0;
  for (const auto& row : result.summary) {
    min_ess = std::min(min_ess, row.ess_bulk);
    max_rhat = std::max(max_rhat, row.rhat);
  }
  const double gradients = double(result.warmup_stats.gradient_evaluations +
                                  result.sampling_stats.gradient_evaluations);
  const double seconds = result.warmup_seconds + result.sampling_seconds;
  state.counters["min_ess_bulk"] = min_ess;
  state.counters["ess_per_1000_gradients"] = 1000 * min_ess / gradients;
  state.counters["ess_per_second"] = min_ess / seconds;
  state.counters["max_rhat"] = max_rhat;
  state.counters["divergent"] = double(result.sampling_stats.divergent);
  state.counters["gradients"] = gradients;
  state.counters["step_size"] = result.step_size;
}

void register_sampler_benchmarks() {
  const struct {
    HmcSampler sampler;
    MetricKind metric;
  } runs[] = {{HmcSampler::hmc, MetricKind::diag},    {HmcSampler::hmc, MetricKind::dense},
              {HmcSampler::chees, MetricKind::diag},  {HmcSampler::chees, MetricKind::dense},
              {HmcSampler::snaper, MetricKind::diag}, {HmcSampler::nuts, MetricKind::diag},
              {HmcSampler::nuts, MetricKind::dense}};
  for (const auto& run : runs) {
    const std::string name = std::string("BM_sampler/diamonds/") + to_string(run.sampler) + "/" +
                             to_string(run.metric);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [run](benchmark::State& s) {
                                   sampler_benchmark(s, run.sampler, run.metric);
                                 })
        ->ArgName("chains")
        ->Arg(64)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kSecond);
  }
}

[[maybe_unused]] const int registered = (register_sampler_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
