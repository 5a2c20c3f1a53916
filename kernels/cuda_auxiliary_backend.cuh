#pragma once
// The CUDA backend of the auxiliary-variable samplers (backend/auxiliary_backend.hpp): the
// ensemble state in device memory, [coordinate][chain] with the chain stride rounded up to 32,
// one thread per chain (kernels/auxiliary_kernels.cuh), recorded draws streamed to the host in
// chunks (draw_chunks.cuh) while the next chunk computes.
//
// Device memory per chain: 3 state-sized arrays (state, trial point, direction), x(c) for the
// reflective sampler, the stored variates of apm-ss-* (the estimator's auxiliary_dim), one log
// target and one counter, and the statistics; for an estimator with an x-dependent cache (model/
// estimator.hpp), two caches and its workspace, chain-major (a chain's thread walks its own); the
// variates of pm-mh and apm-mi-* are not stored (model/estimator.hpp). The ensemble's moments (the
// scale's warm-up windows, four times a run) come from one copy of the states to the host.
//
// A staged estimator (model/staged_preparation.hpp: the GP probit) prepares each trial point's
// cache with its dense steps batched across chains (kernels/staged_preparation.cuh): a random
// walk is three launches and a few library rounds per iteration instead of one launch per chunk;
// slice updates of x (apm-*-ss) are rounds of one trial point per chain until no chain asks for
// another, the chains whose updates are done waiting masked (one count per round comes back).
//
// The library instantiates make_cuda_auxiliary_backend for the built-in models that list
// library_backend::auxiliary (kernels/builtin_instances.cmake); for a model of your own, include
// this header in a .cu file compiled by nvcc and instantiate
//
//   template std::unique_ptr<myriad::AuxiliaryBackend<double>>
//   myriad::make_cuda_auxiliary_backend<MyModel, double>(const MyModel&, std::int64_t,
//                                                        myriad::AuxiliaryMethod);

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "auxiliary_kernels.cuh"
#include "cuda_buffers.cuh"
#include "cuda_ensemble.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "draw_chunks.cuh"
#include "myriad/backend/auxiliary_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/model/concept.hpp"
#include "reduction.cuh"

namespace myriad {

template <class Model, class T>
class CudaAuxiliaryBackend final : public cuda_detail::CudaEnsemble<Model, AuxiliaryBackend<T>> {
  using Base = cuda_detail::CudaEnsemble<Model, AuxiliaryBackend<T>>;

 public:
  CudaAuxiliaryBackend(const Model& model, std::int64_t chains, AuxiliaryMethod method)
      : Base(model, chains, checked_device(chains)),
        method_(method),
        sizes_(auxiliary_sizes(model, method)) {
    state_.allocate(this->rows_, sizes_);
    this->allocate_chain_records();
    capped_ = DeviceArray<std::int64_t>(static_cast<std::size_t>(this->chains_));
    ensemble_.zero(state_.cache_slot);
    for (DeviceArray<T>* array : state_.vectors()) ensemble_.zero(*array);
    ensemble_.zero(state_.counter);
    ensemble_.zero(capped_);
    set_scale(std::vector<T>(static_cast<std::size_t>(sizes_.dim), T(1)));
    if constexpr (kStaged) {
      preparation_ = StagedPreparation<T>(this->chains_, model.preparation_matrix_size());
      walk_status_ = DeviceArray<std::uint32_t>(static_cast<std::size_t>(this->chains_));
      slices_ = DeviceArray<detail::SliceOfX<T>>(static_cast<std::size_t>(this->chains_));
      asking_ = DeviceArray<std::uint8_t>(static_cast<std::size_t>(this->chains_));
      staged_grid_ = ensemble_.chain_grid(kernels::begin_walk_kernel<Model, T>, this->chains_);
    } else {
      init_grid_ =
          ensemble_.chain_grid(kernels::initialize_auxiliary_kernel<Model, T>, this->chains_);
      iterations_grid_ =
          ensemble_.chain_grid(kernels::auxiliary_iterations_kernel<Model, T>, this->chains_);
    }
  }

