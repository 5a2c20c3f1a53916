#pragma once
// The words the command line accepts for the library's option enums: the inverse of each enum's
// to_string (which stays with the enum, for labels and run.json), plus the aliases the CLI takes.
// Each throws myriad::invalid_argument with a one-line message that names the expected words.

#include <string>

#include "myriad/backend/device.hpp"
#include "myriad/backend/gram_factorization.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/run/ais_config.hpp"
#include "myriad/run/mpis_config.hpp"

namespace myriad {

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

/// "auto", "generic", "tiled" or "cublas".
ContractionPath parse_contraction_path(const std::string& name);

}  // namespace myriad
