#pragma once
// The CUDA backend of many-chain HMC (backend/hmc_backend.hpp): device-resident SoA ensemble
// state, one thread per chain running the per-chain transition of mcmc/hmc.hpp, and recorded
// draws streamed to the host in chunks while the next chunk computes.
//
// The library instantiates make_cuda_hmc_backend for its built-in models
// (kernels/builtin_instances.cmake). For a model of your own, include this header in a .cu file
// compiled by nvcc and instantiate
//
//   template std::unique_ptr<myriad::HmcBackend<double>>
//   myriad::make_cuda_hmc_backend<MyModel, double>(const MyModel&, std::int64_t);
//
// Streams and memory. Ensemble arrays are [dim][chain] with a stride of chains rounded up to a
// multiple of 32, so every dimension's row starts on a 128-byte boundary. Kernels run on a
// compute stream; recorded draws leave in chunks through draw_chunks.cuh, so that chunk k + 1
// computes while chunk k is copied and handed to the sink.
//
// Device memory is the state (5 · dim + 1 values per chain; NUTS adds its tree scratch,
// nuts_tree_vectors(max depth) · dim), per-chain statistics, and two chunk buffers of
// chunk_iterations × quantities × chains values: it does not grow with the number of draws.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_buffers.cuh"
#include "cuda_ensemble.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "draw_chunks.cuh"
#include "ensemble_covariance.cuh"
#include "hmc_kernels.cuh"
#include "myriad/backend/device.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/model/concept.hpp"
#include "reduction.cuh"

namespace myriad {

/// Many-chain HMC on the current CUDA device (see the file comment for streams and memory).
/// Model must be trivially copyable and hold only device-visible data: it is passed to the
/// kernels by value.
template <class Model, class T>
class CudaHmcBackend final : public cuda_detail::CudaEnsemble<Model, HmcBackend<T>> {
  using Base = cuda_detail::CudaEnsemble<Model, HmcBackend<T>>;

 public:
  /// Allocates the ensemble state of `chains` chains on the current device. Throws
  /// myriad::unavailable_error when no CUDA device is usable, myriad::invalid_argument for a bad
  /// chain count or model dimension, myriad::cuda_error when allocation fails.
  CudaHmcBackend(const Model& model, std::int64_t chains)
      : Base(model, chains, checked_device(chains, model.dim())), dim_(model.dim()) {
    state_.allocate(this->rows_, dim_);
    this->allocate_chain_records();

    // Defined contents everywhere, the stride padding included, so that a sanitizer's initcheck
    // stays quiet and positions() of an uninitialised ensemble reads zeros, like the CPU.
    for (DeviceArray<T>* array : state_.vectors()) ensemble_.zero(*array);
    ensemble_.zero(state_.log_density);
    set_inverse_metric(std::vector<T>(static_cast<std::size_t>(dim_), T(1)));

    init_grid_ = ensemble_.chain_grid(kernels::initialize_chains_kernel<Model, T>, this->chains_);
    iterations_grid_ =
        ensemble_.chain_grid(kernels::hmc_iterations_kernel<Model, T>, this->chains_);
  }

  /// Waits for the kernels in flight before the arrays are freed (draws_ waits for its copies).
  ~CudaHmcBackend() override { cudaStreamSynchronize(ensemble_.stream()); }

  int dim() const override { return dim_; }

