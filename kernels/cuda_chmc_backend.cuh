#pragma once
// The CUDA backend of many-chain constrained HMC (backend/chmc_backend.hpp): device-resident
// state and scratch, one thread or one warp per chain (ChmcChainMapping) running the per-chain
// transition of mcmc/chmc.hpp (kernels/chmc_kernels.cuh), and recorded draws streamed
// to the host in chunks while the next chunk computes, as CudaHmcBackend does
// (kernels/cuda_hmc_backend.cuh).
//
// The library instantiates make_cuda_chmc_backend for its built-in generators
// (kernels/builtin_instances.cmake). For a generator of your own, include this header in a .cu file
// compiled by nvcc and instantiate
//
//   template std::unique_ptr<myriad::ChmcBackend<double>>
//   myriad::make_cuda_chmc_backend<MyGenerator, double>(const MyGenerator&, std::int64_t,
//                                                       myriad::ChmcCudaOptions);
//
// Mapping. resolve_chmc_chain_mapping (backend/chmc_backend.hpp) turns `automatic` into warp for
// a dense Gram with M ≥ 16 and into thread otherwise; device_name() says which ran.
//
// Gram factorisation (backend/gram_factorization.hpp; `automatic`: library for a dense Gram under
// the warp mapping, chain otherwise, as measured there). `chain`: one fused launch per chunk of
// iterations, each chain's thread or warp factoring its own Gram matrices. Batched
// (`registers`, `thread`, `tile`, `library`): per iteration a begin launch and then, for each of
// the transition's 1 + N_s · N_g factorisations, linalg::batched_cholesky_cuda on that tier over
// every chain's pending Gram matrix and a resume launch (kernels/chmc_kernels.cuh), all on the
// compute stream; the Gram matrices then live in two column-major batches of chains · M² values
// instead of the scratch, with an int status and a ChmcProgress record per chain.
// Initialisation factors in the chain either way (once per run).
//
// Memory. The state is [element][chain] with a stride of chains rounded up to a multiple of 32,
// so every element's row starts on a 128-byte boundary and a warp's accesses coalesce; the
// scratch is laid out the same way for the thread mapping and [chain][element] (blocks padded to
// 32 bytes) for the warp mapping (kernels::ChmcScratchPlacement). Per chain (ChmcLayout of
// mcmc/chmc.hpp; dense Gram structure):
//
//   u, ∇φ, φ                        2N + 1                          values of T
//   T workspace                      6N + M + 2(MN + M²) + MN + V    (J and L at the two ends of
//                                                                    a sub-step, C = G⁻¹J, and V
//                                                                    for the generator's
//                                                                    add_jacobian_vjp)
//   Dual<T> workspace                MN + M (M with add_jacobian_vjp) (∂J along one direction)
//   Dual<Dual<T>> workspace          M                               (nested-dual outputs)
//   statistics                       10 · 8                          bytes
//   initialisation flag, back-off    1 + 1                           bytes (back-off: warm-up's
//                                                                    h_c, step_back_off.hpp)
//   batched factorisation only:      the 2M² of L move from the T workspace to the Gram batches,
//                                    plus sizeof(int) + sizeof(ChmcProgress<T>) bytes
//
// (The warp mapping gives each lane its own M-vectors of duals and nested duals when the
// generator has no analytic Jacobian, whose forward passes the lanes share: 32M of each.)
//
// i.e. 8(5MN + 2M² + 8N + 7M + 1) + 82 bytes in double without add_jacobian_vjp (a dual is two
// values, a nested dual four), dominated by the M × N matrices. The structured factors
// (constraint_factor.hpp) keep J in the same M × N layout, so the built-in generators need:
// sphere (N = 10) 1.2 kB, lotka_volterra (M = 100, N = 104; with add_jacobian_vjp, V = 202)
// 270 kB, lotka_volterra_summaries (M = 9; V = 1302) 41 kB, gld (M = 250, N = 254) 2.6 MB per
// chain, i.e. 2^14 gld chains take 42 GB. The constructor compares the total with cudaMemGetInfo's
// free memory and throws myriad::invalid_argument naming the bytes per chain and the number of
// chains that would fit, rather than failing inside cudaMalloc. Two chunk buffers of
// chunk_iterations × quantities × chains values come on top (checked the same way); device memory
// does not grow with the number of draws.
//
// Streams: kernels on a compute stream; recorded draws leave in chunks through draw_chunks.cuh
// (chunk k + 1 computes while chunk k is copied and handed to the sink).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "chmc_kernels.cuh"
#include "cuda_buffers.cuh"
#include "cuda_ensemble.cuh"
#include "cuda_try.cuh"
#include "device_scope.cuh"
#include "draw_chunks.cuh"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/backend/gram_factorization.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/concept.hpp"
#include "reduction.cuh"

