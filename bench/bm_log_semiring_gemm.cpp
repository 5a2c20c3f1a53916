// BM_log_semiring_gemm/<path>/<shape>/<args>: one GEMM-shaped log-sum-product step of MP IS
// (mpis.md §3.4) on each path — cpu_generic (the generic element in the CPU policy's OpenMP
// loop), cuda_generic (one output per thread), cuda_tiled (kernels/log_semiring_gemm.cuh) and
// cuda_cublas (max-shift on cublasDgemmStridedBatched, kernels/log_semiring_gemm_cublas.cuh) —
// through run_log_sum_product, as the engine calls it. Shapes:
//   chain        a timeseries tree level as chain_forward builds it: cur[run, t, lag, chain],
//                C[p, c] = LSE_m A[p, m] + B[m, c] over strided slices of t, batch = runs × 32
//                pairs; k = K (M = N = K), batch ∈ {64, 4096};
//   chimpanzees  the block plate's ℓ[plate, k_ab, k_sb] + λ[plate, k_alpha, k_bp, k_bpc, k_a,
//                k_ab] eliminating k_ab: M = K, N = K⁴, 42 plate cells.
// Items: LSE terms (outputs × reduction extent). CUDA rows are timed with CUDA events around
// the call (UseManualTime); the cublas path's call includes allocating and freeing its scratch.
// CPU rows run only up to 2^25 terms (two shared cores); CUDA rows skip with an error without a
// device. Inputs: splitmix64-hashed values uniform in [−10, 10], no −inf.
//
// Roofline (per step, counters bytes and flops; roofline_fraction where a device is known):
//   bytes  compulsory traffic: every input and output element once, 8 bytes each (the cublas
//          path moves 2K(M + N) + 2MN more per batch through its scratch, not counted);
//   flops  generic and tiled: per term A + B for the maximum, A + B − max, exp, + sum: 5, the
//          exp counted as one (it is ~20 FP64 instructions, so these paths' practical ceiling is
//          nearer a tenth of the FP64 peak); cublas: 2 per term (one FMA) plus 2K(M + N) for the
//          packing and 4MN for the epilogue per batch — on the FP64 tensor cores, whose peak is
//          twice the vector FP64 peak used for the fraction, so it may exceed 1.
// Host-compiled (so the CPU rows get OpenMP); the CUDA rows reach the device through
// bench/bm_log_semiring_gemm_cuda.cu, built only with CUDA. In a build without CUDA they are not
// registered.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/log_sum_product_steps.hpp"
#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/log_semiring_gemm.hpp"
#include "roofline.hpp"

namespace myriad::bench {

#if defined(MYRIAD_HAS_CUDA)
// bench/bm_log_semiring_gemm_cuda.cu
void fill_hashed_log_values_on_device(double* data, std::int64_t n, std::uint64_t seed);
double time_log_sum_product_on_device(const LogSumProductStep& step, ContractionPath path);
#endif

namespace {

/// A value uniform in [−10, 10] for element i (splitmix64 of seed + i·golden ratio), as
/// bm_log_semiring_gemm_cuda.cu computes on the device.
double hashed_log_value(std::int64_t i, std::uint64_t seed) {
  std::uint64_t z = seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return -10.0 + 20.0 * static_cast<double>(z >> 11) * 0x1p-53;
}

/// A step's tensors, its inputs as views of them, and its output.
struct Geometry {
  std::vector<std::vector<int>> vars;
  std::vector<std::vector<std::int64_t>> extents;
  std::function<std::vector<LogTensorView>(const std::vector<LogTensorView>&)> inputs;
  std::vector<int> eliminate;
  std::vector<int> out_vars;
  std::vector<std::int64_t> out_extents;
};

Geometry chain_geometry(std::int64_t k, std::int64_t batch) {
  const int run = 0, t = 20, lag = 1, chain = 2, scratch = 9;
  const std::int64_t pairs = 32, runs = batch / pairs;
  Geometry g;
  g.vars = {{run, t, lag, chain}};
  g.extents = {{runs, 2 * pairs, k, k}};
  g.inputs = [=](const std::vector<LogTensorView>& v) {
    return std::vector<LogTensorView>{v[0].slice(t, 0, 2, pairs).renamed(chain, scratch),
                                      v[0].slice(t, 1, 2, pairs).renamed(lag, scratch)};
  };
  g.eliminate = {scratch};
  g.out_vars = {run, t, lag, chain};
  g.out_extents = {runs, pairs, k, k};
  return g;
}

Geometry chimpanzees_geometry(std::int64_t k) {
  const int plate = 20, k_ab = 10, k_sb = 5, k_alpha = 1, k_bp = 2, k_bpc = 3, k_a = 4;
  Geometry g;
  g.vars = {{plate, k_ab, k_sb}, {plate, k_alpha, k_bp, k_bpc, k_a, k_ab}};
  g.extents = {{42, k, k}, {42, k, k, k, k, k}};
  g.inputs = [](const std::vector<LogTensorView>& v) { return v; };
  g.eliminate = {k_ab};
  g.out_vars = {plate, k_sb, k_alpha, k_bp, k_bpc, k_a};
  g.out_extents = {42, k, k, k, k, k};
  return g;
}

std::int64_t size_of(const std::vector<std::int64_t>& extents) {
  std::int64_t n = 1;
  for (std::int64_t e : extents) n *= e;
  return n;
}

/// The step over tensors at `data` writing into a contiguous output at `out`.
LogSumProductStep make_step(const Geometry& g, const std::vector<double*>& data, double* out) {
  std::vector<LogTensorView> views;
  for (std::size_t j = 0; j < g.vars.size(); ++j)
    views.push_back({data[j], g.vars[j], g.extents[j], row_major_strides(g.extents[j])});
  return testing::contiguous_log_sum_product_step(
      plan_log_sum_product(g.inputs(views), g.eliminate, &g.out_vars), out);
}

struct StepCost {
  double terms = 0, bytes = 0, flops = 0;
};

StepCost cost_of(const Geometry& g, const LogSumProductStep& step, ContractionPath path) {
  StepCost c;
  c.terms = static_cast<double>(step.out_size) * static_cast<double>(step.element.elim_size);
  double elements = static_cast<double>(size_of(g.out_extents));
  for (const auto& e : g.extents) elements += static_cast<double>(size_of(e));
  c.bytes = 8.0 * elements;
  c.flops = 5.0 * c.terms;
  if (path == ContractionPath::cublas) {
    const LogSemiringGemm gemm = *as_log_semiring_gemm(step);
    const double m = static_cast<double>(gemm.m()), n = static_cast<double>(gemm.n()),
                 k = static_cast<double>(gemm.k()), batches = static_cast<double>(gemm.batches());
    c.flops = 2.0 * c.terms + batches * (2.0 * k * (m + n) + 4.0 * m * n);
  }
  return c;
}

void report(benchmark::State& state, const StepCost& cost, bool device) {
  const auto iterations = static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(iterations * cost.terms));
  state.counters["bytes"] = cost.bytes;
  state.counters["flops"] = cost.flops;
  state.counters["bytes_per_second"] =
      benchmark::Counter(iterations * cost.bytes, benchmark::Counter::kIsRate);
  if (!device) return;
  if (const std::optional<DevicePeak> peak = cuda_device_peak(); peak && peak->fp64_flops > 0) {
    const Roofline roofline{cost.bytes, cost.flops};
    state.counters["roofline_fraction"] = benchmark::Counter(
        iterations * cost.flops / peak->attainable_flops(roofline, 8), benchmark::Counter::kIsRate);
    state.SetLabel(peak->name);
  }
}

void cpu_benchmark(benchmark::State& state, const Geometry& g) {
  std::vector<std::vector<double>> tensors;
  std::vector<double*> data;
  for (const auto& e : g.extents) {
    tensors.emplace_back(static_cast<std::size_t>(size_of(e)));
    data.push_back(tensors.back().data());
  }
  for (std::size_t j = 0; j < tensors.size(); ++j)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(tensors[j].size()); ++i)
      tensors[j][static_cast<std::size_t>(i)] = hashed_log_value(i, 1 + j);
  std::vector<double> out(static_cast<std::size_t>(size_of(g.out_extents)));
  const LogSumProductStep step = make_step(g, data, out.data());
  const CpuParallel parallel;
  for (auto _ : state) {
    run_log_sum_product(parallel, step);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, cost_of(g, step, ContractionPath::generic), false);
}

