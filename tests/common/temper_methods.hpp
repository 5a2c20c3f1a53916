#pragma once
// The tempering methods as a value-parameterised suite's parameters, named as on the command line
// (gibbs-ct → gibbs_ct), for the suites that run every method alike.

#include <gtest/gtest.h>

#include <string>

#include "myriad/estimate/tempering_method.hpp"

namespace myriad::testing {

/// INSTANTIATE_TEST_SUITE_P(Methods, Suite, kTemperMethods, TemperMethodName{}).
inline const auto kTemperMethods = ::testing::Values(TemperMethod::gibbs_ct, TemperMethod::ct_hmc,
                                                     TemperMethod::simulated_tempering);

struct TemperMethodName {
  template <class Info>
  std::string operator()(const Info& info) const {
    std::string name = to_string(info.param);
    for (char& ch : name) ch = ch == '-' ? '_' : ch;
    return name;
  }
};

}  // namespace myriad::testing
