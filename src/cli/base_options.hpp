#pragma once
// The base-distribution options `myriad ais` and `myriad temper` share (--base fixed|fitted and
// the fit's settings), and run.json's "base" entry, so that both commands start from the same
// base on equal terms (estimate/variational_base.hpp).

#include <optional>
#include <vector>

#include "command_line.hpp"
#include "json.hpp"
#include "myriad/backend/ais_backend.hpp"
#include "myriad/estimate/variational_base.hpp"

namespace myriad::cli {

/// --base, --base-restarts, --base-iterations, --base-seed.
std::vector<OptionSpec> base_fit_options();

/// The fit --base fitted asks for (its seed from --base-seed, else the run's --seed), or nothing
/// for --base fixed. Throws UsageError naming a fit setting given with --base fixed, or one of
/// `fixed_only` (options the fit replaces) given with --base fitted.
std::optional<VariationalBaseConfig> parse_base_fit(const CommandLine& line,
                                                    const std::vector<const char*>& fixed_only);

/// run.json's "base": its kind, mean and scale (as given, or fitted), and for a fit its log ζ,
/// restarts, distinct components with their ELBOs, and time.
Json base_json(const AisBaseSpec& base, const std::optional<VariationalBase>& fitted);

}  // namespace myriad::cli
