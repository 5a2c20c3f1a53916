#pragma once
// Backends for the ABC baselines (mcmc/abc.hpp): ABC rejection and pseudo-marginal ABC-MCMC.
// The CPU implementation is an OpenMP loop over chains or simulations; a CUDA one would follow
// the HMC backends' shape.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/chain_ensemble.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_draw_chunks.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/mcmc/abc.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// Accepted draws of an ABC rejection run: recorded quantities of every simulation within ε.
struct AbcRejectionResult {
  std::int64_t simulations = 0;
  std::int64_t accepted = 0;
  std::int64_t non_finite = 0;
  std::vector<double> quantities;  ///< [accepted][quantity], in simulation order
};

template <class T>
class AbcBackend : public ChainEnsemble {
 public:
  /// K: the inputs ABC-MCMC moves by random walk (abc_parameter_count).
  virtual int parameter_count() const = 0;

  /// ABC rejection: simulations s = first … first + n − 1 from the prior (stream (seed, s)),
  /// keeping those with ‖x − x̄‖₂ ≤ ε.
  virtual AbcRejectionResult rejection(std::uint64_t seed, std::int64_t first, std::int64_t n,
                                       T epsilon) = 0;

  /// Starts every ABC-MCMC chain at a point on the manifold (distance 0: inside any kernel).
  virtual std::int64_t initialize(std::uint64_t seed, int max_tries, const AbcStep<T>& step) = 0;

  /// ABC-MCMC iterations, delivering recorded quantities to the sink as HmcBackend::run does.
  virtual IterationStats run(std::uint64_t seed, const AbcStep<T>& step,
                             std::uint32_t first_iteration, int num_iterations, DrawSink<T>* sink,
                             std::int64_t first_draw, int chunk_iterations) = 0;
};

template <class Generator, class T>
class CpuAbcBackend final : public CpuEnsemble<Generator, AbcBackend<T>> {
 public:
  CpuAbcBackend(const Generator& g, std::int64_t chains)
      : CpuEnsemble<Generator, AbcBackend<T>>(g, chains), n_(g.input_dim()), m_(g.output_dim()) {
    MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
    const auto c = static_cast<std::size_t>(chains);
    position_.assign(c * n_, T(0));
    proposal_.assign(c * n_, T(0));
    prior_draw_.assign(c * n_, T(0));
    outputs_.assign(c * m_, T(0));
    log_kernel_.assign(c, T(0));
  }

  int parameter_count() const override { return abc_parameter_count(this->model_); }

  AbcRejectionResult rejection(std::uint64_t seed, std::int64_t first, std::int64_t n,
                               T epsilon) override {
    const int q = this->num_quantities();
    std::vector<char> keep(static_cast<std::size_t>(n), 0);
    std::vector<T> recorded(static_cast<std::size_t>(n) * q);
    std::int64_t non_finite = 0;
#pragma omp parallel reduction(+ : non_finite)
    {
      std::vector<T> u(n_), x(m_);
      DenseVector<T> u_view{u.data(), n_}, x_view{x.data(), m_};
#pragma omp for schedule(static)
      for (std::int64_t s = 0; s < n; ++s) {
        const RandomStream rng(seed, static_cast<std::uint64_t>(first + s));
        sample_generator_prior(this->model_, rng, 0, Purpose::user, u_view);
        const T distance = abc_squared_distance(this->model_, u_view, x_view);
        if (!myriad::isfinite(distance)) {
          ++non_finite;
          continue;
        }
        if (distance <= epsilon * epsilon) {
          keep[s] = 1;
          DenseVector<T> slot{recorded.data() + s * q, q};
          record_quantities(this->model_, u_view, slot);
        }
      }
    }
    AbcRejectionResult result;
    result.simulations = n;
    result.non_finite = non_finite;
    for (std::int64_t s = 0; s < n; ++s) {
      if (!keep[s]) continue;
      ++result.accepted;
      for (int j = 0; j < q; ++j) result.quantities.push_back(recorded[s * q + j]);
    }
    return result;
  }

  std::int64_t initialize(std::uint64_t seed, int max_tries, const AbcStep<T>& step) override {
    std::int64_t failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : failed)
    for (std::int64_t c = 0; c < this->chains_; ++c) {
      const RandomStream rng(seed, static_cast<std::uint64_t>(c));
      const AbcChain<T> state = chain(c);
      bool ok = false;
      for (int attempt = 0; attempt < max_tries && !ok; ++attempt) {
        if (!this->model_.initialize(rng, static_cast<std::uint32_t>(attempt), state.position))
          continue;
        const T distance = abc_squared_distance(this->model_, state.position, state.outputs);
        *state.log_kernel = abc_log_kernel(step.kernel, distance, step.epsilon);
        ok = myriad::isfinite(*state.log_kernel);
      }
      if (!ok) ++failed;
    }
    return failed;
  }

  IterationStats run(std::uint64_t seed, const AbcStep<T>& step, std::uint32_t first_iteration,
                     int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                     int chunk_iterations) override {
    const int q = this->num_quantities();
    return run_in_draw_chunks(
        num_iterations, chunk_iterations, q, this->chains_, sink, first_draw, chunk_,
        [&](int done, int n, T* recorded) {
          IterationStats stats;
#pragma omp parallel for schedule(static) reduction(merge_stats : stats)
          for (std::int64_t c = 0; c < this->chains_; ++c) {
            const RandomStream rng(seed, static_cast<std::uint64_t>(c));
            const AbcChain<T> state = chain(c);
            for (int i = 0; i < n; ++i) {
              const std::uint32_t iteration =
                  first_iteration + static_cast<std::uint32_t>(done + i);
              const AbcOutcome<T> out =
                  abc_mcmc_transition(this->model_, state, rng, iteration, step);
              stats.record(static_cast<double>(out.accept_prob), out.accepted,
                           out.non_finite ? kStatusNonFinite : kStatusOk, 0);
              if (recorded) {
                ChainVector<T> slot{recorded + static_cast<std::int64_t>(i) * q * this->chains_ + c,
                                    this->chains_, q};
                record_quantities(this->model_, state.position, slot);
              }
            }
          }
          return stats;
        });
  }

 private:
  AbcChain<T> chain(std::int64_t c) {
    return {ChainVector<T>{position_.data() + c * n_, 1, n_}, log_kernel_.data() + c,
            ChainVector<T>{proposal_.data() + c * n_, 1, n_},
            ChainVector<T>{prior_draw_.data() + c * n_, 1, n_},
            ChainVector<T>{outputs_.data() + c * m_, 1, m_}};
  }

  int n_, m_;
  std::vector<T> position_, proposal_, prior_draw_, outputs_, log_kernel_, chunk_;
};

}  // namespace myriad
