#pragma once
// Simulation-based calibration of a built-in model through the registry, as `myriad sbc` runs it,
// with the uniformity tests of tests/stat/test_sbc.cpp (its file comment gives the sizes and why
// p ≥ 0.001 and the 99.9% bands): the statistical suite runs it on the CPU, the CUDA suite the
// batched run on the GPU.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/run/sbc.hpp"

namespace myriad::testing {

/// R = 200 replications of `model` (16 chains × (500 + 500), ranks among L = 99 draws, 20 bins),
/// each quantity expected to pass both uniformity tests; `data_file` as `myriad sbc --data`.
inline SbcResult calibrate(const std::string& model,
                           const std::vector<std::pair<std::string, std::string>>& arguments,
                           bool batched = false, Device device = Device::cpu,
                           const std::string& data_file = {}) {
  const ModelSpec& spec = find_model(model);
  EXPECT_TRUE(static_cast<bool>(spec.sbc)) << model << " states no simulation";
  const ModelArguments args(spec, arguments, data_file);
  if (spec.sbc_check) spec.sbc_check(args);
  SbcConfig sbc;
  sbc.replications = 200;
  sbc.posterior_draws = 99;
  sbc.bins = 20;
  sbc.alpha = 0.001;
  sbc.seed = 2026;
  ChmcConfig config;
  static_cast<SampleConfig&>(config) = run_config(16, 500, 500, sbc.seed, device);
  if (spec.kind == ModelKind::generator) {
    config.sampler = HmcSampler::hmc;
    config.metric = MetricKind::diag;
  }
  // As `myriad sbc --batch on|off` runs them: unbatched, replications at once (the CPU's
  // threads); batched, one run of every replication's chains on `device`.
  const SbcResult result = batched ? spec.sbc_batch(args, sbc, config, [](std::int64_t) {})
                                   : run_sbc(
                                         sbc, config,
                                         [&](std::int64_t r, const SampleConfig& run) {
                                           ChmcConfig settings = config;
                                           static_cast<SampleConfig&>(settings) = run;
                                           return spec.sbc(args, sbc.seed, r, settings);
                                         },
                                         [](std::int64_t) {}, cpu_threads());
  EXPECT_EQ(result.replications, 200);
  for (const SbcQuantity& q : result.quantities) {
    EXPECT_GE(q.histogram.p_value, 0.001)
        << model << " " << q.name << ": chi-square " << q.histogram.chi_square;
    EXPECT_TRUE(q.bands.inside) << model << " " << q.name << ": ECDF outside its bands";
    std::printf("%s %s: chi-square p %.3f, ECDF %s\n", model.c_str(), q.name.c_str(),
                q.histogram.p_value, q.bands.inside ? "inside" : "OUTSIDE");
  }
  return result;
}

}  // namespace myriad::testing
