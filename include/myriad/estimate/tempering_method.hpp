#pragma once
// The tempering samplers (docs/tempering.md): Gibbs continuous tempering (thesis Alg. 14),
// CT-HMC (Alg. 15) and simulated tempering (Alg. 7 with Gibbs index updates), and their names on
// the command line and in run.json.

#include "myriad/core/enum_names.hpp"

namespace myriad {

enum class TemperMethod { gibbs_ct, ct_hmc, simulated_tempering };

inline constexpr EnumName<TemperMethod> kTemperMethodNames[] = {
    {TemperMethod::gibbs_ct, "gibbs-ct"},
    {TemperMethod::ct_hmc, "ct-hmc"},
    {TemperMethod::simulated_tempering, "st"}};

inline const char* to_string(TemperMethod method) { return enum_name(kTemperMethodNames, method); }

/// HMC's mass matrix in the tempering samplers: unit, or the base's (M⁻¹ = diag(scale²) on x, 1 on
/// CT-HMC's u): leapfrog steps in the base's whitened coordinates, as a mass matrix adapted to
/// the target would give when the base is fitted to it (docs/tempering.md).
enum class TemperingMetric { unit, base };

inline constexpr EnumName<TemperingMetric> kTemperingMetricNames[] = {
    {TemperingMetric::unit, "unit"}, {TemperingMetric::base, "base"}};

inline const char* to_string(TemperingMetric metric) {
  return enum_name(kTemperingMetricNames, metric);
}

}  // namespace myriad
