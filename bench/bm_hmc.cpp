// BM_hmc/<model>/<device>/chains:N — many-chain HMC through the backend interface
// (backend/hmc_backend.hpp), as the scheduler drives it: one benchmark iteration is one call of
// HmcBackend::run advancing every chain by kIterationsPerCall = 20 HMC iterations of L = 8
// leapfrog steps without jitter, nothing recorded — the work of one timed call of the NumPyro
// peer (bench/peers/numpyro_hmc.py: 20 iterations in one jitted loop), so that the two are timed
// alike. Items: gradient evaluations, as the backend counts them (a trajectory cut short by a
// non-finite density counts only the steps it took).
//
// Timing: wall-clock (UseRealTime). HmcBackend::run returns the call's statistics, which needs
// the device's reduction to finish, so on CUDA the wall time covers the kernels and the launch
// and synchronisation overhead of one call; device work is not isolated with events here (a
// host-compiled benchmark cannot reach the streams). With one iteration per call (before
// 2026-11-26) that overhead dominated at 4096 chains on an H100 (0.64 ms per call).
// CPU: 2^10–2^14 chains; CUDA: 2^10–2^20, skipped with an error when no device is present.
// "cpu" is the CPU backend as it runs by default, chains in SIMD lanes where the model allows
// (detail/hmc_lane_blocks.hpp; the label names the instruction set and width); "cpu_scalar" the
// same backend one chain at a time.
//
// Counters: bytes_per_grad and flops_per_grad (roofline.hpp); on CUDA also roofline_fraction,
// achieved FLOP rate over min(peak FLOPs, intensity × peak bandwidth) of the device.
// Models: the CLI's defaults; gaussian also in float ("gaussian_f32") for the precision
// comparison, and at issue 23's setting ("gaussian50_L16": D = 50, ε = 0.45, 16 steps).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin.hpp"
#include "roofline.hpp"

