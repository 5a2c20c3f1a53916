#include "base_options.hpp"

#include <string>

namespace myriad::cli {

std::vector<OptionSpec> base_fit_options() {
  return {
      {"base", "fixed|fitted", "fixed",
       "the Gaussian base: as given by --base-mean/--base-scale, or fitted (mean-field "
       "variational fits from several starts, moment-matched; docs/tempering.md)"},
      {"base-restarts", "R", "32", "fitted base: variational fits from random starts"},
      {"base-iterations", "N", "2000", "fitted base: Adam steps per fit"},
      {"base-seed", "S", "", "fitted base: seed of the fits (default: --seed)"},
  };
}

std::optional<VariationalBaseConfig> parse_base_fit(const CommandLine& line,
                                                    const std::vector<const char*>& fixed_only) {
  const std::string kind = line.text("base");
  if (kind != "fixed" && kind != "fitted")
    throw UsageError{"unknown base '" + kind + "' (expected fixed or fitted)"};
  if (kind == "fixed") {
    for (const char* option : {"base-restarts", "base-iterations", "base-seed"})
      if (line.has(option))
        throw UsageError{std::string("--") + option + " applies to --base fitted"};
    return std::nullopt;
  }
  for (const char* option : fixed_only)
    if (line.has(option)) throw UsageError{std::string("--") + option + " is set by --base fitted"};
  VariationalBaseConfig fit;
  fit.restarts = static_cast<int>(line.integer("base-restarts", 1, 100000));
  fit.iterations = static_cast<int>(line.integer("base-iterations", 4, 100000000));
  fit.seed =
      line.has("base-seed") ? line.unsigned_integer("base-seed") : line.unsigned_integer("seed");
  return fit;
}

Json base_json(const AisBaseSpec& base, const std::optional<VariationalBase>& fitted) {
  Json entry = Json::object();
  entry["kind"] = fitted ? "fitted" : "fixed";
  entry["mean"] = base.mean.empty() ? Json(base.isotropic_mean) : Json(base.mean);
  entry["scale"] = base.scale.empty() ? Json(base.isotropic_scale) : Json(base.scale);
  if (fitted) {
    entry["log_zeta"] = fitted->log_zeta;
    entry["restarts"] = fitted->restarts;
    Json components = Json::array();
    for (const VariationalComponent& c : fitted->components) {
      Json component = Json::object();
      component["elbo"] = c.elbo;
      component["elbo_se"] = c.elbo_se;
      component["skipped_steps"] = c.skipped_steps;
      components.push_back(component);
    }
    entry["components"] = components;
    entry["fit_seconds"] = fitted->seconds;
  }
  return entry;
}

}  // namespace myriad::cli
