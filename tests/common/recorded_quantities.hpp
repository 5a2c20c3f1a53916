#pragma once
// The quantities a density model records for its draws (model/concept.hpp: recorded_quantity_count,
// recorded_quantity_name, record_quantities): their names and their values at a point.

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "myriad/model/concept.hpp"

namespace myriad::testing {

/// The model records `count` quantities, and quantity i is called `name` for each listed
/// {i, name}.
template <class Model>
void expect_quantity_names(const Model& model, int count,
                           std::initializer_list<std::pair<int, const char*>> names) {
  ASSERT_EQ(myriad::recorded_quantity_count(model), count);
  for (const auto& [i, name] : names) EXPECT_EQ(myriad::recorded_quantity_name(model, i), name);
}

/// The quantities the model records at x.
template <class Model>
std::vector<double> recorded_quantities(const Model& model, const std::vector<double>& x) {
  std::vector<double> q(static_cast<std::size_t>(myriad::recorded_quantity_count(model)));
  myriad::record_quantities(model, x, q);
  return q;
}

}  // namespace myriad::testing