  ~CudaAuxiliaryBackend() override { cudaStreamSynchronize(ensemble_.stream()); }

  int dim() const override { return sizes_.dim; }
  int auxiliary_dim() const override { return sizes_.auxiliary_dim; }

  void set_scale(const std::vector<T>& scale) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    MYRIAD_EXPECTS(scale.size() == static_cast<std::size_t>(sizes_.dim), "scale: expected ",
                   sizes_.dim, " values, got ", scale.size());
    ensemble_.synchronize();  // kernels in flight read the old scale
    scale_ = ensemble_.to_device(scale);
    ensemble_.synchronize();  // the host vector is pageable and goes on return
  }

  std::int64_t initialize(const AuxiliarySettings<T>& settings, T radius, int max_tries) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    MYRIAD_EXPECTS(settings.method == method_,
                   "this auxiliary-sampler backend was built for another method");
    ensemble_.zero(capped_);
    if constexpr (kStaged) {
      return initialize_staged(own(settings), radius, max_tries);
    } else {
      kernels::initialize_auxiliary_kernel<Model, T>
          <<<init_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, view(), own(settings), radius, max_tries, this->initialized_.data());
      MYRIAD_CHECK_LAUNCH();
      return this->failed_initializations();
    }
  }

  IterationStats run(const AuxiliarySettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations, EnsembleMoments* moments) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    MYRIAD_EXPECTS(settings.method == method_,
                   "this auxiliary-sampler backend was built for another method");
    check_iteration_count(num_iterations);
    const kernels::ChainStatisticsView stats = this->fresh_statistics();
    const AuxiliarySettings<T> device_settings = own(settings);
    draws_.run(ensemble_.stream(), num_iterations, chunk_iterations, this->values_per_iteration(),
               sink, first_draw, cuda_detail::kNoFitCheck, [&](int done, int n, T* recorded) {
                 const std::uint32_t first = first_iteration + static_cast<std::uint32_t>(done);
                 if constexpr (kStaged) {
                   for (int i = 0; i < n; ++i) {
                     const std::uint32_t iteration = first + static_cast<std::uint32_t>(i);
                     if (random_walk_on_x(method_)) {
                       staged_walk(device_settings, iteration, recorded, i, stats);
                     } else {
                       staged_slices(device_settings, iteration, recorded, i, stats);
                     }
                   }
                 } else {
                   kernels::auxiliary_iterations_kernel<Model, T>
                       <<<iterations_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
                           this->model_, view(), device_settings, first, n, recorded,
                           this->num_quantities_, stats, capped_.data());
                   MYRIAD_CHECK_LAUNCH();
                 }
               });
    const IterationStats result = this->total_statistics();
    if (moments != nullptr) {
      const std::vector<T> x = positions();
      ensemble_moments_cpu(
          EnsembleView<const T>{x.data(), this->chains_, sizes_.state_dim, this->chains_, 1},
          *moments);
    }
    return result;
  }

  std::vector<std::int64_t> capped_per_chain() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return ensemble_.rows_to_host(capped_.data(), this->chains_, this->chains_, 1);
  }

  std::vector<T> positions() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return ensemble_.rows_to_host(state_.position.data(), this->chains_, this->stride(),
                                  sizes_.state_dim);
  }

 private:
  static constexpr bool kStaged = model_has_staged_preparation<Model>;

  static int checked_device(std::int64_t chains) {
    MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
    return cuda_detail::current_device_or_throw();
  }

  /// Starts every chain with its preparations batched (file comment): try after try, the chains
  /// without a finite start placed again, until all have one or max_tries are spent.
  std::int64_t initialize_staged(const AuxiliarySettings<T>& settings, T radius, int max_tries) {
    ensemble_.zero(this->initialized_);
    std::int64_t failed = this->chains_;
    for (int attempt = 0; attempt < max_tries && failed > 0; ++attempt) {
      kernels::place_chain_kernel<Model, T>
          <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, view(), settings, radius, attempt, this->initialized_.data(),
              preparation_.queue());
      MYRIAD_CHECK_LAUNCH();
      preparation_.run(this->model_, ensemble_.stream(), staged_grid_);
      kernels::finish_start_kernel<Model, T>
          <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, view(), settings, this->initialized_.data());
      MYRIAD_CHECK_LAUNCH();
      failed = this->failed_initializations();
    }
    return failed;
  }

  /// One random-walk iteration with the proposals' preparations batched (file comment), its
  /// draw recorded at position `draw` of `recorded` (when not null).
  void staged_walk(const AuxiliarySettings<T>& settings, std::uint32_t iteration, T* recorded,
                   int draw, const kernels::ChainStatisticsView& stats) {
    kernels::begin_walk_kernel<Model, T>
        <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, view(), settings, iteration, preparation_.queue(), walk_status_.data(),
            stats);
    MYRIAD_CHECK_LAUNCH();
    preparation_.run(this->model_, ensemble_.stream(), staged_grid_);
    kernels::finish_walk_kernel<Model, T>
        <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, view(), settings, iteration, walk_status_.data(), recorded, draw,
            this->num_quantities_, stats, capped_.data());
    MYRIAD_CHECK_LAUNCH();
  }

  /// One APM-*-SS iteration with the trial points' preparations batched (file comment): rounds
  /// until no chain asks for a point, its draw recorded at position `draw` of `recorded`.
  void staged_slices(const AuxiliarySettings<T>& settings, std::uint32_t iteration, T* recorded,
                     int draw, const kernels::ChainStatisticsView& stats) {
    const kernels::SliceRound<T> round{slices_.data(), asking_.data(), preparation_.queue(),
                                       recorded,       draw,           this->num_quantities_,
                                       stats,          capped_.data()};
    kernels::begin_slice_kernel<Model, T>
        <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, view(), settings, iteration, round);
    MYRIAD_CHECK_LAUNCH();
    // Each round evaluates one point per asking chain; a slice update makes at most
    // 2 · step_out + max_shrinks of them, and there are at most dim updates an iteration.
    while (ensemble_.template reduce_sum<std::int64_t>(this->chains_,
                                                       kernels::LoadFlag{asking_.data()}) > 0) {
      preparation_.run(this->model_, ensemble_.stream(), staged_grid_);
      kernels::continue_slice_kernel<Model, T>
          <<<staged_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, view(), settings, iteration, round);
      MYRIAD_CHECK_LAUNCH();
    }
  }

  AuxiliarySettings<T> own(AuxiliarySettings<T> settings) const {
    settings.scale = scale_.data();
    return settings;
  }
  AuxiliaryEnsembleView<T> view() { return state_.view(this->rows_, sizes_); }
  AuxiliaryMethod method_;
  AuxiliarySizes sizes_;
  int init_grid_ = 1, iterations_grid_ = 1;
  AuxiliaryEnsembleArrays<DeviceArray, T> state_;
  DeviceArray<T> scale_;
  DeviceArray<std::int64_t> capped_;  ///< per chain: capped slice updates since initialize()
  cuda_detail::DrawChunks<T> draws_;
  StagedPreparation<T> preparation_;         ///< a staged estimator's batched rounds
  DeviceArray<std::uint32_t> walk_status_;   ///< per chain: a staged walk's status between launches
  DeviceArray<detail::SliceOfX<T>> slices_;  ///< per chain: a staged APM-*-SS iteration's search
  DeviceArray<std::uint8_t> asking_;         ///< per chain: it asks for a trial point
  int staged_grid_ = 1;
  using Base::ensemble_;  // the device and stream, named unqualified throughout
};

template <class Model, class T>
std::unique_ptr<AuxiliaryBackend<T>> make_cuda_auxiliary_backend(const Model& model,
                                                                 std::int64_t chains,
                                                                 AuxiliaryMethod method) {
  return std::make_unique<CudaAuxiliaryBackend<Model, T>>(model, chains, method);
}

}  // namespace myriad
