#pragma once
// Settings of the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp): slice, elliptical
// and reflective slice sampling, pseudo-marginal MH and the four APM methods.

#include <cstdint>
#include <vector>

#include "myriad/core/enum_names.hpp"
#include "myriad/mcmc/auxiliary_samplers.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad {

inline constexpr EnumName<AuxiliaryMethod> kAuxiliaryMethodNames[] = {
    {AuxiliaryMethod::slice, "slice"},
    {AuxiliaryMethod::elliptical_slice, "elliptical-slice"},
    {AuxiliaryMethod::reflective_slice, "reflective-slice"},
    {AuxiliaryMethod::pm_mh, "pm-mh"},
    {AuxiliaryMethod::apm_mi_mh, "apm-mi-mh"},
    {AuxiliaryMethod::apm_ss_mh, "apm-ss-mh"},
    {AuxiliaryMethod::apm_mi_ss, "apm-mi-ss"},
    {AuxiliaryMethod::apm_ss_ss, "apm-ss-ss"}};

inline const char* to_string(AuxiliaryMethod method) {
  return enum_name(kAuxiliaryMethodNames, method);
}

struct AuxiliaryConfig : SampleConfig {
  AuxiliaryMethod method = AuxiliaryMethod::slice;
  /// Random walk on x (pm-mh, apm-*-mh): the initial step λ in units of the per-coordinate
  /// scale (0: 2.38/√D), adapted in warm-up by dual averaging towards target_accept_walk; 0
  /// picks it by method (walk_target_accept).
  double walk_step = 0;
  double target_accept_walk = 0;

  /// The random walk's target acceptance: target_accept_walk, or by method: 0.234 for APM's
  /// walk on x given u (Roberts, Gelman & Gilks 1997; the thesis's tuning) and 0.07 for PM-MH
  /// (Sherlock, Thiery, Roberts & Rosenthal 2015, thesis-methods.md §4): a noisy estimate caps
  /// PM-MH's acceptance as the step shrinks to nothing, often below 0.234, and a target above
  /// that cap would drive the step to zero.
  double walk_target_accept() const {
    if (target_accept_walk > 0) return target_accept_walk;
    return method == AuxiliaryMethod::pm_mh ? 0.07 : 0.234;
  }
  /// Linear slices of x (slice, apm-*-ss): the bracket width w in units of the per-coordinate
  /// scale, the step-out budget M and the cap on shrink evaluations K. w = 3 is about the length
  /// of a Gaussian posterior's slice along a random line through a typical point (2√(z² + 2E)
  /// with z ~ N(0, 1), E ~ Exp(1): about 3.5), whatever the dimension; M > 0 extends a bracket
  /// that is too short.
  double slice_width = 3;
  int step_out = 4;
  int max_shrinks = 64;
  /// slice: update each coordinate in turn instead of one random direction per iteration.
  bool coordinate_wise = false;
  /// Reflective slices of the unit cube (reflective-slice, and uniform u under apm-ss-*): width
  /// in cube units, along v ~ N(0, I) (thesis §3.5).
  double cube_width = 1;

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate_auxiliary() const;
};

/// What a run of an auxiliary-variable sampler reports beyond SampleResult (run.json's
/// `auxiliary` block; the walk step λ is SampleResult::step_size).
struct AuxiliaryReport {
  std::vector<double> scale;         ///< the per-coordinate scale s after warm-up
  std::vector<std::int64_t> capped;  ///< per chain: capped slice updates, warm-up and sampling
};

}  // namespace myriad
