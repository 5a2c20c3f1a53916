// `myriad models`: the built-in models and their arguments.

#include <cstdio>
#include <stdexcept>
#include <string>

#include "command_line.hpp"
#include "commands.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/run/auxiliary_config.hpp"

namespace myriad::cli {

namespace {

/// The auxiliary-variable samplers a model takes (those its auxiliary_check accepts), as
/// "; slice, pm-mh, …", or nothing.
std::string auxiliary_samplers(const ModelSpec& spec) {
  if (!spec.auxiliary)
    return spec.kind == ModelKind::generator
               ? "; with --abc-epsilon: slice samplers, pm-mh and apm-* "
                 "(directed generators)"
               : "";
  std::string names;
  for (const auto& [method, name] : kAuxiliaryMethodNames) {
    try {
      spec.auxiliary_check(method);
      names += std::string(", ") + name;
    } catch (const std::invalid_argument&) {
    }
  }
  return names;
}

}  // namespace

int models_command(int argc, char** argv) {
  if (argc > 2) throw UsageError{"'myriad models' takes no arguments"};
  (void)argv;
  for (const auto& spec : builtin_models()) {
    std::string kind = spec.kind == ModelKind::generator
                           ? "generator: --sampler chmc (default), abc-reject, abc-mcmc, hmc"
                       : spec.kind == ModelKind::annealing ? "annealing target: myriad ais, temper"
                       : spec.kind == ModelKind::plated    ? "plated model: myriad mpis"
                       : spec.sample ? "density: --sampler chees (default), snaper, nuts, hmc"
                                     : "estimator: --sampler ";
    // An estimator model (no log density) takes only the pseudo-marginal samplers.
    kind += spec.sample || spec.kind != ModelKind::density ? auxiliary_samplers(spec)
                                                           : auxiliary_samplers(spec).substr(2);
    if (spec.kind == ModelKind::density && spec.anneal) kind += "; myriad ais";
    if (spec.kind == ModelKind::density && spec.temper) kind += "; myriad temper";
    if (spec.sbc) kind += "; myriad sbc";
    std::printf("%s  [%s]\n    %s\n", spec.name.c_str(), kind.c_str(), spec.description.c_str());
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
