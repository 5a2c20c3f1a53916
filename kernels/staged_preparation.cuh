#pragma once
// Runs a staged estimator's preparations (model/staged_preparation.hpp) across all chains at once:
// each chain's dense n × n steps go to the library tier of linalg/batched_cholesky.hpp (cuSOLVER
// potrfBatched, cuBLAS gemmBatched) together, and the per-chain work between them runs one chain
// per thread, the model's continue_preparation, the code the CPU runs inside the chain.
//
// A kernel that begins preparations (the auxiliary samplers' begin_walk_transition or
// begin_log_target) records each chain's first step, cache and workspace in a PreparationQueue;
// run() then repeats rounds until no chain has a step left:
//
//   gather    every chain with a step appends its matrices to the round's factor or gram list
//             (one atomic per chain: positions vary between runs, results do not, since each
//             library call treats its matrices independently)
//   count     the two list lengths come back to the host (one small copy and a synchronisation
//             per round; a round's factorisations of n = 683 cost milliseconds)
//   library   potrfBatched on the factor list, gemmBatched on the gram list
//   continue  every chain with a step takes its info and asks the model for its next step
//
// Chains run different numbers of rounds (the GP probit's Newton iterations): a chain that is
// done waits, costing nothing in the library calls, which see only the chains with work.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/model/staged_preparation.hpp"

namespace myriad {

/// Per chain: the pending step of its preparation and the storage it prepares.
template <class T>
struct PreparationQueue {
  PreparationStep* step;
  T** cache;
  T** workspace;

  MYRIAD_HD void start(std::int64_t c, PreparationStep first, T* chain_cache,
                       T* chain_workspace) const {
    step[c] = first;
    cache[c] = chain_cache;
    workspace[c] = chain_workspace;
  }
};

/// One round's lists of matrices for the library, and where each chain's matrix went.
template <class T>
struct PreparationRound {
  T** factor;            ///< [slot] matrices to factor
  int* factor_info;      ///< [slot] their LAPACK statuses
  const T** gram_a;      ///< [slot] a of b ← aᵀ a
  T** gram_b;            ///< [slot] b
  int* slot;             ///< [chain] the chain's position in its list
  unsigned int* counts;  ///< [2] lengths of the factor and gram lists
};

namespace kernels {

template <class T>
MYRIAD_KERNEL void gather_preparation_kernel(PreparationQueue<T> queue, std::int64_t chains,
                                             PreparationRound<T> round) {
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const PreparationStep step = queue.step[c];
    if (step.kind == PreparationKind::done) continue;
    T* const cache = queue.cache[c];
    T* const workspace = queue.workspace[c];
    if (step.kind == PreparationKind::factor) {
      const unsigned int k = atomicAdd(&round.counts[0], 1u);
      round.factor[k] = step.a.in(cache, workspace);
      round.slot[c] = static_cast<int>(k);
    } else {
      const unsigned int k = atomicAdd(&round.counts[1], 1u);
      round.gram_a[k] = step.a.in(cache, workspace);
      round.gram_b[k] = step.b.in(cache, workspace);
      round.slot[c] = static_cast<int>(k);
    }
  }
}

template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    continue_preparation_kernel(Model model, PreparationQueue<T> queue, std::int64_t chains,
                                PreparationRound<T> round) {
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const PreparationStep step = queue.step[c];
    if (step.kind == PreparationKind::done) continue;
    const int info = step.kind == PreparationKind::factor ? round.factor_info[round.slot[c]] : 0;
    queue.step[c] = model.continue_preparation(queue.cache[c], queue.workspace[c], info);
  }
}

}  // namespace kernels

/// The per-chain queue and per-round lists of a staged estimator's preparations (file comment).
template <class T>
class StagedPreparation {
 public:
  StagedPreparation() = default;
  StagedPreparation(std::int64_t chains, int n)
      : chains_(chains),
        n_(n),
        step_(static_cast<std::size_t>(chains)),
        cache_(static_cast<std::size_t>(chains)),
        workspace_(static_cast<std::size_t>(chains)),
        factor_(static_cast<std::size_t>(chains)),
        gram_b_(static_cast<std::size_t>(chains)),
        gram_a_(static_cast<std::size_t>(chains)),
        factor_info_(static_cast<std::size_t>(chains)),
        slot_(static_cast<std::size_t>(chains)),
        counts_(2) {
    MYRIAD_EXPECTS(chains <= std::int64_t{1} << 30,
                   "a staged preparation batches at most 2^30 chains per library call, got ",
                   chains);
  }

  PreparationQueue<T> queue() const { return {step_.data(), cache_.data(), workspace_.data()}; }

  /// Runs every queued preparation to its end on `stream` (file comment), with the model's
  /// continue_preparation between rounds. Returns the number of rounds; synchronises the stream
  /// once per round.
  template <class Model>
  int run(const Model& model, cudaStream_t stream, int grid) {
    const PreparationRound<T> round{
        factor_.data(), factor_info_.data(), const_cast<const T**>(gram_a_.data()),
        gram_b_.data(), slot_.data(),        counts_.data()};
    for (int rounds = 0;; ++rounds) {
      // Every model states a bounded number of steps (the GP probit caps its Newton iterations);
      // this only guards against a model that never says done.
      MYRIAD_EXPECTS(rounds < kMaxRounds, "a staged preparation did not finish in ", kMaxRounds,
                     " rounds: the model's continue_preparation never says done");
      MYRIAD_CUDA_TRY(cudaMemsetAsync(counts_.data(), 0, 2 * sizeof(unsigned int), stream));
      kernels::gather_preparation_kernel<T>
          <<<grid, kernels::kChainBlockSize, 0, stream>>>(queue(), chains_, round);
      MYRIAD_CHECK_LAUNCH();
      unsigned int counts[2] = {0, 0};
      MYRIAD_CUDA_TRY(
          cudaMemcpyAsync(counts, counts_.data(), sizeof counts, cudaMemcpyDeviceToHost, stream));
      MYRIAD_CUDA_TRY(cudaStreamSynchronize(stream));
      if (counts[0] == 0 && counts[1] == 0) return rounds;
      linalg::batched_cholesky_pointers_cuda(factor_.data(), n_, static_cast<int>(counts[0]),
                                             factor_info_.data(), stream);
      linalg::batched_gram_pointers_cuda(round.gram_a, gram_b_.data(), n_,
                                         static_cast<int>(counts[1]), stream);
      kernels::continue_preparation_kernel<Model, T>
          <<<grid, kernels::kChainBlockSize, 0, stream>>>(model, queue(), chains_, round);
      MYRIAD_CHECK_LAUNCH();
    }
  }

 private:
  static constexpr int kMaxRounds = 1 << 16;
  std::int64_t chains_ = 0;
  int n_ = 0;
  DeviceArray<PreparationStep> step_;
  DeviceArray<T*> cache_, workspace_, factor_, gram_b_, gram_a_;
  DeviceArray<int> factor_info_, slot_;
  DeviceArray<unsigned int> counts_;
};

}  // namespace myriad
