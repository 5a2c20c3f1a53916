// BM_gradient/<model>/chains:N — gradient evaluations per second on the CPU, in the CPU
// backend's layout and loop (backend/cpu_hmc_backend.hpp): ensembles stored [chain][dim] (each
// chain's vector contiguous), an OpenMP loop over chains calling log_density_and_gradient on
// ChainVector views. Wall-clock time
// (UseRealTime), since the work is spread over OpenMP threads. Items: gradient evaluations.
// Counters: bytes_per_grad and flops_per_grad from roofline.hpp (no peak: a CPU's is not read).
//
// BM_gradient_by_duals/<model>/<mode>/chains:N — the same loop over the model as a user without
// a gradient writes it (log_density only), differentiated by forward-mode duals: `scalar`, one
// pass per dimension (dual_chunk = 1), against `vector`, the default of
// log_density_and_gradient (model/autodiff.hpp: ⌈D/8⌉ vector-mode passes).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/density_only.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/builtin.hpp"
#include "roofline.hpp"

namespace myriad::bench {
namespace {

template <class Model, class T = double>
void gradient_benchmark(benchmark::State& state, const Model& model, const GradientCost& cost) {
  const std::int64_t chains = state.range(0);
  const int dim = model.dim();
  const auto size = static_cast<std::size_t>(dim) * static_cast<std::size_t>(chains);
  std::vector<T> position(size), gradient(size), log_density(static_cast<std::size_t>(chains));
  const EnsembleView<T> x{position.data(), chains, dim, 1, dim};
  const EnsembleView<T> g{gradient.data(), chains, dim, 1, dim};
  // Points as the backend draws initial points: uniform in [−2, 2]^D.
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chains; ++c) {
    const RandomStream rng(1, static_cast<std::uint64_t>(c));
    for (int i = 0; i < dim; ++i)
      x(i, c) = T(2) * (T(2) * rng.uniform<T>(0, Purpose::initial_point, i) - T(1));
  }
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chains; ++c) {
      const ChainVector<T> point = x.chain(c);
      ChainVector<T> grad = g.chain(c);
      log_density[c] = log_density_and_gradient(model, point, grad);
    }
    benchmark::DoNotOptimize(log_density.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * chains);
  const Roofline roofline = gradient_roofline(cost, dim, sizeof(T));
  state.counters["bytes_per_grad"] = roofline.bytes;
  state.counters["flops_per_grad"] = roofline.flops;
}

/// A model with its log density only, as a user writes one, differentiated one tangent per pass.
template <class Model>
struct ScalarDualGradient : testing::DensityOnly<Model> {
  static constexpr int dual_chunk = 1;
};

/// The same with the default: vector-mode passes.
template <class Model>
using VectorDualGradient = testing::DensityOnly<Model>;

void register_gradient_benchmarks() {
  // The CLI's default workloads (src/app/registry.cpp), in double.
  static auto logistic_data = models::LogisticData<double>::synthetic(1000, 10, 1);
  const auto configure = [](benchmark::internal::Benchmark* b) {
    b->ArgName("chains")->RangeMultiplier(4)->Range(1 << 10, 1 << 14)->UseRealTime();
  };
  configure(benchmark::RegisterBenchmark("BM_gradient/gaussian", [](benchmark::State& s) {
    gradient_benchmark(s, models::Gaussian<double>::make(100, 0.5), gaussian_gradient_cost(100));
  }));
  configure(benchmark::RegisterBenchmark("BM_gradient/logistic", [](benchmark::State& s) {
    gradient_benchmark(s, logistic_data.host_model(10.0), logistic_gradient_cost(1000, 10));
  }));
  configure(benchmark::RegisterBenchmark("BM_gradient/eight_schools", [](benchmark::State& s) {
    gradient_benchmark(s, models::EightSchools<double>::make(), eight_schools_gradient_cost());
  }));
  configure(benchmark::RegisterBenchmark("BM_gradient/funnel", [](benchmark::State& s) {
    gradient_benchmark(s, models::Funnel<double>::make(10), funnel_gradient_cost(10));
  }));

  // Forward-mode duals on the same models (their own gradients hidden). The roofline counters
  // are those of the analytic gradient: the duals' extra work is what the comparison measures.
  const auto one_size = [](benchmark::internal::Benchmark* b) {
    b->ArgName("chains")->Arg(1 << 12)->UseRealTime();
  };
  one_size(benchmark::RegisterBenchmark(
      "BM_gradient_by_duals/eight_schools/scalar", [](benchmark::State& s) {
        gradient_benchmark(
            s,
            ScalarDualGradient<models::EightSchools<double>>{models::EightSchools<double>::make()},
            eight_schools_gradient_cost());
      }));
  one_size(benchmark::RegisterBenchmark(
      "BM_gradient_by_duals/eight_schools/vector", [](benchmark::State& s) {
        gradient_benchmark(
            s,
            VectorDualGradient<models::EightSchools<double>>{models::EightSchools<double>::make()},
            eight_schools_gradient_cost());
      }));
  one_size(
      benchmark::RegisterBenchmark("BM_gradient_by_duals/logistic/scalar", [](benchmark::State& s) {
        gradient_benchmark(
            s, ScalarDualGradient<models::Logistic<double>>{logistic_data.host_model(10.0)},
            logistic_gradient_cost(1000, 10));
      }));
  one_size(
      benchmark::RegisterBenchmark("BM_gradient_by_duals/logistic/vector", [](benchmark::State& s) {
        gradient_benchmark(
            s, VectorDualGradient<models::Logistic<double>>{logistic_data.host_model(10.0)},
            logistic_gradient_cost(1000, 10));
      }));
}

[[maybe_unused]] const int registered = (register_gradient_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
