#pragma once
// Run configurations for the tests that sample through the public API (run/sample_config.hpp
// and the configurations derived from it: ChmcConfig, AbcConfig): the size of the run, its seed
// and its device in one call.

#include <cstdint>
#include <tuple>

#include "myriad/backend/device.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad::testing {

/// A Config (SampleConfig or derived) of `chains` chains, `warmup` warm-up and `draws` kept
/// iterations from `seed` on `device`; every other setting at its default.
template <class Config = SampleConfig>
Config run_config(std::int64_t chains, int warmup, int draws, std::uint64_t seed,
                  Device device = Device::cpu) {
  Config config;
  std::tie(config.chains, config.warmup, config.draws, config.seed, config.device) =
      std::make_tuple(chains, warmup, draws, seed, device);
  return config;
}

/// Fixed-length HMC with the diagonal metric (SampleConfig's defaults are ChEES and the
/// automatic metric): for the tests of that sampler. Returns config.
inline SampleConfig& fixed_length_hmc(SampleConfig& config) {
  config.sampler = HmcSampler::hmc;
  config.metric = MetricKind::diag;
  return config;
}

}  // namespace myriad::testing