namespace myriad {

/// Many-chain constrained HMC on the current CUDA device (see the file comment for layout,
/// memory and streams). Generator must be trivially copyable and hold only device-visible data:
/// it is passed to the kernels by value.
template <class Generator, class T>
class CudaChmcBackend final : public cuda_detail::CudaEnsemble<Generator, ChmcBackend<T>> {
  using Base = cuda_detail::CudaEnsemble<Generator, ChmcBackend<T>>;

 public:
  /// Number of per-chain statistics counters (kernels::ChainStatisticsView).
  static constexpr int kCounters = kernels::ChainStatisticsView::kCounters;

  /// Device bytes per chain of the state, scratch, statistics and initialisation flag (the
  /// table in the file comment, without the warp mapping's padding to 32 bytes); chunk buffers
  /// not included.
  static std::int64_t bytes_per_chain(const ChmcLayout& layout) {
    const std::int64_t batched =
        layout.external_gram ? static_cast<std::int64_t>(sizeof(T)) * 2 * layout.m * layout.m +
                                   static_cast<std::int64_t>(sizeof(int) + sizeof(ChmcProgress<T>))
                             : 0;
    return static_cast<std::int64_t>(sizeof(T)) * (2 * std::int64_t(layout.n) + 1 + layout.size()) +
           static_cast<std::int64_t>(sizeof(Dual<T>)) * layout.dual_size() +
           static_cast<std::int64_t>(sizeof(Dual<Dual<T>>)) * layout.nested_size() +
           kCounters * static_cast<std::int64_t>(sizeof(std::int64_t)) + 2 + batched;
  }

