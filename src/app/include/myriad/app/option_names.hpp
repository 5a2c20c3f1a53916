#pragma once
// The words the command line accepts for the library's option enums: the inverse of each enum's
// to_string (which stays with the enum, for labels and run.json), plus the aliases the CLI takes.
// Each throws myriad::invalid_argument with a one-line message that names the expected words.

#include <string>

#include "myriad/backend/device.hpp"
#include "myriad/backend/gram_factorization.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/run/ais_config.hpp"
#include "myriad/run/mpis_config.hpp"
#include "myriad/run/temper_config.hpp"

namespace myriad {

/// Floating-point precision of a run's state and arithmetic (the CLI's --precision).
enum class Precision { float32, float64 };

inline constexpr EnumName<Precision> kPrecisionNames[] = {{Precision::float64, "double"},
                                                          {Precision::float32, "float"},
                                                          {Precision::float64, "float64"},
                                                          {Precision::float32, "float32"}};

inline std::string to_string(Precision precision) { return enum_name(kPrecisionNames, precision); }

/// "double" (also "float64") or "float" (also "float32").
Precision parse_precision(const std::string& name);

/// "auto", "cpu" or "cuda".
Device parse_device(const std::string& name);

/// "auto", "thread" or "warp"; `what` names the option in the error ("particle mapping").
TeamMapping parse_team_mapping(const std::string& name, const char* what);

/// "auto", "chain", "registers", "thread", "tile" or "library" (to_string's names).
GramFactorization parse_gram_factorization(const std::string& name);

/// "linear", "geometric" or "sigmoid".
ScheduleKind parse_schedule_kind(const std::string& name);

/// "hamiltonian" (also "hmc") or "metropolis" (also "rwm").
AisTransition parse_ais_transition(const std::string& name);

/// "mpis" (also "massively_parallel") or "global".
MpisMethod parse_mpis_method(const std::string& name);

/// "gibbs-ct", "ct-hmc" or "st".
TemperMethod parse_temper_method(const std::string& name);

/// "unit" or "base".
TemperingMetric parse_tempering_metric(const std::string& name);

/// "auto", "generic", "tiled" or "cublas".
ContractionPath parse_contraction_path(const std::string& name);

}  // namespace myriad
