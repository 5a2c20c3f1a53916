#pragma once
// Shared by the schedulers (run_hmc.cpp, run_chmc.cpp): the warm-up's checks for stranded chains
// and their restarts (mcmc/chain_restarts.hpp), on any backend with log_densities() and
// copy_chains(), counted into the result.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/mcmc/chain_restarts.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

/// Finds and restarts stranded chains during warm-up and counts what it did into the result.
template <class Backend>
class StrandedChainRestarts {
 public:
  using Value = typename decltype(std::declval<const Backend&>().log_densities())::value_type;
  /// Constrained HMC's backends keep a per-chain step back-off (ChmcBackend::step_halvings).
  static constexpr bool kHasStepBackOff = std::is_base_of_v<ChmcBackend<Value>, Backend>;

  /// far_behind_dim: the dimension for far_behind_chains, or 0 to flag unmoved chains only.
  StrandedChainRestarts(Backend& backend, std::uint64_t seed, SampleResult& result,
                        int far_behind_dim = 0)
      : backend_(backend),
        seed_(seed),
        far_behind_dim_(far_behind_dim),
        result_(result),
        previous_(backend.log_densities()),
        restarted_(static_cast<std::size_t>(backend.chains()), false) {}

  /// The check after warm-up iteration `iteration` (0-based; it keys the choice of sources);
  /// returns what it did.
  RestartPlan check(int iteration) {
    const std::vector<Value> current = backend_.log_densities();
    std::vector<bool> stranded = unmoved_chains(previous_, current);
    if constexpr (kHasStepBackOff) {
      const std::vector<std::uint8_t> halvings = backend_.step_halvings();
      for (std::size_t c = 0; c < stranded.size(); ++c)
        if (halvings[c] >= kStrandedStepHalvings) stranded[c] = true;
    }
    const RestartPlan plan = plan_restarts(
        stranded,
        far_behind_dim_ > 0 ? far_behind_chains(current, far_behind_dim_) : std::vector<bool>{},
        seed_, static_cast<std::uint32_t>(iteration));
    previous_ = current;
    if (plan.unmoved_kept) ++result_.warmup_stuck_checks;
    if (!plan.restart) return plan;
    if constexpr (std::is_void<decltype(backend_.copy_chains(plan.source))>::value) {
      backend_.copy_chains(plan.source);
    } else {
      // A restarted chain re-evaluates at its source's point, where the same deterministic code
      // succeeded: a failure means a generator that is not a function of its inputs.
      const std::int64_t failed = backend_.copy_chains(plan.source);
      if (failed > 0)
        throw std::runtime_error(
            detail::concat(failed,
                           " restarted chains could not be evaluated at points where their sources "
                           "were: is the model deterministic?"));
    }
    for (std::size_t c = 0; c < plan.source.size(); ++c) {
      const auto source = static_cast<std::size_t>(plan.source[c]);
      if (source == c) continue;
      previous_[c] = current[source];
      ++result_.warmup_restarts;
      if (!restarted_[c]) ++result_.warmup_restarted_chains;
      restarted_[c] = true;
    }
    return plan;
  }

  /// Reads or writes what the checks remember (the last reading, the chains restarted so far),
  /// for a run's checkpoint.
  template <class Archive>
  void serialize(Archive& archive) {
    archive(previous_, restarted_);
  }

 private:
  Backend& backend_;
  std::uint64_t seed_;
  int far_behind_dim_;
  SampleResult& result_;
  std::vector<Value> previous_;
  std::vector<bool> restarted_;
};

/// Chains whose log density is the same in both readings (stuck in between).
template <class T>
std::int64_t unchanged_chains(const std::vector<T>& before, const std::vector<T>& after) {
  const std::vector<bool> unmoved = unmoved_chains(before, after);
  return static_cast<std::int64_t>(std::count(unmoved.begin(), unmoved.end(), true));
}

}  // namespace myriad
