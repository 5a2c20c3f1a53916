#include "myriad/run/host_memory.hpp"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "myriad/core/error.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/mcmc/trajectory_criterion.hpp"

namespace myriad {

namespace {

/// The fewest chains diagnostics cover: split R-hat needs two chains, and four halves give it a
/// between-chain variance worth the name.
constexpr std::int64_t kFewestDiagnosedChains = 4;

/// The CPU backend's state: position, gradient, proposal, momentum and the proposal's gradient,
/// the log densities, NUTS's tree scratch and the trajectory criterion's terms.
std::int64_t cpu_ensemble_bytes(const SampleConfig& config, int dim, std::size_t value_bytes) {
  std::int64_t vectors = 5;
  if (config.sampler == HmcSampler::nuts) vectors += nuts_tree_vectors(config.max_tree_depth);
  const std::int64_t per_chain = (vectors * dim + 1) * std::int64_t(value_bytes) +
                                 criterion_term_count(TrajectoryCriterion::snaper, dim) * 8;
  return per_chain * config.chains;
}

}  // namespace

int chunk_draws(const SampleConfig& config, int quantities, std::size_t value_bytes) {
  int chunk = config.chunk_iterations;
  if (chunk == 0) {
    double budget = 64.0 * 1024 * 1024;
    if (config.memory_limit > 0) budget = std::min(budget, double(config.memory_limit) / 8);
    const double bytes_per_draw =
        double(std::max(quantities, 1)) * double(config.chains) * double(value_bytes);
    chunk = static_cast<int>(std::clamp(budget / bytes_per_draw, 1.0, 250.0));
  }
  return std::min(chunk, config.draws);
}

std::int64_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

HostMemoryPlan plan_host_memory(const SampleConfig& config, int dim, int quantities,
                                std::size_t value_bytes, bool cpu_backend) {
  HostMemoryPlan plan;
  const std::int64_t chains = config.chains;
  const std::int64_t kept = (config.draws + config.thin - 1) / config.thin;
  const bool streamed = !config.draws_path.empty();
  if (cpu_backend) plan.ensemble = cpu_ensemble_bytes(config, dim, value_bytes);
  // The backend's chunk in its precision, and (streamed) its transposition into doubles.
  const std::int64_t chunk =
      std::int64_t(chunk_draws(config, quantities, value_bytes)) * quantities * chains;
  plan.draw_chunks = chunk * std::int64_t(value_bytes) + (streamed ? chunk * 8 : 0);
  if (config.keep_draws && !streamed) plan.trace = chains * kept * quantities * 8;

  const bool explicit_limit = config.memory_limit > 0;
  const std::int64_t limit = explicit_limit ? config.memory_limit : available_host_memory();
  const auto refuse = [&](const std::string& what, std::int64_t needed) {
    throw invalid_argument(
        detail::concat("this run needs about ", format_bytes(needed), " of host memory (", what,
                       "), more than the memory limit of ", format_bytes(limit),
                       "; use fewer chains, fewer or thinned draws, or a larger --memory-limit"));
  };
  if (explicit_limit && plan.fixed() > limit) {
    std::string parts =
        "chains " + format_bytes(plan.ensemble) + ", draw chunks " + format_bytes(plan.draw_chunks);
    if (plan.trace > 0) parts += ", trace " + format_bytes(plan.trace);
    refuse(parts, plan.fixed());
  }
  if (!config.keep_draws && !streamed) return plan;  // no trace, no diagnostics

  const std::int64_t threads = std::max(1, omp_get_max_threads());
  const std::int64_t per_chain_draws = kept;
  // Bytes of diagnosing b quantities of k chains at once.
  const auto diagnostics = [&](std::int64_t k, std::int64_t b) {
    const std::int64_t workspace =
        std::min(threads, b) * k * per_chain_draws * kDiagnosticBytesPerDraw;
    return (streamed ? k * per_chain_draws * b * 8 : 0) + workspace;
  };
  plan.diagnosed_chains = chains;
  plan.quantities_per_block = quantities;
  if (!streamed || limit <= 0) {
    plan.diagnostics = diagnostics(chains, quantities);
    if (explicit_limit && plan.total() > limit)
      refuse("the trace and the diagnostics' workspace", plan.total());
    return plan;
  }
  const std::int64_t room = limit - plan.fixed();
  // The most quantities per block over every chain; else the most chains of one quantity.
  std::int64_t block = quantities;
  while (block > 1 && diagnostics(chains, block) > room) block = (block + 1) / 2;
  if (diagnostics(chains, block) <= room) {
    plan.quantities_per_block = static_cast<int>(block);
    plan.diagnostics = diagnostics(chains, block);
    return plan;
  }
  std::int64_t k = room / std::max<std::int64_t>(1, diagnostics(1, 1));
  const int superchains =
      config.superchains == 0 ? automatic_superchains(chains) : config.superchains;
  const std::int64_t per_superchain = superchains > 1 ? chains / superchains : std::int64_t(1);
  if (k >= 2 * per_superchain) k -= k % per_superchain;  // whole superchains, for nested R-hat
  if (k < kFewestDiagnosedChains) {
    if (explicit_limit)
      refuse("the diagnostics of " + std::to_string(kFewestDiagnosedChains) + " chains",
             plan.fixed() + diagnostics(kFewestDiagnosedChains, 1));
    k = std::min<std::int64_t>(chains, kFewestDiagnosedChains);
  }
  plan.quantities_per_block = 1;
  plan.diagnosed_chains = std::min(k, chains);
  plan.diagnostics = diagnostics(plan.diagnosed_chains, 1);
  return plan;
}

std::string format_bytes(std::int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.2f %s", value, units[unit]);
  return text;
}

std::int64_t parse_bytes(const std::string& text, const std::string& what) {
  std::size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string suffix = text.substr(end);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 3 && suffix.compare(1, 2, "IB") == 0) suffix.resize(1);  // "GiB" → "G"
  if (suffix == "B") suffix.clear();
  static const std::string units = "KMGTP";
  double scale = 1;
  if (suffix.size() == 1 && units.find(suffix[0]) != std::string::npos)
    scale = std::pow(1024.0, double(units.find(suffix[0]) + 1));
  else if (!suffix.empty())
    end = 0;
  const double bytes = value * scale;
  MYRIAD_EXPECTS(end > 0 && std::isfinite(bytes) && bytes >= 1 && bytes < 9.2e18, what,
                 " must be a positive number of bytes with an optional K, M, G or T suffix, got '",
                 text, "'");
  return static_cast<std::int64_t>(bytes);
}

}  // namespace myriad
