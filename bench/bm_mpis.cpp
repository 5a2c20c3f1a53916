// Massively parallel importance sampling of the built-in plated models (mpis.md §9): time and
// memory against K, CPU and CUDA, through the backend interface as the scheduler drives it.
//
// <device>: cpu (contraction steps in SIMD lanes of output elements, detail/
// log_sum_product_lane_kernel.hpp; the label names the instruction set), cpu_scalar (one output
// element at a time) or cuda.
//
// BM_mpis/<model>/<device>/k:K          one estimate of log P(x) per iteration: particles,
//                                       log-factors and the contraction (the paper's "ELBO"
//                                       time, mpis.md §9.3), one run.
// BM_mpis_posterior/<model>/<device>/k:K the same plus the backward pass (marginals) and 100
//                                       exact posterior draws (the paper's predictive time).
// Items: LSE terms of the plan's forward pass (MpisPlan::forward_terms). Counters:
//   seconds_per_run   wall time of one estimate;
//   peak_bytes        the largest memory the engine held (measured);
//   estimated_bytes   the plan's estimate for that run (what batching and --memory-limit use);
//   log_p             the estimate (one run; a sanity check, not a result);
//   gterms_per_second LSE terms per second / 10⁹;
//   reference_a100_seconds, vs_reference  where the reference implementation ran this model at
//                     this K: its seconds per run on an 80 GB A100 (mpis_reference_times.hpp) and
//                     its time over this row's (> 1: this row is faster).
// Roofline: an LSE term is compute-bound: one exp and about four additions or comparisons over
// the max and sum passes, reading operands that the previous term left in cache; the fraction of
// peak is not reported for the CPU, and on CUDA it is reported against FP64 peak with 5 FLOPs per
// term (exp counted as one).
//
// BM_mpis_largest_k/<model>: no timing; the largest K whose plan fits an 80 GB device
// (forward tensors plus index sampling, double, one run; mpis.md §3.3), whole and with its
// largest top-level plate in chunks, to set beside the K the reference implementation reached
// on an 80 GB A100 (reference_k); with a GPU also largest_k_this_card, whole, within the default
// budget of `myriad mpis` on this card (80% of its free memory, this_card_budget_bytes).

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "mpis_reference_times.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/backend/mpis_backend.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/models/builtin_plated.hpp"
#include "myriad/run/mpis_config.hpp"
#include "roofline.hpp"