namespace myriad::bench {
namespace {

constexpr int kLeapfrogSteps = 8;
constexpr int kIterationsPerCall = 20;

/// The backend for a model on `device` (on the CPU in SIMD lanes or not), or null with the
/// reason in `why`; `label` names the CPU backend's lanes.
template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_backend(const Model& model, std::int64_t chains, Device device,
                                            bool simd_lanes, std::string& why, std::string& label) {
  if (device == Device::cpu) {
    auto cpu = std::make_unique<CpuHmcBackend<Model, T>>(model, chains, simd_lanes);
    label = std::string(cpu->lane_isa()) + " x" + std::to_string(cpu->lane_width());
    return cpu;
  }
  if (!cuda_device_available()) {
    why = "no CUDA device: CUDA benchmarks skipped";
    return nullptr;
  }
  try {
    return make_cuda_hmc_backend<Model, T>(model, chains);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

template <class T, class MakeModel>
void hmc_benchmark(benchmark::State& state, Device device, bool simd_lanes, MakeModel make_model,
                   T step_size, const GradientCost& cost, int leapfrog_steps = kLeapfrogSteps) {
  const std::int64_t chains = state.range(0);
  if (device == Device::cuda && !cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  const auto model = make_model(device);
  std::string why, label;
  auto backend =
      make_backend<std::decay_t<decltype(model)>, T>(model, chains, device, simd_lanes, why, label);
  if (!backend) {
    state.SkipWithError(why.c_str());
    return;
  }
  if (backend->initialize(1, T(2), 100, 1) != 0) {
    state.SkipWithError("some chains found no finite initial point");
    return;
  }
  HmcSettings<T> settings;
  settings.seed = 1;
  settings.step_size = step_size;
  settings.max_leapfrog_steps = leapfrog_steps;
  settings.jitter = T(0);
  // Two untimed iterations: first-launch costs (module load, occupancy queries) stay out.
  backend->run(settings, 0, 2, nullptr, 0, 0, nullptr);

  std::uint32_t iteration = 2;
  IterationStats total;
  for (auto _ : state) {
    total += backend->run(settings, iteration, kIterationsPerCall, nullptr, 0, 0, nullptr);
    iteration += kIterationsPerCall;
  }
  state.SetItemsProcessed(total.gradient_evaluations);
  const Roofline roofline = hmc_roofline(cost, backend->dim(), sizeof(T), leapfrog_steps);
  state.counters["bytes_per_grad"] = roofline.bytes;
  state.counters["flops_per_grad"] = roofline.flops;
  state.counters["accept_rate"] = total.mean_accept_prob();
  if (device == Device::cuda) {
    const std::optional<DevicePeak> peak = cuda_device_peak();
    if (peak && peak->fp64_flops > 0) {
      // A rate counter is divided by the elapsed time: FLOPs done / attainable FLOP rate / s.
      state.counters["roofline_fraction"] =
          benchmark::Counter(static_cast<double>(total.gradient_evaluations) * roofline.flops /
                                 peak->attainable_flops(roofline, sizeof(T)),
                             benchmark::Counter::kIsRate);
    }
    state.SetLabel(backend->device_name());
  } else {
    state.SetLabel(label);
  }
}

void register_hmc_benchmarks() {
  static auto logistic_data = models::LogisticData<double>::synthetic(1000, 10, 1);
  struct Path {
    const char* name;
    Device device;
    bool simd_lanes;
  };
  for (const Path path : {Path{"cpu", Device::cpu, true}, Path{"cpu_scalar", Device::cpu, false},
                          Path{"cuda", Device::cuda, true}}) {
    const std::string where = std::string("/") + path.name;
    const Device device = path.device;
    const bool lanes = path.simd_lanes;
    // BM_hmc/<model>/<path>: the model made for the device by make_model, stepped in the
    // precision of step_size.
    const auto add_row = [&](const char* model, auto make_model, auto step_size,
                             const GradientCost& cost, int leapfrog_steps = kLeapfrogSteps) {
      using T = decltype(step_size);
      auto* b = benchmark::RegisterBenchmark(
          (std::string("BM_hmc/") + model + where).c_str(), [=](benchmark::State& s) {
            hmc_benchmark<T>(s, device, lanes, make_model, step_size, cost, leapfrog_steps);
          });
      b->ArgName("chains")->RangeMultiplier(4)->UseRealTime();
      if (device == Device::cpu) {
        b->Range(1 << 10, 1 << 14);
      } else {
        b->Range(1 << 10, 1 << 20);
      }
    };
    add_row(
        "gaussian", [](Device) { return models::Gaussian<double>::make(100, 0.5); }, 0.1,
        gaussian_gradient_cost(100));
    // Issue 23's setting: D = 50, ρ = 0.5, ε = 0.45, 16 leapfrog steps (BlackJAX's side:
    // bench/peers/blackjax_hmc.py --gaussian-dim 50 --step-size 0.45 --steps 16).
    add_row(
        "gaussian50_L16", [](Device) { return models::Gaussian<double>::make(50, 0.5); }, 0.45,
        gaussian_gradient_cost(50), 16);
    add_row(
        "gaussian_f32", [](Device) { return models::Gaussian<float>::make(100, 0.5); }, 0.1f,
        gaussian_gradient_cost(100));
    add_row(
        "logistic",
        [](Device d) {
          return d == Device::cuda ? logistic_data.device_model(10.0)
                                   : logistic_data.host_model(10.0);
        },
        0.02, logistic_gradient_cost(1000, 10));
    add_row(
        "eight_schools", [](Device) { return models::EightSchools<double>::make(); }, 0.2,
        eight_schools_gradient_cost());
    add_row(
        "funnel", [](Device) { return models::Funnel<double>::make(10); }, 0.1,
        funnel_gradient_cost(10));
  }
}

[[maybe_unused]] const int registered = (register_hmc_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
