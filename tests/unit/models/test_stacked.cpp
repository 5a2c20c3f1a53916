// Stacked<Model> (model/stacked.hpp), the batch of batched simulation-based calibration: its log
// density is the sum of its blocks' and its gradient their concatenation, bit for bit (each block
// is the inner model's own evaluation at the same values); its recorded quantities and names are
// the blocks'; models of different shapes are refused; without CUDA the device copy is refused.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/expect_error.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/stacked.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/logistic.hpp"

namespace myriad {
namespace {

using models::EightSchools;

std::vector<EightSchools<double>> three_data_sets() {
  std::vector<EightSchools<double>> models;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> z;
    models.push_back(EightSchools<double>::make().simulate(7, r, z));
  }
  return models;
}

TEST(Stacked, DensityGradientAndQuantitiesAreTheBlocks) {
  const std::vector<EightSchools<double>> inner = three_data_sets();
  const StackedModels<EightSchools<double>> owner(inner);
  const Stacked<EightSchools<double>> stacked = owner.host_model();
  const int d = inner[0].dim();
  ASSERT_EQ(stacked.dim(), 3 * d);
  std::vector<double> x(static_cast<std::size_t>(stacked.dim()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * double(i % 7) - 0.3;

  std::vector<double> gradient(x.size());
  const double lp = log_density_and_gradient(stacked, x.data(), gradient);
  double sum = 0;
  for (int r = 0; r < 3; ++r) {
    const std::vector<double> block(x.begin() + r * d, x.begin() + (r + 1) * d);
    std::vector<double> g(static_cast<std::size_t>(d));
    sum += log_density_and_gradient(inner[r], block.data(), g);
    for (int i = 0; i < d; ++i) EXPECT_EQ(gradient[r * d + i], g[i]) << r << " " << i;
  }
  EXPECT_EQ(lp, sum);
  EXPECT_EQ(stacked.log_density(x.data()), sum);

  const int q = recorded_quantity_count(inner[0]);
  ASSERT_EQ(recorded_quantity_count(stacked), 3 * q);
  std::vector<double> recorded(static_cast<std::size_t>(3 * q));
  record_quantities(stacked, x.data(), recorded);
  std::vector<double> block_recorded(static_cast<std::size_t>(q));
  const std::vector<double> block2(x.begin() + 2 * d, x.end());
  record_quantities(inner[2], block2.data(), block_recorded);
  for (int i = 0; i < q; ++i) EXPECT_EQ(recorded[2 * q + i], block_recorded[i]);
  const std::vector<std::string> names = recorded_quantity_names(stacked);
  EXPECT_EQ(names[0], "[0]mu");
  EXPECT_EQ(names[2 * q + 2], "[2]theta[1]");
}

TEST(Stacked, RefusesModelsOfOtherShapesAndEmptyStacks) {
  std::vector<EightSchools<double>> models = three_data_sets();
  models[1] = EightSchools<double>::make({1, 2, 3}, {1, 1, 1});  // J = 3 against 8
  testing::expect_invalid_argument([&] { StackedModels<EightSchools<double>> owner(models); },
                                   "share their dimension");
  testing::expect_invalid_argument([&] { StackedModels<EightSchools<double>> owner({}); },
                                   "at least one model");
}

TEST(Stacked, DeviceCopyNeedsCuda) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  StackedModels<EightSchools<double>> owner(three_data_sets());
  EXPECT_ANY_THROW(owner.device_model());
}

}  // namespace
}  // namespace myriad
