#pragma once
// cuda_detail::EnsembleDevice — what every CUDA backend (HMC, constrained HMC, AIS) holds besides
// its own state: the device it was built on, that device's SM count and name, a compute stream,
// and the scratch of the sums over chains (reduction.cuh), with the few operations they all
// perform on them. One implementation shared by the backends, as cuCollections shares one
// open-addressing implementation among its containers; each backend keeps only its layout, its
// kernels and its launch choices.
//
// A backend validates its arguments and calls current_device_or_throw() in its member
// initialisers, before this object creates any stream, so that a missing device reads as
// myriad::unavailable_error rather than as a failed cudaStreamCreate. Its destructor synchronises
// the stream (ensemble.synchronize()) before its arrays are freed, and declares the
// EnsembleDevice before its arrays so that the stream outlives them.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_buffers.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "kernel_common.cuh"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/chain_statistics.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/concept.hpp"
#include "reduction.cuh"
#include "warp_team.cuh"

namespace myriad::cuda_detail {

/// A base that checks what every CUDA backend needs of its model, target or generator: it is
/// passed to the kernels by value, so it must be trivially copyable (and hold only
/// device-visible data, which no trait can check).
template <class Model>
struct PassedToKernels {
  static_assert(std::is_trivially_copyable<Model>::value,
                "a model, target or generator is passed to kernels by value and must be "
                "trivially copyable");
};

/// The current CUDA device; myriad::unavailable_error when no device is usable.
inline int current_device_or_throw() {
  if (!cuda_device_available()) {
    throw unavailable_error("the CUDA backend was requested but no CUDA device is available");
  }
  int device = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

class EnsembleDevice {
 public:
  /// `device` from current_device_or_throw(); creates the stream and the reduction scratch there.
  explicit EnsembleDevice(int device) : device_(device) {
    cudaDeviceProp properties{};
    MYRIAD_CUDA_TRY(cudaGetDeviceProperties(&properties, device_));
    sm_count_ = properties.multiProcessorCount;
    name_ = std::string(properties.name) + " (sm_" + std::to_string(properties.major) +
            std::to_string(properties.minor) + ")";
    reduce_scratch_ = DeviceArray<IterationStats>(kernels::kMaxReduceBlocks + 1);
  }
  EnsembleDevice(const EnsembleDevice&) = delete;
  EnsembleDevice& operator=(const EnsembleDevice&) = delete;

  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  /// e.g. "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string& name() const { return name_; }
  cudaStream_t stream() const { return compute_.get(); }
  void synchronize() const { compute_.synchronize(); }

  /// Blocks for a grid-stride launch of `kernel` over n items on this device (grid_size).
  template <class Kernel>
  int grid(Kernel kernel, int block_size, std::int64_t n) const {
    return grid_size(kernel, block_size, n, sm_count_);
  }
  /// grid() for one thread per chain over `chains` chains, kChainBlockSize threads a block.
  template <class Kernel>
  int chain_grid(Kernel kernel, std::int64_t chains) const {
    return grid(kernel, kernels::kChainBlockSize, chains);
  }
  /// grid() for one warp per chain over `chains` chains, block_size threads a block.
  template <class Kernel>
  int warp_grid(Kernel kernel, int block_size, std::int64_t chains) const {
    return grid(kernel, block_size, chains * kernels::WarpTeam::kLanes);
  }

  /// Σ load(i) over i < n on the stream (reduction.cuh); waits for the result.
  template <class Value, class Load>
  Value reduce_sum(std::int64_t n, Load load) const {
    static_assert(sizeof(Value) <= sizeof(IterationStats), "scratch too small");
    return cuda_detail::reduce_sum<Value>(n, load, reinterpret_cast<Value*>(reduce_scratch_.data()),
                                          sm_count_, compute_.get());
  }

  /// Zeroes an array on the stream (behind the kernels in flight).
  template <class T>
  void zero(const DeviceArray<T>& array) const {
    if (array.size() > 0) {
      MYRIAD_CUDA_TRY(cudaMemsetAsync(array.data(), 0, array.size() * sizeof(T), compute_.get()));
    }
  }

  /// A device copy of `host`, enqueued on the stream behind the kernels in flight. The caller
  /// waits on the stream (synchronize, reduce_sum) before the copy is freed.
  template <class T>
  DeviceArray<T> to_device(const std::vector<T>& host) const {
    DeviceArray<T> array(host.size());
    if (!host.empty()) {
      MYRIAD_CUDA_TRY(cudaMemcpyAsync(array.data(), host.data(), host.size() * sizeof(T),
                                      cudaMemcpyHostToDevice, compute_.get()));
    }
    return array;
  }

  /// `rows` rows of `row_values` values each, `pitch_values` apart on the device, as one dense
  /// host array (the stride padding dropped); waits for the copy.
  template <class T>
  std::vector<T> rows_to_host(const T* source, std::int64_t row_values, std::int64_t pitch_values,
                              std::int64_t rows) const {
    std::vector<T> host(static_cast<std::size_t>(row_values) * static_cast<std::size_t>(rows));
    copy_rows_to_host(host.data(), row_values * sizeof(T), source, pitch_values * sizeof(T),
                      row_values * sizeof(T), rows, compute_.get());
    compute_.synchronize();
    return host;
  }

  /// The reverse of rows_to_host: the dense host array `host` (rows of `row_values` values) into
  /// `rows` device rows `pitch_values` apart; waits for the copy.
  template <class T>
  void rows_from_host(T* destination, std::int64_t pitch_values, const std::vector<T>& host,
                      std::int64_t row_values, std::int64_t rows) const {
    copy_rows(destination, pitch_values * sizeof(T), host.data(), row_values * sizeof(T),
              row_values * sizeof(T), rows, cudaMemcpyHostToDevice, compute_.get());
    compute_.synchronize();
  }

 private:
  int device_;
  int sm_count_ = 1;
  std::string name_;
  Stream compute_;
  DeviceArray<IterationStats> reduce_scratch_;
};

/// The base of a CUDA backend implementing `Interface` (a ChainEnsemble) for Model, as
/// CpuEnsemble (detail/cpu_ensemble.hpp) is on the CPU: the model the kernels take by value, the
/// chain count and the [dim][chain] layout with chains padded to a multiple of 32 (every
/// dimension's row starts a 128-byte line), and the device, stream and reduction scratch. As a
/// base it is built before the backend's arrays and destroyed after them, so the stream outlives
/// them; the backend's destructor waits for the kernels in flight before its arrays go.
template <class Model, class Interface>
class CudaEnsemble : public Interface, PassedToKernels<Model> {
 public:
  std::int64_t chains() const final { return chains_; }
  int num_quantities() const final { return num_quantities_; }
  std::vector<std::string> quantity_names() const final { return recorded_quantity_names(model_); }
  std::string device_name() const override { return ensemble_.name(); }

 protected:
  /// `device` from current_device_or_throw(), after the backend has checked its arguments.
  CudaEnsemble(const Model& model, std::int64_t chains, int device)
      : model_(model),
        chains_(chains),
        rows_(EnsembleLayout::dim_major(chains, 32)),
        num_quantities_(recorded_quantity_count(model)),
        ensemble_(device) {}

  Model model_;
  std::int64_t chains_;
  /// The distance between a row's dimensions: the chain count padded to a multiple of 32.
  std::int64_t stride() const { return rows_.padded_chains; }

  /// Allocates and zeroes the per-chain records every sampler keeps (the backend calls it once
  /// it has checked that its arrays fit): 1 + 8 · ChainStatisticsView::kCounters bytes a chain.
  void allocate_chain_records() {
    initialized_ = DeviceArray<std::uint8_t>(static_cast<std::size_t>(chains_));
    counters_ = DeviceArray<std::int64_t>(kernels::ChainStatisticsView::kCounters *
                                          static_cast<std::size_t>(chains_));
    ensemble_.zero(initialized_);
    ensemble_.zero(counters_);
  }
  /// The chains whose last initialisation found no point, from the flags its kernel set (waits
  /// for the stream).
  std::int64_t failed_initializations() const {
    return ensemble_.template reduce_sum<std::int64_t>(
        chains_, kernels::LoadInitializationFailure{initialized_.data()});
  }
  /// Recorded values per iteration: every chain's quantities.
  std::int64_t values_per_iteration() const {
    return static_cast<std::int64_t>(num_quantities_) * chains_;
  }
  /// The statistics counters zeroed, for one call's kernels to add to.
  kernels::ChainStatisticsView fresh_statistics() const {
    ensemble_.zero(counters_);
    return statistics_view();
  }
  kernels::ChainStatisticsView statistics_view() const { return {counters_.data(), chains_}; }
  /// The counters summed over the chains (waits for the stream).
  IterationStats total_statistics() const {
    return ensemble_.template reduce_sum<IterationStats>(
        chains_, kernels::LoadChainStatistics{statistics_view()});
  }

  EnsembleLayout rows_;  ///< [dim][chain], chains padded to a multiple of 32
  int num_quantities_;
  EnsembleDevice ensemble_;
  DeviceArray<std::uint8_t> initialized_;  ///< per chain: did its last initialisation succeed
  DeviceArray<std::int64_t> counters_;     ///< ChainStatisticsView's [counter][chain]
};

}  // namespace myriad::cuda_detail
