#pragma once
// The CUDA backend of the tempering samplers (backend/tempering_backend.hpp): the ensemble state
// in device memory, [coordinate][chain] with the chain stride rounded up to 32, one thread per
// chain (kernels/tempering_kernels.cuh); the sums and the β trace stay on the device until
// outputs() copies them back once.
//
// Device memory per chain: HMC's five state-sized vectors (x, and u for CT-HMC), the log
// density, β, the index, 2 (2 D + 1) sums (of the weights, x and x²), the dropped count, the
// statistics' counters, and `draws` values of the β trace (8 bytes each: the trace of 10^5 chains ×
// 2000 draws is 1.6 GB).
//
// The library instantiates make_cuda_tempering_backend for the built-in annealing targets that
// list library_backend::tempering (kernels/builtin_instances.cmake); for a target of your own,
// include this header (or myriad/run/temper.hpp) in a .cu file compiled by nvcc and call
// myriad::temper there, or instantiate
//
//   template std::unique_ptr<myriad::TemperingBackend>
//   myriad::make_cuda_tempering_backend<MyTarget>(const MyTarget&, const myriad::TemperingSetup&);

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_ensemble.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "myriad/backend/tempering_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/chain_statistics.hpp"
#include "reduction.cuh"
#include "tempering_kernels.cuh"

namespace myriad {

template <class Target>
class CudaTemperingBackend final : public TemperingBackend, cuda_detail::PassedToKernels<Target> {
 public:
  CudaTemperingBackend(const Target& target, TemperingSetup setup)
      : target_(target),
        setup_(std::move(setup)),
        chains_(checked_chains(setup_.chains)),
        stride_(cuda_detail::round_up(chains_, 32)),
        dim_(target.dim()),
        state_dim_(tempering_state_dim(setup_.method, dim_)),
        ensemble_(cuda_detail::current_device_or_throw()) {
    const auto count = [](std::int64_t n) { return static_cast<std::size_t>(n); };
    for (auto* array : {&position_, &gradient_, &proposal_, &momentum_, &proposal_gradient_})
      *array = DeviceArray<double>(count(state_dim_ * stride_));
    log_density_ = DeviceArray<double>(count(chains_));
    beta_ = DeviceArray<double>(count(chains_));
    index_ = DeviceArray<int>(count(chains_));
    weight_ = DeviceArray<double>(count(2 * chains_));
    weighted_ = DeviceArray<double>(count(4 * dim_ * chains_));  // 2 ends × 2 D quantities
    trace_ = DeviceArray<double>(count(chains_ * setup_.draws));
    dropped_ = DeviceArray<std::int64_t>(count(chains_));
    started_ = DeviceArray<std::uint8_t>(count(chains_));
    counters_ = DeviceArray<std::int64_t>(kernels::ChainStatisticsView::kCounters * count(chains_));
    inverse_metric_ = DeviceArray<double>(tempering_inverse_metric(setup_, dim_));
    if (!setup_.ladder.empty()) ladder_ = DeviceArray<double>(setup_.ladder);
    if (!setup_.base_mean.empty()) base_mean_ = DeviceArray<double>(setup_.base_mean);
    if (!setup_.base_scale.empty()) base_scale_ = DeviceArray<double>(setup_.base_scale);
    for (auto* array : {&position_, &gradient_, &proposal_, &momentum_, &proposal_gradient_,
                        &log_density_, &weight_, &weighted_, &trace_})
      ensemble_.zero(*array);
    ensemble_.zero(dropped_);
    start_grid_ = ensemble_.chain_grid(kernels::tempering_start_kernel<Target>, chains_);
    iterations_grid_ = with_tempering_method(setup_.method, [&](auto method) {
      return ensemble_.chain_grid(
          kernels::tempering_iterations_kernel<Target, decltype(method)::value>, chains_);
    });
  }