  std::int64_t initialize(std::uint64_t seed, T radius, int max_tries,
                          std::int64_t chains_per_init) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_chains_per_init(chains_per_init);
    const HmcEnsembleView<T> state = ensemble_view();
    kernels::initialize_chains_kernel<Model, T>
        <<<init_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, state.position, state.gradient, state.log_density,
            this->initialized_.data(), seed, radius, max_tries, chains_per_init);
    MYRIAD_CHECK_LAUNCH();
    return this->failed_initializations();
  }

  std::int64_t set_positions(const std::vector<T>& positions) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_position_count(positions, this->chains_, dim_);
    const DeviceArray<T> points = ensemble_.to_device(positions);
    const HmcEnsembleView<T> state = ensemble_view();
    // this->initialized_ takes each chain's outcome, as in initialize().
    kernels::place_chains_kernel<Model, T>
        <<<init_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, state.position, state.gradient, state.log_density, points.data(),
            this->initialized_.data());
    MYRIAD_CHECK_LAUNCH();
    // reduce_sum waits for the stream, so `points` outlives the kernel that reads it.
    return this->failed_initializations();
  }

  void set_inverse_metric(const std::vector<T>& inverse_metric) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    const std::vector<T> storage = metric_storage(inverse_metric, dim_);
    // Kernels in flight may read the old metric: a larger one waits for them before the array is
    // replaced; the copy runs behind them on the same stream, and is waited for because the
    // host vector is pageable and goes on return.
    if (state_.metric.size() < storage.size()) {
      ensemble_.synchronize();
      state_.metric = DeviceArray<T>(storage.size());
    }
    MYRIAD_CUDA_TRY(cudaMemcpyAsync(state_.metric.data(), storage.data(),
                                    storage.size() * sizeof(T), cudaMemcpyHostToDevice,
                                    ensemble_.stream()));
    ensemble_.synchronize();
    state_.dense_metric = inverse_metric.size() != static_cast<std::size_t>(dim_);
  }

  IterationStats run(const HmcSettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations, EnsembleMoments* moments) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_iteration_count(num_iterations);
    check_max_tree_depth(settings.max_tree_depth);
    if (settings.max_tree_depth > 0) reserve_tree(settings.max_tree_depth);
    const kernels::ChainStatisticsView stats = this->fresh_statistics();
    draws_.run(ensemble_.stream(), num_iterations, chunk_iterations, this->values_per_iteration(),
               sink, first_draw, cuda_detail::kNoFitCheck, [&](int done, int n, T* recorded) {
                 const std::uint32_t first = first_iteration + static_cast<std::uint32_t>(done);
                 if (settings.max_tree_depth > 0) {
                   kernels::nuts_iterations_kernel<Model, T>
                       <<<nuts_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
                           this->model_, ensemble_view(), settings, state_.metric_view(dim_), first,
                           n, recorded, this->num_quantities_, stats);
                 } else {
                   kernels::hmc_iterations_kernel<Model, T>
                       <<<iterations_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
                           this->model_, ensemble_view(), settings, state_.metric_view(dim_), first,
                           n, recorded, this->num_quantities_, stats);
                 }
                 MYRIAD_CHECK_LAUNCH();
               });

    const IterationStats result = this->total_statistics();
    if (moments != nullptr) compute_moments(*moments);
    return result;
  }

  IterationStats run_with_criterion(const HmcSettings<T>& settings, std::uint32_t iteration,
                                    const CriterionRequest<T>& request,
                                    std::vector<double>& criterion_sums,
                                    EnsembleMoments& moments) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_criterion_request(request, dim_);
    const int rows = criterion_term_count(request.criterion, dim_);
    const auto dim = static_cast<std::size_t>(dim_);
    if (criterion_terms_.size() < static_cast<std::size_t>(rows) * this->stride()) {
      ensemble_.synchronize();
      criterion_terms_ = DeviceArray<double>(static_cast<std::size_t>(rows) * this->stride());
      criterion_probe_ = DeviceArray<T>(2 * dim);
      criterion_sums_ = DeviceArray<double>(static_cast<std::size_t>(rows));
    }
    // Pageable sources: the copies are staged before cudaMemcpyAsync returns.
    MYRIAD_CUDA_TRY(cudaMemcpyAsync(criterion_probe_.data(), request.centre.data(), dim * sizeof(T),
                                    cudaMemcpyHostToDevice, ensemble_.stream()));
    if (request.criterion == TrajectoryCriterion::snaper) {
      MYRIAD_CUDA_TRY(cudaMemcpyAsync(criterion_probe_.data() + dim, request.direction.data(),
                                      dim * sizeof(T), cudaMemcpyHostToDevice, ensemble_.stream()));
    }
    const CriterionProbe<T> probe{request.criterion, criterion_probe_.data(),
                                  criterion_probe_.data() + dim};
    const CriterionTerms terms{criterion_terms_.data(), this->stride()};
    const kernels::ChainStatisticsView stats = this->fresh_statistics();
    kernels::hmc_criterion_kernel<Model, T>
        <<<iterations_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
            this->model_, ensemble_view(), settings, state_.metric_view(dim_), iteration, probe,
            terms, stats);
    MYRIAD_CHECK_LAUNCH();
    row_sums(
        EnsembleView<const double>{criterion_terms_.data(), this->chains_, rows, this->stride()},
        kernels::IdentityTerm{}, 1.0, criterion_sums_.data());
    criterion_sums.assign(static_cast<std::size_t>(rows), 0.0);
    MYRIAD_CUDA_TRY(cudaMemcpyAsync(criterion_sums.data(), criterion_sums_.data(),
                                    rows * sizeof(double), cudaMemcpyDeviceToHost,
                                    ensemble_.stream()));
    const IterationStats result = this->total_statistics();
    compute_moments(moments);
    return result;
  }

  std::vector<T> positions() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    // Drop the stride padding: the host array is [dim][chain] with stride chains.
    return ensemble_.rows_to_host(state_.position.data(), this->chains_, this->stride(), dim_);
  }

  HmcChainState<T> chain_state() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return {positions(),
            ensemble_.rows_to_host(state_.gradient.data(), this->chains_, this->stride(), dim_),
            log_densities()};
  }

  void restore_chain_state(const HmcChainState<T>& state) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_chain_state(state, this->chains_, dim_);
    ensemble_.rows_from_host(state_.position.data(), this->stride(), state.position, this->chains_,
                             dim_);
    ensemble_.rows_from_host(state_.gradient.data(), this->stride(), state.gradient, this->chains_,
                             dim_);
    ensemble_.rows_from_host(state_.log_density.data(), this->stride(), state.log_density,
                             this->chains_, 1);
  }

  std::vector<T> log_densities() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return ensemble_.rows_to_host(state_.log_density.data(), this->chains_, this->stride(), 1);
  }

  void copy_chains(const std::vector<std::int64_t>& source) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_chain_sources(source, this->chains_);
    const DeviceArray<std::int64_t> device_source = ensemble_.to_device(source);
    kernels::copy_chains_kernel<T>
        <<<ensemble_.chain_grid(kernels::copy_chains_kernel<T>, this->chains_),
           kernels::kChainBlockSize, 0, ensemble_.stream()>>>(ensemble_view(),
                                                              device_source.data());
    MYRIAD_CHECK_LAUNCH();
    ensemble_.synchronize();  // before device_source goes
  }

 private:
  /// Validates the arguments and returns the current device. Runs in the member initialisers,
  /// before the stream is created (cuda_ensemble.cuh).
  static int checked_device(std::int64_t chains, int dim) {
    check_hmc_ensemble_size(chains, dim);
    return cuda_detail::current_device_or_throw();
  }

  HmcEnsembleView<T> ensemble_view() { return state_.view(this->rows_, dim_); }

  /// NUTS scratch for trees up to max_depth deep ([vector · dim][chain], the state's stride).
  void reserve_tree(int max_depth) {
    const std::size_t size = state_.tree_shortfall(this->rows_, dim_, max_depth);
    if (size == 0) return;
    ensemble_.synchronize();
    state_.tree = DeviceArray<T>(size);
    ensemble_.zero(state_.tree);
    nuts_grid_ = ensemble_.chain_grid(kernels::nuts_iterations_kernel<Model, T>, this->chains_);
  }

  /// Per-dimension mean and M2 of the positions, two passes as in ensemble_moments_cpu.
  void compute_moments(EnsembleMoments& out) {
    if (moment_results_.size() < 2 * static_cast<std::size_t>(dim_)) {
      moment_results_ = DeviceArray<double>(2 * static_cast<std::size_t>(dim_));
    }
    double* mean = moment_results_.data();
    double* m2 = moment_results_.data() + dim_;
    const EnsembleView<const T> x = state_.position_view(this->rows_, dim_);
    row_sums(x, kernels::IdentityTerm{}, static_cast<double>(this->chains_), mean);
    row_sums(x, kernels::SquaredDeviationTerm{mean}, 1.0, m2);

    // mean and m2 are adjacent: one copy brings both.
    const std::vector<double> host = ensemble_.rows_to_host(mean, 2 * dim_, 2 * dim_, 1);
    out.mean.assign(host.begin(), host.begin() + dim_);
    out.m2.assign(host.begin() + dim_, host.end());
    out.count = this->chains_;
  }

  /// The mean and centred cross-products of the positions (kernels/ensemble_covariance.cuh):
  /// D + D² values come back, not D · chains.
  void position_covariance(EnsembleCovariance& out) override {
    const std::size_t entries = static_cast<std::size_t>(dim_) * dim_;
    const std::int64_t slices = kernels::covariance_slices(this->chains_, dim_);
    if (covariance_partials_.size() < static_cast<std::size_t>(slices) * entries) {
      ensemble_.synchronize();  // the arrays may be in use by work in flight
      covariance_partials_ = DeviceArray<double>(static_cast<std::size_t>(slices) * entries);
      covariance_results_ = DeviceArray<double>(dim_ + entries);  // sized by dim alone: once
    }
    double* mean = covariance_results_.data();
    double* scatter = covariance_results_.data() + dim_;
    const EnsembleView<const T> x = state_.position_view(this->rows_, dim_);
    row_sums(x, kernels::IdentityTerm{}, static_cast<double>(this->chains_), mean);
    const dim3 tile(kernels::kCovarianceTile, kernels::kCovarianceTile);
    const dim3 grid(static_cast<unsigned>(slices),
                    static_cast<unsigned>(kernels::covariance_tile_pairs(dim_)));
    kernels::covariance_partials_kernel<T>
        <<<grid, tile, 0, ensemble_.stream()>>>(x, mean, slices, covariance_partials_.data());
    MYRIAD_CHECK_LAUNCH();
    const unsigned blocks = static_cast<unsigned>(
        std::min<std::size_t>((entries + kernels::kReduceBlockSize - 1) / kernels::kReduceBlockSize,
                              kernels::kMaxReduceBlocks));
    kernels::finish_covariance_kernel<double>
        <<<blocks, kernels::kReduceBlockSize, 0, ensemble_.stream()>>>(covariance_partials_.data(),
                                                                       slices, dim_, scatter);
    MYRIAD_CHECK_LAUNCH();
    // mean and scatter are adjacent: one copy brings both.
    const std::int64_t values = dim_ + static_cast<std::int64_t>(entries);
    const std::vector<double> host = ensemble_.rows_to_host(mean, values, values, 1);
    out.mean.assign(host.begin(), host.begin() + dim_);
    out.scatter.assign(host.begin() + dim_, host.end());
    out.count = this->chains_;
  }

  /// out[r] = Σ_c term(x(r, c), r) / divisor for every row r of x, enqueued on the stream. The
  /// chains of each row are split over one block per 256-chain slice, up to a cap. The split
  /// depends on the chain count alone, never on the device (SM count), so the summation order,
  /// and with it the adapted metric and every later draw, is the same on any GPU.
  template <class Value, class Term>
  void row_sums(const EnsembleView<const Value>& x, Term term, double divisor, double* out) {
    const std::int64_t slices =
        (this->chains_ + kernels::kReduceBlockSize - 1) / kernels::kReduceBlockSize;
    const int blocks_x =
        static_cast<int>(std::min<std::int64_t>(slices, kernels::kMaxReduceBlocks));
    const int rows = std::min(x.dim, 65535);
    const std::size_t partials_size = static_cast<std::size_t>(x.dim) * blocks_x;
    if (moment_partials_.size() < partials_size) {
      ensemble_.synchronize();
      moment_partials_ = DeviceArray<double>(partials_size);
    }
    const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(rows));
    kernels::dimension_partial_sums_kernel<Value, Term>
        <<<grid, kernels::kReduceBlockSize, 0, ensemble_.stream()>>>(x, term,
                                                                     moment_partials_.data());
    MYRIAD_CHECK_LAUNCH();
    kernels::finish_dimension_sums_kernel<double>
        <<<rows, kernels::kReduceBlockSize, 0, ensemble_.stream()>>>(moment_partials_.data(),
                                                                     blocks_x, x.dim, divisor, out);
    MYRIAD_CHECK_LAUNCH();
  }

  int dim_;
  int init_grid_ = 1;
  int iterations_grid_ = 1;

  HmcEnsembleArrays<DeviceArray, T> state_;
  int nuts_grid_ = 1;
  DeviceArray<double> moment_partials_, moment_results_;
  DeviceArray<double> covariance_partials_, covariance_results_;  ///< position_covariance
  // Trajectory-length criterion: per-chain terms [row][chain], the probe (centre, direction)
  // and the sums (allocated by the first run_with_criterion).
  DeviceArray<double> criterion_terms_;
  DeviceArray<T> criterion_probe_;
  DeviceArray<double> criterion_sums_;
  cuda_detail::DrawChunks<T> draws_;
  using Base::ensemble_;  // the device and stream, named unqualified throughout
};

/// The CUDA backend for `model` with `chains` chains on the current device (declared in
/// backend/hmc_backend.hpp).
template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_cuda_hmc_backend(const Model& model, std::int64_t chains) {
  return std::make_unique<CudaHmcBackend<Model, T>>(model, chains);
}

}  // namespace myriad
