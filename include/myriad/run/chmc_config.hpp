#pragma once
// Settings of a constrained-HMC run: the common sampling settings plus the integrator's inner
// steps, the trajectory-length interval and the projection tolerances (constrained-hmc.md §14;
// Mici's tolerance set by default).

#include "myriad/backend/gram_factorization.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

struct ChmcConfig : SampleConfig {
  /// Constrained HMC runs trajectories of min_steps … max_steps steps: fixed-length HMC, not
  /// SampleConfig's default sampler.
  ChmcConfig() { sampler = HmcSampler::hmc; }

  int inner_steps = 3;  ///< N_g geodesic sub-steps per outer step
  int min_steps = 4;    ///< N_s uniform on {min_steps, …, max_steps}, shared by chains
  int max_steps = 8;
  double constraint_tol = 1e-9;  ///< ‖g_x(u) − x̄‖∞ at convergence of a projection
  double position_tol = 1e-8;    ///< ‖Δu‖∞ of the next quasi-Newton update at convergence
  double reverse_tol = 2e-8;     ///< reversibility check on ‖u_r − u‖∞
  double divergence_tol = 1e10;  ///< a projection whose residual exceeds this has diverged
  int max_iterations = 50;       ///< I_max of a projection
  /// During warm-up, each chain halves its own step while it cannot move and returns to the
  /// ensemble's step once it can (mcmc/step_back_off.hpp). Sampling always uses one step.
  bool step_back_off = true;
  /// CUDA only: one thread or one warp per chain (ChmcChainMapping, backend/chmc_backend.hpp).
  TeamMapping chain_mapping = TeamMapping::automatic;
  /// CUDA only: where the Gram matrices are factored (backend/gram_factorization.hpp); a batched
  /// tier for a generator with a structured Gram is an error on every device.
  GramFactorization gram_factorization = GramFactorization::automatic;

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate_chmc() const;
};

}  // namespace myriad