  /// Allocates the state and scratch of `chains` chains on the current device for the options'
  /// mapping and Gram factorisation (resolved as resolve_chmc_chain_mapping and
  /// resolve_gram_factorization say). Throws myriad::unavailable_error when no CUDA device is
  /// usable, myriad::invalid_argument for a bad chain count, generator shape or option, or when
  /// the arrays exceed the free device memory, myriad::cuda_error when a CUDA call fails.
  CudaChmcBackend(const Generator& generator, std::int64_t chains, ChmcCudaOptions options = {})
      : Base(generator, chains, checked_device(chains, generator, options)),
        mapping_(resolve_chmc_chain_mapping(
            options.chain_mapping, generator_gram_structure<Generator>, generator.output_dim())),
        factorization_(resolve_gram_factorization(options.gram_factorization,
                                                  generator_gram_structure<Generator>, mapping_)),
        layout_(chmc_layout<Generator, T>(
            generator, mapping_ == ChmcChainMapping::warp ? kernels::WarpTeam::kLanes : 1,
            is_batched(factorization_))),
        scratch_(mapping_ == ChmcChainMapping::warp
                     ? kernels::ChmcScratchPlacement::chain_major<T>(layout_)
                     : kernels::ChmcScratchPlacement::interleaved(this->stride())) {
    device_name_ =
        ensemble_.name() + ", one " + to_string(mapping_) + " per chain, Gram factored " +
        (is_batched(factorization_) ? std::string("batched (") + to_string(factorization_) + ")"
                                    : std::string("in the chain"));
    if (is_batched(factorization_) && factorization_ != GramFactorization::library) {
      const int largest = linalg::batched_cholesky_max_size<T>(cholesky_tier(factorization_));
      MYRIAD_EXPECTS(layout_.m <= largest, "the batched Gram factorisation '",
                     to_string(factorization_), "' takes M up to ", largest, " on ",
                     ensemble_.name(), "; this generator has M = ", layout_.m,
                     " (use library or chain)");
    }

    const auto stride = static_cast<std::size_t>(this->stride());
    const auto n = static_cast<std::size_t>(layout_.n);
    const auto work_values =
        static_cast<std::size_t>(scratch_.work_values(layout_, this->chains_, this->stride()));
    const auto dual_values =
        static_cast<std::size_t>(scratch_.dual_values(layout_, this->chains_, this->stride()));
    const auto nested_values =
        static_cast<std::size_t>(scratch_.nested_values(layout_, this->chains_, this->stride()));
    const std::size_t state_values = (2 * n + 1) * stride;
    const bool batched = is_batched(factorization_);
    const std::size_t gram_values =
        batched ? 2 * static_cast<std::size_t>(this->chains_) * layout_.m * layout_.m : 0;
    // The library tier's handles now, so that their workspace is counted as used below; and
    // what each factorisation call allocates while it runs.
    if (factorization_ == GramFactorization::library)
      linalg::prepare_batched_cholesky_cuda(linalg::CholeskyTier::library);
    const std::size_t batched_bytes =
        batched
            ? static_cast<std::size_t>(this->chains_) * (sizeof(int) + sizeof(ChmcProgress<T>)) +
                  static_cast<std::size_t>(linalg::batched_cholesky_call_bytes(
                      cholesky_tier(factorization_), this->chains_))
            : 0;
    check_fits(
        static_cast<std::int64_t>(
            (state_values + work_values + gram_values) * sizeof(T) + dual_values * sizeof(Dual<T>) +
            nested_values * sizeof(Dual<Dual<T>>) +
            static_cast<std::size_t>(this->chains_) * (kCounters * sizeof(std::int64_t) + 2) +
            batched_bytes),
        "the constrained-HMC state and scratch");

    state_.allocate(this->rows_, layout_, scratch_, batched);
    this->allocate_chain_records();
    if (batched) {
      gram_info_ = DeviceArray<int>(static_cast<std::size_t>(this->chains_));
      progress_ = DeviceArray<ChmcProgress<T>>(static_cast<std::size_t>(this->chains_));
    }

    // Defined contents everywhere, the stride padding and scratch included, so that a
    // sanitizer's initcheck stays quiet and positions() of an uninitialised ensemble reads
    // zeros, like the CPU backend (all-zero bytes are 0.0 for T and its duals).
    for (DeviceArray<T>* array :
         {&state_.position, &state_.gradient, &state_.potential, &state_.work, &state_.gram})
      ensemble_.zero(*array);
    ensemble_.zero(state_.dual_work);
    ensemble_.zero(state_.nested_work);
    ensemble_.zero(state_.step_halvings);
    ensemble_.zero(gram_info_);
    ensemble_.zero(progress_);
    ensemble_.synchronize();

    if (mapping_ == ChmcChainMapping::warp) {
      init_grid_ = ensemble_.warp_grid(kernels::initialize_chmc_chains_warp_kernel<Generator, T>,
                                       kernels::kWarpChainBlockSize, this->chains_);
      iterations_grid_ = ensemble_.warp_grid(kernels::chmc_iterations_warp_kernel<Generator, T>,
                                             kernels::kWarpChainBlockSize, this->chains_);
      phase_grid_ = ensemble_.warp_grid(
          kernels::resume_chmc_transitions_kernel<Generator, T, kernels::WarpTeam>,
          kernels::kWarpChainBlockSize, this->chains_);
    } else {
      init_grid_ =
          ensemble_.chain_grid(kernels::initialize_chmc_chains_kernel<Generator, T>, this->chains_);
      iterations_grid_ =
          ensemble_.chain_grid(kernels::chmc_iterations_kernel<Generator, T>, this->chains_);
      phase_grid_ = ensemble_.chain_grid(
          kernels::resume_chmc_transitions_kernel<Generator, T, SerialTeam>, this->chains_);
    }
  }

