// The built-in annealing targets for `myriad ais` (hais.md §9; thesis-methods.md §9.6).

#include <string>
#include <vector>

#include "myriad/models/builtin_targets.hpp"
#include "myriad/models/registry.hpp"
#include "myriad/run/ais.hpp"

namespace myriad {

std::vector<ModelSpec> annealing_target_specs() { return {}; }

}  // namespace myriad
