#pragma once
// What the tests of the MP IS paper models (tests/unit/models/test_{bus_breakdown, chimpanzees,
// movielens, occupancy}.cpp) check alike of their data classes (models/synthetic_plated_data.hpp),
// beside plated_model_checks.hpp: the sizes of the true latents, the host and device views of the
// data, and the engine at small K on the synthetic data of seed 1.

#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "common/device_model.hpp"
#include "common/plated_model_checks.hpp"

namespace myriad::testing {

/// One true latent per entry of `sizes`, latent g holding sizes[g] values (its instances times
/// its event size).
template <class Data>
void expect_true_latent_sizes(const Data& data, const std::vector<std::size_t>& sizes) {
  for (int g = 0; g < static_cast<int>(sizes.size()); ++g)
    EXPECT_EQ(data.true_latent(g).size(), sizes[static_cast<std::size_t>(g)]) << "latent " << g;
}

/// A pointer of the host model and the data's array it must point at, named for the message.
struct HostView {
  const char* name;
  const void* model;
  const void* data;
};

/// The data's views (core/mirrored_array.hpp): the host model points at the data's own arrays
/// (`views`), not at copies; and a build without CUDA has no device model, so asking the
/// synthetic data of seed 11 for one throws unavailable_error (device_model.hpp).
template <class Data>
void expect_host_views_and_no_device_model(std::initializer_list<HostView> views) {
  for (const HostView& v : views) EXPECT_EQ(v.model, v.data) << v.name;
  expect_no_device_model_without_cuda([] { return Data::synthetic(11).device_model(); });
}

/// The engine at small K on the synthetic data of seed 1: the mean log P̂ over `runs` runs grows
/// from K = 2 to K = 5 (expect_log_marginal_increases).
template <class Data>
void expect_log_marginal_increases_on_synthetic_data(int runs) {
  const Data data = Data::synthetic(1);
  expect_log_marginal_increases(data.host_model(), runs);
}

}  // namespace myriad::testing
