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
        sizes_(auxiliary_sizes(model, method)),
        rows_(EnsembleLayout::chain_major(chains)) {
    MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
    state_.allocate(rows_, sizes_);
    capped_.assign(static_cast<std::size_t>(chains), 0);
    scale_.assign(static_cast<std::size_t>(sizes_.dim), T(1));
  }

  int dim() const override { return sizes_.dim; }
  int auxiliary_dim() const override { return sizes_.auxiliary_dim; }

  void set_scale(const std::vector<T>& scale) override {
    MYRIAD_EXPECTS(scale.size() == static_cast<std::size_t>(sizes_.dim), "scale: expected ",
                   sizes_.dim, " values, got ", scale.size());
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
          rows_.view(static_cast<const T*>(state_.position.data()), sizes_.state_dim), *moments);
    }
    return total;
  }

  std::vector<std::int64_t> capped_per_chain() const override { return capped_; }

  std::vector<T> positions() const override {
    std::vector<T> out(state_.position.size());
    for (std::int64_t c = 0; c < this->chains_; ++c)
      for (int d = 0; d < sizes_.state_dim; ++d)
        out[static_cast<std::size_t>(d) * this->chains_ + c] =
            state_.position[c * sizes_.state_dim + d];
    return out;
  }

 private:
  void check_method(const AuxiliarySettings<T>& settings) const {
    MYRIAD_EXPECTS(settings.method == method_,
                   "this auxiliary-sampler backend was built for another method");
  }
  AuxiliaryEnsembleView<T> view() { return state_.view(rows_, sizes_); }

  AuxiliaryMethod method_;
  AuxiliarySizes sizes_;
  EnsembleLayout rows_;  ///< [chain][dim]
  AuxiliaryEnsembleArrays<HostVector, T> state_;
  std::vector<T> scale_, chunk_;
  std::vector<std::int64_t> capped_;
};

}  // namespace myriad