#if defined(MYRIAD_HAS_CUDA)
void cuda_benchmark(benchmark::State& state, const Geometry& g, ContractionPath path) {
  if (!cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  std::vector<DeviceArray<double>> tensors;
  std::vector<double*> data;
  for (std::size_t j = 0; j < g.extents.size(); ++j) {
    const std::int64_t n = size_of(g.extents[j]);
    tensors.emplace_back(static_cast<std::size_t>(n));
    data.push_back(tensors.back().data());
    fill_hashed_log_values_on_device(data.back(), n, 1 + j);
  }
  DeviceArray<double> out(static_cast<std::size_t>(size_of(g.out_extents)));
  const LogSumProductStep step = make_step(g, data, out.data());
  time_log_sum_product_on_device(step, path);  // warm-up: module load, cuBLAS handle
  for (auto _ : state) state.SetIterationTime(time_log_sum_product_on_device(step, path));
  report(state, cost_of(g, step, path), true);
}
#endif

/// Terms above which the CPU rows are not registered (minutes per row on two shared cores).
constexpr double kCpuMaxTerms = 1 << 25;

#if defined(MYRIAD_HAS_CUDA)
const std::pair<const char*, ContractionPath> cuda_paths[] = {
    {"cuda_generic", ContractionPath::generic},
    {"cuda_tiled", ContractionPath::tiled},
    {"cuda_cublas", ContractionPath::cublas}};
#endif

/// BM_log_semiring_gemm/<path><shape> for the CPU (when `terms` is at most kCpuMaxTerms) and
/// every CUDA path, each row building its geometry with make_geometry().
template <class MakeGeometry>
void register_shape(const std::string& shape, double terms, MakeGeometry make_geometry) {
  if (terms <= kCpuMaxTerms)
    benchmark::RegisterBenchmark(("BM_log_semiring_gemm/cpu_generic" + shape).c_str(),
                                 [=](benchmark::State& s) { cpu_benchmark(s, make_geometry()); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
#if defined(MYRIAD_HAS_CUDA)
  for (const auto& entry : cuda_paths) {
    const ContractionPath path = entry.second;
    benchmark::RegisterBenchmark(
        ("BM_log_semiring_gemm/" + std::string(entry.first) + shape).c_str(),
        [=](benchmark::State& s) { cuda_benchmark(s, make_geometry(), path); })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  }
#endif
}

void register_benchmarks() {
  for (std::int64_t k : {16, 64, 256})
    for (std::int64_t batch : {64, 4096})
      register_shape("/chain/k:" + std::to_string(k) + "/batch:" + std::to_string(batch),
                     static_cast<double>(batch) * static_cast<double>(k * k * k),
                     [=] { return chain_geometry(k, batch); });
  for (std::int64_t k : {8, 16, 20})
    register_shape("/chimpanzees/k:" + std::to_string(k),
                   42.0 * static_cast<double>(k * k * k * k * k * k),
                   [=] { return chimpanzees_geometry(k); });
}

[[maybe_unused]] const int registered = (register_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
