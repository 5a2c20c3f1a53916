#include "myriad/app/option_names.hpp"

#include <string>

#include "myriad/core/error.hpp"

namespace myriad {

TeamMapping parse_team_mapping(const std::string& name, const char* what) {
  if (name == "auto") return TeamMapping::automatic;
  if (name == "thread") return TeamMapping::thread;
  if (name == "warp") return TeamMapping::warp;
  throw invalid_argument(std::string("unknown ") + what + " '" + name +
                         "' (expected auto, thread or warp)");
}

GramFactorization parse_gram_factorization(const std::string& name) {
  for (GramFactorization f :
       {GramFactorization::automatic, GramFactorization::chain, GramFactorization::registers,
        GramFactorization::thread, GramFactorization::tile, GramFactorization::library}) {
    if (name == to_string(f)) return f;
  }
  throw invalid_argument("unknown Gram factorisation '" + name +
                         "' (expected auto, chain, registers, thread, tile or library)");
}

Device parse_device(const std::string& name) {
  if (name == "auto") return Device::automatic;
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  throw invalid_argument("unknown device '" + name + "': expected auto, cpu or cuda");
}

ScheduleKind parse_schedule_kind(const std::string& name) {
  if (name == "linear") return ScheduleKind::linear;
  if (name == "geometric") return ScheduleKind::geometric;
  if (name == "sigmoid") return ScheduleKind::sigmoid;
  throw invalid_argument("unknown schedule '" + name + "' (expected linear, geometric or sigmoid)");
}

AisTransition parse_ais_transition(const std::string& name) {
  if (name == "hamiltonian" || name == "hmc") return AisTransition::hamiltonian;
  if (name == "metropolis" || name == "rwm") return AisTransition::metropolis;
  throw invalid_argument("unknown AIS transition '" + name +
                         "' (expected hamiltonian or metropolis)");
}

MpisMethod parse_mpis_method(const std::string& name) {
  if (name == "mpis" || name == "massively_parallel") return MpisMethod::massively_parallel;
  if (name == "global") return MpisMethod::global;
  throw invalid_argument("unknown method '" + name + "': expected mpis or global");
}

ContractionPath parse_contraction_path(const std::string& name) {
  if (name == "auto") return ContractionPath::automatic;
  if (name == "generic") return ContractionPath::generic;
  if (name == "tiled") return ContractionPath::tiled;
  if (name == "cublas") return ContractionPath::cublas;
  throw invalid_argument("unknown contraction path '" + name +
                         "': expected auto, generic, tiled or cublas");
}

}  // namespace myriad
