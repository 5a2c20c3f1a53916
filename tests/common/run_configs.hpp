#pragma once
// Run configurations for the tests that sample through the public API (run/sample_config.hpp
// and the configurations derived from it: ChmcConfig, AbcConfig): the size of the run, its seed
// and its device in one call.

#include <cstdint>

#include "myriad/backend/device.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad::testing {

/// A Config (SampleConfig or derived) of `chains` chains, `warmup` warm-up and `draws` kept
/// iterations from `seed` on `device`; every other setting at its default.
template <class Config = SampleConfig>
Config run_config(std::int64_t chains, int warmup, int draws, std::uint64_t seed,
                  Device device = Device::cpu) {
  Config config;
  config.chains = chains;
  config.warmup = warmup;
  config.draws = draws;
  config.seed = seed;
  config.device = device;
  return config;
}

}  // namespace myriad::testing
