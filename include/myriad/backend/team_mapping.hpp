#pragma once
// How a CUDA backend maps its chains or particles onto threads: one thread each, or one warp
// each (a team of 32 lanes, core/team.hpp). AIS (AisParticleMapping, backend/ais_backend.hpp)
// and constrained HMC (ChmcChainMapping, backend/chmc_backend.hpp) both offer the choice; each
// backend documents what `automatic` picks. The CPU backends run one chain or particle per loop
// iteration whatever is asked.

#include "myriad/core/enum_names.hpp"

namespace myriad {

enum class TeamMapping : int {
  automatic,  ///< the backend's choice from the model and the ensemble's size
  thread,     ///< one thread each: many chains or particles, cheap per-chain work
  warp,       ///< one warp each: few of them, or costly per-chain linear algebra
};

inline constexpr EnumName<TeamMapping> kTeamMappingNames[] = {
    {TeamMapping::automatic, "auto"}, {TeamMapping::thread, "thread"}, {TeamMapping::warp, "warp"}};

inline const char* to_string(TeamMapping mapping) { return enum_name(kTeamMappingNames, mapping); }

}  // namespace myriad
