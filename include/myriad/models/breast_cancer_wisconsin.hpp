#pragma once
// The original Wisconsin breast cancer data (data/README.md: source, licence, extraction), the
// data of the GP probit workload (models/gp_probit.hpp), compiled into the library.

#include <string_view>
#include <vector>

namespace myriad::models {

/// The data file's text (data/breast-cancer-wisconsin.csv, as shipped).
std::string_view breast_cancer_wisconsin_csv();

/// Complete rows of the data: features V1 … V9 (row-major, rows × 9) and label 1 for malignant,
/// 0 for benign.
struct BreastCancerRows {
  static constexpr int kFeatures = 9;
  static constexpr int kCompleteRows = 683;
  int rows = 0;
  std::vector<double> features;
  std::vector<int> labels;
};

/// All 683 complete rows (rows = 0), or `rows` of them evenly spaced (complete row
/// ⌊i · 683 / rows⌋ for i = 0 … rows − 1): a reduced set of the same make-up. Throws
/// myriad::invalid_argument for rows outside 0 … 683.
BreastCancerRows breast_cancer_wisconsin(int rows = 0);

}  // namespace myriad::models
