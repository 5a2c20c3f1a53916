#pragma once
// Settings of the ABC baselines (mcmc/abc.hpp, constrained-hmc.md §11).

#include "myriad/mcmc/abc.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

struct AbcConfig : SampleConfig {
  /// The ABC samplers take no HMC sampler: sampler stays at hmc, the one validate_abc accepts.
  AbcConfig() { sampler = HmcSampler::hmc; }

  double epsilon = 1.0;                      ///< ABC tolerance ε
  AbcKernel kernel = AbcKernel::uniform_ball;
  double proposal_scale = 0.1;               ///< initial random-walk scale (adapted in warm-up)
  double target_accept_abc = 0.25;           ///< warm-up target for the random-walk scale

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate_abc() const;
};

/// The outcome of ABC rejection (no chains: independent prior simulations).
struct AbcRejectionSummary {
  std::int64_t simulations = 0;
  std::int64_t accepted = 0;
  std::int64_t non_finite = 0;
};

}  // namespace myriad