namespace myriad::bench {
namespace {

constexpr double kEightyGigabytes = 80e9;
constexpr double kFlopsPerTerm = 5.0;

template <class Data>
void mpis_benchmark(benchmark::State& state, const std::string& model_name, Data& data,
                    Device device, bool simd_lanes, bool posterior) {
  const std::int64_t k = state.range(0);
  if (device == Device::cuda && !cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  const auto model = device == Device::cuda ? data.device_model() : data.host_model();
  const PlatedStructure s = model.structure();
  MpisPlan plan;
  try {
    plan = plan_mpis(s, k, 1);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto make = [&](std::int64_t run) {
    MpisEngineOptions options;
    options.seed = 7;
    options.first_run = run;
    return device == Device::cuda ? make_cuda_mpis_backend(model, s, plan, options)
                                  : make_cpu_mpis_backend(model, s, plan, options, simd_lanes);
  };
  double log_p = 0;
  std::int64_t peak = 0, run = 0;
  std::string device_name;
  // Each iteration is a new engine, as each batch of `myriad mpis` is; the pool keeps what one
  // frees for the next (as run/mpis.hpp does for the batches), so the rows time the estimate,
  // not fresh device memory.
  const std::shared_ptr<void> pool_hold =
      device == Device::cuda ? hold_device_memory_pool() : nullptr;
  const auto begin = std::chrono::steady_clock::now();
  for (auto _ : state) {
    // A K too large for the device fails in forward() (its tensors are allocated there): the row
    // reports the error instead of ending the whole benchmark run.
    try {
      std::unique_ptr<MpisBackend> backend = make(run++);
      backend->forward();
      log_p = backend->log_marginal()[0];
      if (posterior) {
        backend->backward();
        for (int g = 0; g < s.latent_count(); ++g)
          benchmark::DoNotOptimize(backend->log_marginal_weights(g));
        backend->sample_indices(100);
        benchmark::DoNotOptimize(backend->sampled_indices(0));
      }
      peak = backend->peak_bytes();
      device_name = backend->device();
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
  if (state.error_occurred()) return;
  const double seconds_per_run =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() /
      static_cast<double>(state.iterations());
  if (const auto reference = mpis_reference_seconds(model_name, k, posterior)) {
    state.counters["reference_a100_seconds"] = *reference;
    state.counters["vs_reference"] = *reference / seconds_per_run;
  }
  const double terms = plan.forward_terms();
  state.SetItemsProcessed(static_cast<std::int64_t>(terms) * state.iterations());
  state.counters["seconds_per_run"] = benchmark::Counter(
      1.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["gterms_per_second"] =
      benchmark::Counter(terms / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_bytes"] = static_cast<double>(peak);
  MpisConfig config;
  config.k = k;
  config.moments = posterior;
  config.samples = posterior ? 100 : 0;
  state.counters["estimated_bytes"] = estimate_mpis_bytes(plan, s, config);
  state.counters["log_p"] = log_p;
  if (device == Device::cuda) {
    if (const auto peak_rate = cuda_device_peak(); peak_rate && peak_rate->fp64_flops > 0)
      state.counters["fraction_of_fp64_peak"] =
          benchmark::Counter(terms * kFlopsPerTerm / peak_rate->fp64_flops,
                             benchmark::Counter::kIsIterationInvariantRate);
  }
  state.SetLabel(device_name);
}

template <class Make>
void register_model(const std::string& model, Make make_data,
                    std::initializer_list<std::int64_t> cpu_k,
                    std::initializer_list<std::int64_t> cuda_k) {
  struct Path {
    const char* name;
    Device device;
    bool simd_lanes;
  };
  for (bool posterior : {false, true}) {
    for (const Path path : {Path{"cpu", Device::cpu, true}, Path{"cpu_scalar", Device::cpu, false},
                            Path{"cuda", Device::cuda, true}}) {
      const std::string name =
          std::string(posterior ? "BM_mpis_posterior/" : "BM_mpis/") + model + "/" + path.name;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        auto data = make_data();
        mpis_benchmark(state, model, data, path.device, path.simd_lanes, posterior);
      });
      b->ArgName("k")->UseRealTime()->Unit(benchmark::kMillisecond);
      for (std::int64_t k : path.device == Device::cpu ? cpu_k : cuda_k) b->Arg(k);
    }
  }
}

/// Largest K whose one-run plan (forward tensors, particles and 100 draws' indices; the
/// scheduler's estimate_mpis_bytes), whole or with the scheduler's plate chunking, fits in
/// `bytes`: a bisection over K on the plan alone.
std::int64_t largest_k(const PlatedStructure& s, double bytes, bool chunk) {
  auto fits = [&](std::int64_t k) {
    try {
      MpisConfig config;
      config.k = k;
      config.moments = false;
      config.samples = 100;
      const MpisPlan plan = plan_mpis(s, k, 1);
      const MpisChunking chunking =
          chunk ? choose_mpis_chunking(plan, s, config, bytes) : MpisChunking{};
      return estimate_mpis_bytes(plan, s, config, chunking) <= bytes &&
             largest_tensor_elements(plan, chunking, s) <= static_cast<double>(kMaxLogTensorSize);
    } catch (const std::exception&) {
      return false;  // beyond the per-tensor element limit
    }
  };
  std::int64_t lo = 1, hi = 2;
  while (fits(hi) && hi < (1 << 20)) hi *= 2;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

template <class Make>
void register_largest_k(const std::string& model, Make make_data, int reference_k) {
  const std::string name = "BM_mpis_largest_k/" + model;
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    auto data = make_data();
    const PlatedStructure s = data.host_model().structure();
    // This card: the free memory now, with the scheduler's default budget (80% of it, as
    // `myriad mpis` takes without --memory-limit).
    const double card_bytes =
        cuda_device_available() ? 0.8 * static_cast<double>(available_memory_bytes(Device::cuda))
                                : 0.0;
    std::int64_t k = 0, chunked = 0, card = 0;
    for (auto _ : state) {
      k = largest_k(s, kEightyGigabytes, false);
      chunked = largest_k(s, kEightyGigabytes, true);
      if (card_bytes > 0) card = largest_k(s, card_bytes, false);
    }
    state.counters["largest_k_80GB"] = static_cast<double>(k);
    state.counters["largest_k_80GB_chunked"] = static_cast<double>(chunked);
    if (card_bytes > 0) {
      state.counters["largest_k_this_card"] = static_cast<double>(card);
      state.counters["this_card_budget_bytes"] = card_bytes;
    }
    if (reference_k > 0) state.counters["reference_k"] = reference_k;
  })->Iterations(1);
}

const bool registered = [] {
  using namespace models;
  auto hierarchical = [] { return HierarchicalGaussianData::synthetic(20, 5, 1, 1, 1, false, 1); };
  auto chain = [] { return GaussianChainData::synthetic(50, 0.9, 0.5, 0.5, 1, true, 1); };
  auto bus = [] { return BusBreakdownData::synthetic(1); };
  auto chimps = [] { return ChimpanzeesData::synthetic(1); };
  auto movielens = [] { return MovieLensData::synthetic(1); };
  auto occupancy = [] { return OccupancyData::synthetic(1); };
  register_model("hierarchical_gaussian", hierarchical, {30, 100, 300}, {100, 1000, 3000});
  register_model("gaussian_chain", chain, {10, 30, 100}, {30, 100, 300});
  register_model("bus_breakdown", bus, {5, 10, 20}, {15, 30, 45, 60, 100});
  register_model("chimpanzees", chimps, {3, 5, 8}, {10, 15, 20, 25, 30});
  register_model("movielens", movielens, {5, 10, 30}, {30, 60, 100, 150});
  register_model("occupancy", occupancy, {2, 3, 5}, {8, 10, 15, 20});
  register_largest_k("bus_breakdown", bus, 45);
  register_largest_k("chimpanzees", chimps, 20);
  register_largest_k("movielens", movielens, 100);
  register_largest_k("occupancy", occupancy, 15);
  register_largest_k("hierarchical_gaussian", hierarchical, 0);
  return true;
}();

}  // namespace
}  // namespace myriad::bench
