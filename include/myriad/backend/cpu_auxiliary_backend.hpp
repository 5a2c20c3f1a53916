#pragma once
// The CPU backend of the auxiliary-variable samplers: an OpenMP loop over the per-chain bodies
// of detail/auxiliary_chain_bodies.hpp, the functions the CUDA kernels loop over. State is
// [chain][coordinate], each chain running all iterations of a call before the next starts (its
// state stays in cache); every random number is keyed by (seed, chain, iteration, purpose,
// draw), so the results are the GPU's [coordinate][chain] layout's.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "myriad/backend/auxiliary_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/auxiliary_chain_bodies.hpp"
#include "myriad/detail/cpu_draw_chunks.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/model/estimator.hpp"

namespace myriad {

template <class Model, class T>
class CpuAuxiliaryBackend final : public CpuEnsemble<Model, AuxiliaryBackend<T>> {
 public:
  CpuAuxiliaryBackend(const Model& model, std::int64_t chains, AuxiliaryMethod method)
      : CpuEnsemble<Model, AuxiliaryBackend<T>>(model, chains),
        method_(method),
        dim_(model.dim()),
        state_dim_(auxiliary_state_dim(method, model.dim())),
        auxiliary_dim_(stored_auxiliary_dim(model, method)),
        storage_(estimator_storage(model, method)) {
    MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
    const auto c = static_cast<std::size_t>(chains);
    for (auto* array : {&position_, &proposal_, &direction_}) array->assign(c * state_dim_, T(0));
    mapped_.assign(c * dim_, T(0));
    auxiliary_.assign(c * auxiliary_dim_, T(0));
    log_target_.assign(c, T(0));
    counter_.assign(c, 0);
    capped_.assign(c, 0);
    caches_.assign(c * 2 * static_cast<std::size_t>(storage_.cache_size), T(0));
    workspace_.assign(c * static_cast<std::size_t>(storage_.workspace_size), T(0));
    cache_slot_.assign(storage_.cache_size > 0 ? c : 0, 0);
    scale_.assign(static_cast<std::size_t>(dim_), T(1));
  }

  int dim() const override { return dim_; }
  int auxiliary_dim() const override { return auxiliary_dim_; }

  void set_scale(const std::vector<T>& scale) override {
    MYRIAD_EXPECTS(scale.size() == static_cast<std::size_t>(dim_), "scale: expected ", dim_,
                   " values, got ", scale.size());
    scale_ = scale;
  }

  std::int64_t initialize(const AuxiliarySettings<T>& settings, T radius, int max_tries) override {
    check_method(settings);
    const AuxiliaryEnsembleView<T> state = view();
    std::int64_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
      if (!initialize_auxiliary_chain(this->model_, state.chain(c), rng, settings, c, radius,
                                      max_tries))
        ++failed;
    }
    std::fill(capped_.begin(), capped_.end(), 0);
    return failed;
  }

  IterationStats run(const AuxiliarySettings<T>& settings, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations, EnsembleMoments* moments) override {
    check_method(settings);
    AuxiliarySettings<T> own = settings;
    own.scale = scale_.data();
    const AuxiliaryEnsembleView<T> state = view();
    const int quantities = this->num_quantities();
    const IterationStats total =
        run_in_draw_chunks(num_iterations, chunk_iterations, quantities, this->chains_, sink,
                           first_draw, chunk_, [&](int done, int n, T* recorded) {
                             IterationStats stats;
      // One chain at a time: a chain runs a whole chunk of iterations,
      // so the scheduling costs nothing, and a few heavy chains (GP
      // probit) still spread over every thread.
#pragma omp parallel for schedule(dynamic) reduction(merge_stats : stats)
                             for (std::int64_t c = 0; c < this->chains_; ++c) {
                               const RandomStream rng(own.seed, static_cast<std::uint64_t>(c));
                               const IterationStats chain = auxiliary_chain_iterations(
                                   this->model_, state.chain(c), rng, own,
                                   first_iteration + static_cast<std::uint32_t>(done), n, recorded,
                                   quantities, this->chains_, c);
                               capped_[static_cast<std::size_t>(c)] += chain.slice_capped;
                               stats += chain;
                             }
                             return stats;
                           });
    if (moments) {
      ensemble_moments_cpu(
          EnsembleView<const T>{position_.data(), this->chains_, state_dim_, 1, state_dim_},
          *moments);
    }
    return total;
  }

  std::vector<std::int64_t> capped_per_chain() const override { return capped_; }

  std::vector<T> positions() const override {
    std::vector<T> out(position_.size());
    for (std::int64_t c = 0; c < this->chains_; ++c)
      for (int d = 0; d < state_dim_; ++d)
        out[static_cast<std::size_t>(d) * this->chains_ + c] = position_[c * state_dim_ + d];
    return out;
  }

 private:
  void check_method(const AuxiliarySettings<T>& settings) const {
    MYRIAD_EXPECTS(settings.method == method_,
                   "this auxiliary-sampler backend was built for another method");
  }
  EnsembleView<T> view(std::vector<T>& array, int dim) {
    return {array.data(), this->chains_, dim, 1, dim};
  }
  AuxiliaryEnsembleView<T> view() {
    return with_estimator_storage(
        AuxiliaryEnsembleView<T>{view(position_, state_dim_), view(proposal_, state_dim_),
                                 view(direction_, state_dim_), view(mapped_, dim_),
                                 view(auxiliary_, auxiliary_dim_), log_target_.data(),
                                 counter_.data()},
        storage_, caches_.data(), workspace_.data(), cache_slot_.data());
  }

  AuxiliaryMethod method_;
  int dim_, state_dim_, auxiliary_dim_;
  EstimatorStorage storage_;
  std::vector<T> position_, proposal_, direction_, mapped_, auxiliary_, log_target_, scale_, chunk_;
  std::vector<T> caches_, workspace_;  ///< a cached estimator's, chain-major
  std::vector<std::uint32_t> counter_;
  std::vector<std::uint8_t> cache_slot_;
  std::vector<std::int64_t> capped_;
};

}  // namespace myriad