  CudaTemperingBackend(const CudaTemperingBackend&) = delete;
  CudaTemperingBackend& operator=(const CudaTemperingBackend&) = delete;
  ~CudaTemperingBackend() override { cudaStreamSynchronize(ensemble_.stream()); }

  std::string device_name() const override { return ensemble_.name(); }

  std::int64_t start() override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    kernels::tempering_start_kernel<Target>
        <<<start_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            target_, base(), settings(), view(), started_.data());
    MYRIAD_CHECK_LAUNCH();
    return ensemble_.reduce_sum<std::int64_t>(chains_,
                                              kernels::LoadInitializationFailure{started_.data()});
  }

  IterationStats run(int first, int count) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    const kernels::ChainStatisticsView stats{counters_.data(), chains_};
    ensemble_.zero(counters_);
    with_tempering_method(setup_.method, [&](auto method) {
      kernels::tempering_iterations_kernel<Target, decltype(method)::value>
          <<<iterations_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              target_, base(), settings(), view(), first, count,
              kept_transitions(setup_, first, count), stats);
      MYRIAD_CHECK_LAUNCH();
    });
    return ensemble_.reduce_sum<IterationStats>(chains_, kernels::LoadChainStatistics{stats});
  }

  TemperingOutputs outputs() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    ensemble_.synchronize();  // the downloads below do not wait on the compute stream
    TemperingOutputs out{TemperingSums(chains_, 2 * dim_), trace_.download(), 0};
    const TemperingSumsView sums = out.sums.view();
    const std::vector<double> weight = weight_.download(), weighted = weighted_.download();
    std::copy(weight.begin(), weight.end(), sums.weight);
    std::copy(weighted.begin(), weighted.end(), sums.weighted);
    for (std::int64_t d : dropped_.download()) out.dropped += d;
    return out;
  }

 private:
  static std::int64_t checked_chains(std::int64_t chains) {
    MYRIAD_EXPECTS(chains >= 2, "tempering needs at least 2 chains, got ", chains);
    return chains;
  }
  static const double* data_or_null(const DeviceArray<double>& a) {
    return a.size() > 0 ? a.data() : nullptr;
  }
  TemperingSettings<double> settings() const {
    return tempering_settings(setup_, dim_, inverse_metric_.data(), data_or_null(ladder_));
  }
  AnnealingBase<double> base() const {
    return {dim_, data_or_null(base_mean_), data_or_null(base_scale_)};
  }
  TemperingEnsembleView<double> view() const {
    const auto rows = [&](const DeviceArray<double>& a) {
      return EnsembleView<double>{a.data(), chains_, state_dim_, stride_};
    };
    const HmcEnsembleView<double> hmc{
        rows(position_),          rows(gradient_),     rows(proposal_),       rows(momentum_),
        rows(proposal_gradient_), log_density_.data(), EnsembleView<double>{}};
    return {hmc,           beta_.data(),
            index_.data(), TemperingSumsView{weight_.data(), weighted_.data(), chains_, 2 * dim_},
            trace_.data(), dropped_.data()};
  }

  Target target_;
  TemperingSetup setup_;
  std::int64_t chains_, stride_;
  int dim_, state_dim_;
  cuda_detail::EnsembleDevice ensemble_;  // before the arrays: the stream outlives them
  int start_grid_ = 1, iterations_grid_ = 1;
  DeviceArray<double> position_, gradient_, proposal_, momentum_, proposal_gradient_;
  DeviceArray<double> log_density_, beta_, weight_, weighted_, trace_;
  DeviceArray<double> inverse_metric_, ladder_, base_mean_, base_scale_;
  DeviceArray<int> index_;
  DeviceArray<std::int64_t> dropped_, counters_;
  DeviceArray<std::uint8_t> started_;
};

template <class Target>
std::unique_ptr<TemperingBackend> make_cuda_tempering_backend(const Target& target,
                                                              const TemperingSetup& setup) {
  return std::make_unique<CudaTemperingBackend<Target>>(target, setup);
}

}  // namespace myriad