  /// Waits for the kernels in flight before the arrays are freed (draws_ waits for its copies).
  ~CudaChmcBackend() override { cudaStreamSynchronize(ensemble_.stream()); }

  int input_dim() const override { return layout_.n; }
  /// e.g. "NVIDIA H100 80GB HBM3 (sm_90), one warp per chain".
  std::string device_name() const override { return device_name_; }

  std::int64_t initialize(std::uint64_t seed, int max_tries,
                          std::int64_t chains_per_init) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_chains_per_init(chains_per_init);
    if (mapping_ == ChmcChainMapping::warp) {
      kernels::initialize_chmc_chains_warp_kernel<Generator, T>
          <<<init_grid_, kernels::kWarpChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, ensemble_view(), this->initialized_.data(), seed, max_tries,
              chains_per_init);
    } else {
      kernels::initialize_chmc_chains_kernel<Generator, T>
          <<<init_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, ensemble_view(), this->initialized_.data(), seed, max_tries,
              chains_per_init);
    }
    MYRIAD_CHECK_LAUNCH();
    ensemble_.zero(state_.step_halvings);
    return this->failed_initializations();
  }

  IterationStats run(const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_iteration_count(num_iterations);
    const kernels::ChainStatisticsView stats = this->fresh_statistics();
    draws_.run(
        ensemble_.stream(), num_iterations, chunk_iterations, this->values_per_iteration(), sink,
        first_draw, [this](std::int64_t bytes) { check_fits(bytes, "the two draw-chunk buffers"); },
        [&](int done, int n, T* recorded) {
          const std::uint32_t first = first_iteration + static_cast<std::uint32_t>(done);
          if (is_batched(factorization_)) {
            if (mapping_ == ChmcChainMapping::warp) {
              run_phased<kernels::WarpTeam>(settings, first, n, recorded, stats);
            } else {
              run_phased<SerialTeam>(settings, first, n, recorded, stats);
            }
          } else if (mapping_ == ChmcChainMapping::warp) {
            kernels::chmc_iterations_warp_kernel<Generator, T>
                <<<iterations_grid_, kernels::kWarpChainBlockSize, 0, ensemble_.stream()>>>(
                    this->model_, ensemble_view(), settings, first, n, recorded,
                    this->num_quantities_, stats);
            MYRIAD_CHECK_LAUNCH();
          } else {
            kernels::chmc_iterations_kernel<Generator, T>
                <<<iterations_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
                    this->model_, ensemble_view(), settings, first, n, recorded,
                    this->num_quantities_, stats);
            MYRIAD_CHECK_LAUNCH();
          }
        });

    return this->total_statistics();
  }

  std::vector<T> positions() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    // Drop the stride padding: the host array is [dim][chain] with stride chains.
    return ensemble_.rows_to_host(state_.position.data(), this->chains_, this->stride(), layout_.n);
  }

  std::vector<std::uint8_t> step_halvings() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    return ensemble_.rows_to_host(state_.step_halvings.data(), this->chains_, this->chains_, 1);
  }

  /// The state, the workspace and the batched Gram factors.
  ChmcChainState chain_state() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    ensemble_.synchronize();
    ChmcChainState out;
    const auto save = [&out](const auto& array, const char*) {
      out.arrays.push_back(state_bytes(array.download()));
    };
    kernels::for_each_checkpointed(state_, save);
    save(state_.gram, "");
    return out;
  }

  void restore_chain_state(const ChmcChainState& state) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    MYRIAD_EXPECTS(state.arrays.size() == 6, "restore_chain_state: ", state.arrays.size(),
                   " arrays, the CUDA backend holds 6 (a state of another backend)");
    ensemble_.synchronize();
    std::size_t next = 0;
    const auto restore = [&](auto& array, const char* name) {
      restore_array(array, state.arrays[next++], name);
    };
    kernels::for_each_checkpointed(state_, restore);
    restore(state_.gram, "the batched Gram factors");
  }

  std::vector<T> log_densities() const override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    std::vector<T> out =
        ensemble_.rows_to_host(state_.potential.data(), this->chains_, this->stride(), 1);
    for (T& value : out) value = -value;
    return out;
  }

  std::int64_t copy_chains(const std::vector<std::int64_t>& source) override {
    const cuda_detail::DeviceScope on_device(ensemble_.device());
    check_chain_sources(source, this->chains_);
    const DeviceArray<std::int64_t> device_source = ensemble_.to_device(source);
    // initialized_ (one flag per chain, read only by initialize()) takes each chain's outcome.
    if (mapping_ == ChmcChainMapping::warp) {
      kernels::restart_chmc_chains_warp_kernel<Generator, T>
          <<<init_grid_, kernels::kWarpChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, ensemble_view(), device_source.data(), this->initialized_.data());
    } else {
      kernels::restart_chmc_chains_kernel<Generator, T>
          <<<init_grid_, kernels::kChainBlockSize, 0, ensemble_.stream()>>>(
              this->model_, ensemble_view(), device_source.data(), this->initialized_.data());
    }
    MYRIAD_CHECK_LAUNCH();
    // reduce_sum waits for the stream, so device_source outlives the kernel that reads it.
    return this->failed_initializations();
  }

 private:
  /// A device array's bytes put back from a checkpoint (sizes checked as on the CPU).
  template <class Value>
  static void restore_array(DeviceArray<Value>& array, const std::vector<unsigned char>& bytes,
                            const char* what) {
    std::vector<Value> host(array.size());
    restore_state_bytes(host, bytes, what);
    array.upload(host);
  }
  /// Iterations first … first + n − 1 with the batched Gram factorisation, on the compute
  /// stream (kernels::run_phased_iteration's schedule): per iteration a begin launch, then for
  /// each factorisation the batched Cholesky of the pending factor's batch and a resume launch;
  /// the last resume records and counts.
  template <class Team>
  void run_phased(const ChmcSettings<T>& settings, std::uint32_t first, int n, T* recorded,
                  const kernels::ChainStatisticsView& stats) {
    constexpr int block = kernels::ChainGrid<Team>::kBlockSize;
    const kernels::ChmcEnsembleView<T> state = ensemble_view();
    const linalg::CholeskyTier tier = cholesky_tier(factorization_);
    for (int i = 0; i < n; ++i) {
      const std::uint32_t iteration = first + static_cast<std::uint32_t>(i);
      T* recorded_iteration =
          recorded != nullptr
              ? recorded + static_cast<std::int64_t>(i) * this->num_quantities_ * this->chains_
              : nullptr;
      kernels::run_phased_iteration(
          settings, iteration,
          [&] {
            kernels::begin_chmc_transitions_kernel<Generator, T, Team>
                <<<phase_grid_, block, 0, ensemble_.stream()>>>(this->model_, state,
                                                                progress_.data());
            MYRIAD_CHECK_LAUNCH();
          },
          [&](int which) {
            linalg::batched_cholesky_cuda(state.gram_batch(which), layout_.m, this->chains_,
                                          gram_info_.data(), tier, ensemble_.stream());
          },
          [&](const ChmcStep<T>& step, int phase, bool last) {
            kernels::resume_chmc_transitions_kernel<Generator, T, Team>
                <<<phase_grid_, block, 0, ensemble_.stream()>>>(
                    this->model_, state, settings.seed, iteration, step, settings.step_back_off,
                    phase, gram_info_.data(), progress_.data(), last, recorded_iteration,
                    this->num_quantities_, stats);
            MYRIAD_CHECK_LAUNCH();
          });
    }
  }

  /// The resolved mapping; throws myriad::invalid_argument for a value outside the enum.
  /// Validates the arguments and returns the current device. Runs before the base creates the
  /// stream, so that a missing device reads as unavailable_error rather than as a failed
  /// cudaStreamCreate, and bad arguments as invalid_argument on any machine.
  static int checked_device(std::int64_t chains, const Generator& generator,
                            const ChmcCudaOptions& options) {
    check_chain_count(chains);
    const ChmcLayout layout = chmc_layout<Generator, T>(generator);
    MYRIAD_EXPECTS(layout.m >= 1 && layout.m <= layout.n,
                   "a generator needs 1 <= M <= N, got M = ", layout.m, ", N = ", layout.n);
    const ChmcChainMapping requested = options.chain_mapping;
    MYRIAD_EXPECTS(requested == ChmcChainMapping::automatic ||
                       requested == ChmcChainMapping::thread || requested == ChmcChainMapping::warp,
                   "unknown constrained-HMC chain mapping ", static_cast<int>(requested));
    // Throws for a factorisation the mapping cannot use.
    resolve_gram_factorization(
        options.gram_factorization, generator_gram_structure<Generator>,
        resolve_chmc_chain_mapping(requested, generator_gram_structure<Generator>, layout.m));
    return cuda_detail::current_device_or_throw();
  }

  /// Throws myriad::invalid_argument when `bytes` more device memory than is free would be
  /// needed: a clear message (bytes per chain, how many chains fit) instead of a failed
  /// cudaMalloc deep inside the constructor.
  void check_fits(std::int64_t bytes, const char* what) const {
    std::size_t free_bytes = 0, total_bytes = 0;
    MYRIAD_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes <= static_cast<std::int64_t>(free_bytes)) return;
    const std::int64_t per_chain = bytes_per_chain(layout_);
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    throw invalid_argument(detail::concat(
        what, " of ", this->chains_, " chains need ", static_cast<double>(bytes) / kGiB,
        " GiB of device memory but only ", static_cast<double>(free_bytes) / kGiB, " GiB of ",
        static_cast<double>(total_bytes) / kGiB, " GiB is free on ", ensemble_.name(), " (",
        per_chain, " bytes per chain for M = ", layout_.m, ", N = ", layout_.n, "; about ",
        static_cast<std::int64_t>(free_bytes) / std::max<std::int64_t>(per_chain, 1),
        " chains fit): use fewer chains"));
  }

  kernels::ChmcEnsembleView<T> ensemble_view() {
    return state_.view(this->rows_, layout_, scratch_);
  }

  ChmcChainMapping mapping_;         ///< resolved: thread or warp
  GramFactorization factorization_;  ///< resolved: chain or a batched tier
  ChmcLayout layout_;                ///< for one lane, or for a warp's (mapping_)
  kernels::ChmcScratchPlacement scratch_;
  std::string device_name_;  ///< the device's, with the mapping and factorisation
  int init_grid_ = 1;
  int iterations_grid_ = 1;
  int phase_grid_ = 1;  ///< begin and resume launches of the batched factorisation

  kernels::ChmcEnsembleArrays<DeviceArray, T> state_;
  DeviceArray<int> gram_info_;  ///< batched factorisation: the last Cholesky's status per chain
  DeviceArray<ChmcProgress<T>> progress_;  ///< batched factorisation: one record per chain
  cuda_detail::DrawChunks<T> draws_;
  using Base::ensemble_;  // the device and stream, named unqualified throughout
};

/// The CUDA constrained-HMC backend for `generator` with `chains` chains on the current device
/// (declared in backend/chmc_backend.hpp).
template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cuda_chmc_backend(const Generator& generator,
                                                       std::int64_t chains,
                                                       ChmcCudaOptions options) {
  return std::make_unique<CudaChmcBackend<Generator, T>>(generator, chains, options);
}

}  // namespace myriad
