#pragma once
// The HMC samplers as a value-parameterised suite's parameters, named as on the command line
// (hmc, chees, snaper, nuts), for the suites that run several samplers alike.

#include <gtest/gtest.h>

#include <string>

#include "myriad/run/sample_config.hpp"

namespace myriad::testing {

/// INSTANTIATE_TEST_SUITE_P(Samplers, Suite, ::testing::Values(HmcSampler::…), HmcSamplerName{}).
struct HmcSamplerName {
  std::string operator()(const ::testing::TestParamInfo<HmcSampler>& info) const {
    return to_string(info.param);
  }
};

}  // namespace myriad::testing
