// `myriad models`: the built-in models and their arguments.

#include <cstdio>

#include "command_line.hpp"
#include "commands.hpp"
#include "myriad/app/registry.hpp"

namespace myriad::cli {

int models_command(int argc, char** argv) {
  if (argc > 2) throw UsageError{"'myriad models' takes no arguments"};
  (void)argv;
  for (const auto& spec : builtin_models()) {
    const char* kind = spec.kind == ModelKind::generator
                           ? "generator: --sampler chmc (default), abc-reject, abc-mcmc, hmc"
                       : spec.kind == ModelKind::annealing ? "annealing target: myriad ais"
                       : spec.kind == ModelKind::plated    ? "plated model: myriad mpis"
                       : spec.anneal
                           ? "density: --sampler chees (default), snaper, nuts, hmc; myriad ais"
                           : "density: --sampler chees (default), snaper, nuts, hmc";
    std::printf("%s  [%s%s]\n    %s\n", spec.name.c_str(), kind, spec.sbc ? "; myriad sbc" : "",
                spec.description.c_str());
    if (spec.data != DataUse::none)
      std::printf("    --data FILE.json%s  %s\n",
                  spec.data == DataUse::optional ? " (optional)" : "", spec.data_variables.c_str());
    for (const auto& a : spec.arguments)
      std::printf("    --model-arg %s=<%s>  %s\n", a.name.c_str(), a.default_value.c_str(),
                  a.description.c_str());
    std::printf("\n");
  }
  return 0;
}

}  // namespace myriad::cli
