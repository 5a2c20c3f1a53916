#pragma once
// The CPU backend of the tempering samplers: an OpenMP loop over the per-chain bodies of
// detail/tempering_chain_bodies.hpp, the functions the CUDA kernels loop over. State is
// [chain][coordinate], each chain running all transitions of a call before the next starts (its
// state stays in cache); the sums and the trace are [end][quantity][chain] and [draw][chain], as
// on a GPU, so both backends give the same outputs.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/backend/tempering_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/omp_statistics.hpp"
#include "myriad/detail/tempering_chain_bodies.hpp"

namespace myriad {

template <class Target>
class CpuTemperingBackend final : public TemperingBackend {
 public:
  CpuTemperingBackend(const Target& target, TemperingSetup setup)
      : target_(target),
        setup_(std::move(setup)),
        dim_(target.dim()),
        state_dim_(tempering_state_dim(setup_.method, dim_)),
        sums_(setup_.chains, 2 * dim_) {
    MYRIAD_EXPECTS(setup_.chains >= 2, "tempering needs at least 2 chains, got ", setup_.chains);
    const auto values = static_cast<std::size_t>(setup_.chains * state_dim_);
    for (auto* array : {&position_, &gradient_, &proposal_, &momentum_, &proposal_gradient_})
      array->assign(values, 0.0);
    const auto chains = static_cast<std::size_t>(setup_.chains);
    log_density_.assign(chains, 0.0);
    beta_.assign(chains, 0.0);
    index_.assign(chains, 0);
    dropped_.assign(chains, 0);
    trace_.assign(chains * static_cast<std::size_t>(setup_.draws), 0.0);
    inverse_metric_ = tempering_inverse_metric(setup_, dim_);
  }

  std::string device_name() const override { return cpu_device_name(); }

  std::int64_t start() override {
    const auto settings = this->settings();
    const auto base = this->base();
    const TemperingEnsembleView<double> state = view();
    std::int64_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed)
    for (std::int64_t c = 0; c < setup_.chains; ++c)
      failed += start_tempering_chain(target_, base, settings, state, c) ? 0 : 1;
    return failed;
  }

  IterationStats run(int first, int count) override {
    const auto settings = this->settings();
    const auto base = this->base();
    const TemperingEnsembleView<double> state = view();
    const std::int64_t kept = kept_transitions(setup_, first, count);
    return with_tempering_method(setup_.method, [&](auto method) {
      IterationStats stats;
#pragma omp parallel for schedule(dynamic) reduction(merge_stats : stats)
      for (std::int64_t c = 0; c < setup_.chains; ++c)
        stats += tempering_chain_iterations<decltype(method)::value>(target_, base, settings, state,
                                                                     c, first, count)
                     .stats(kept);
      return stats;
    });
  }

  TemperingOutputs outputs() const override {
    std::int64_t dropped = 0;
    for (std::int64_t d : dropped_) dropped += d;
    return {sums_, trace_, dropped};
  }

 private:
  TemperingSettings<double> settings() const {
    return tempering_settings(setup_, dim_, inverse_metric_.data(), setup_.ladder.data());
  }
  AnnealingBase<double> base() const {
    const auto data_or_null = [](const std::vector<double>& v) {
      return v.empty() ? nullptr : v.data();
    };
    return {dim_, data_or_null(setup_.base_mean), data_or_null(setup_.base_scale)};
  }
  TemperingEnsembleView<double> view() {
    const auto rows = [&](std::vector<double>& a) {
      return EnsembleView<double>{a.data(), setup_.chains, state_dim_, 1, state_dim_};
    };
    const HmcEnsembleView<double> hmc{
        rows(position_),          rows(gradient_),     rows(proposal_),       rows(momentum_),
        rows(proposal_gradient_), log_density_.data(), EnsembleView<double>{}};
    return {hmc, beta_.data(), index_.data(), sums_.view(), trace_.data(), dropped_.data()};
  }

  Target target_;
  TemperingSetup setup_;
  int dim_, state_dim_;
  std::vector<double> position_, gradient_, proposal_, momentum_, proposal_gradient_;
  std::vector<double> log_density_, beta_, trace_, inverse_metric_;
  std::vector<int> index_;
  std::vector<std::int64_t> dropped_;
  TemperingSums sums_;
};

}  // namespace myriad
