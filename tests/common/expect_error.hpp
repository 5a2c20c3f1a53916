#pragma once
// Expectations on the errors a call throws.

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "myriad/core/error.hpp"

namespace myriad::testing {

/// Expects `call` to throw myriad::invalid_argument whose message contains `fragment`.
inline void expect_invalid_argument(const std::function<void()>& call,
                                    const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "expected myriad::invalid_argument containing \"" << fragment << "\"";
  } catch (const myriad::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << fragment;
  }
}

}  // namespace myriad::testing
