// The Wisconsin breast cancer data compiled in (models/breast_cancer_wisconsin.hpp): the CSV
// text, and its complete rows parsed once per call.

#include "myriad/models/breast_cancer_wisconsin.hpp"

#include <cstddef>
#include <sstream>
#include <string>

#include "myriad/core/error.hpp"

namespace myriad::models {

std::string_view breast_cancer_wisconsin_csv() {
  static constexpr char kText[] =
#include "breast_cancer_wisconsin_csv.inc"
      ;
  return {kText, sizeof(kText) - 1};
}

namespace {

/// Fields of one CSV line: "ID", V1 … V9 (integers or NA), "class".
bool parse_row(const std::string& line, double* features, int& label) {
  std::stringstream fields(line);
  std::string field;
  std::getline(fields, field, ',');  // ID
  for (int k = 0; k < BreastCancerRows::kFeatures; ++k) {
    if (!std::getline(fields, field, ',')) throw invalid_argument("breast cancer data: short row");
    if (field == "NA") return false;
    features[k] = std::stod(field);
  }
  std::getline(fields, field);
  if (field == "\"malignant\"") {
    label = 1;
  } else if (field == "\"benign\"") {
    label = 0;
  } else {
    throw invalid_argument("breast cancer data: unknown class " + field);
  }
  return true;
}

}  // namespace

BreastCancerRows breast_cancer_wisconsin(int rows) {
  constexpr int kAll = BreastCancerRows::kCompleteRows;
  MYRIAD_EXPECTS(rows >= 0 && rows <= kAll, "breast cancer data: rows must lie in 0 … ", kAll,
                 " (0: all complete rows), got ", rows);
  BreastCancerRows complete;
  std::stringstream text{std::string(breast_cancer_wisconsin_csv())};
  std::string line;
  std::getline(text, line);  // header
  double features[BreastCancerRows::kFeatures];
  int label = 0;
  while (std::getline(text, line)) {
    if (line.empty() || !parse_row(line, features, label)) continue;
    complete.features.insert(complete.features.end(), features,
                             features + BreastCancerRows::kFeatures);
    complete.labels.push_back(label);
  }
  complete.rows = static_cast<int>(complete.labels.size());
  MYRIAD_EXPECTS(complete.rows == kAll, "breast cancer data: expected ", kAll,
                 " complete rows, found ", complete.rows);
  if (rows == 0 || rows == kAll) return complete;
  BreastCancerRows reduced;
  reduced.rows = rows;
  for (int i = 0; i < rows; ++i) {
    const std::size_t r = static_cast<std::size_t>(i) * kAll / rows;
    reduced.features.insert(reduced.features.end(),
                            complete.features.begin() + r * BreastCancerRows::kFeatures,
                            complete.features.begin() + (r + 1) * BreastCancerRows::kFeatures);
    reduced.labels.push_back(complete.labels[r]);
  }
  return reduced;
}

}  // namespace myriad::models
