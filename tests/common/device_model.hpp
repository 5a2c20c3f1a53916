#pragma once
// The device copy of a built-in model's data (Data::device_model()) for the tests that check
// it: a CUDA build uploads the data (or the test skips where no device is usable); a build
// without CUDA must throw unavailable_error instead.

#include <gtest/gtest.h>

#include <optional>
#include <type_traits>

#include "myriad/core/error.hpp"

namespace myriad::testing {

/// make() (a call of data.device_model(...)) where a CUDA device is usable. Nothing otherwise:
/// in a CUDA build without a usable device the test is marked skipped; in a build without CUDA
/// make() is expected to throw unavailable_error. Either way the caller's test ends there.
template <class Make>
auto device_model_or_nothing(Make&& make) -> std::optional<std::decay_t<decltype(make())>> {
#if defined(MYRIAD_HAS_CUDA)
  try {
    return make();
  } catch (const myriad::cuda_error& e) {
    [&] { GTEST_SKIP() << "CUDA build but no usable device: " << e.what(); }();
  }
#else
  EXPECT_THROW(make(), myriad::unavailable_error);
#endif
  return std::nullopt;
}

/// In a build without CUDA, make() (a call of device_model()) throws unavailable_error; a CUDA
/// build does not call it.
template <class Make>
void expect_no_device_model_without_cuda([[maybe_unused]] Make&& make) {
#if !defined(MYRIAD_HAS_CUDA)
  EXPECT_THROW(make(), myriad::unavailable_error);
#endif
}

}  // namespace myriad::testing
