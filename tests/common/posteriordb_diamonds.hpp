#pragma once
// posteriordb's diamonds-diamonds posterior (tests/data/posteriordb/diamonds-diamonds/, brms
// 2.10.0's model.stan) as a LinearRegression, for the statistical tests and the benchmarks (so no
// GoogleTest here: errors throw). brms centres the design: with X the N × K matrix of data.json,
// whose first column is the intercept's ones,
//
//   Xc = X[:, 2:K] − means_X,   Y ~ N(Intercept + Xc b, σ²),
//   b ~ N(0, 1),   Intercept ~ Student-t(3, 8, 10),   σ ~ half-Student-t(3, 0, 10),
//
// with Stan's constants. The design here is [Xc | 1], so that θ = (b[1] … b[K−1], Intercept,
// log σ) in Stan's order of the parameters and the recorded quantities are named as the reference
// names them: b[1] … b[K−1], Intercept, sigma. brms's generated quantity b_Intercept =
// Intercept − means_X · b is not recorded (posteriordb's reference has none); diamonds_means_x
// gives means_X for a caller that wants it.

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/models/linear_regression.hpp"

namespace myriad::testing {

/// data.json of diamonds-diamonds, read and checked (N, K, the shapes of X and Y, prior_only = 0).
inline nlohmann::json diamonds_json(const std::string& data_json) {
  std::ifstream in(data_json);
  if (!in.good()) throw std::runtime_error("diamonds: cannot read " + data_json);
  nlohmann::json data = nlohmann::json::parse(in);
  const int n = data.at("N").get<int>(), k = data.at("K").get<int>();
  MYRIAD_EXPECTS(n >= 1 && k >= 2, "diamonds: need N >= 1 and K >= 2, got N = ", n, ", K = ", k);
  MYRIAD_EXPECTS(data.at("Y").size() == static_cast<std::size_t>(n), "diamonds: Y has ",
                 data.at("Y").size(), " entries, expected N = ", n);
  MYRIAD_EXPECTS(data.at("X").size() == static_cast<std::size_t>(n), "diamonds: X has ",
                 data.at("X").size(), " rows, expected N = ", n);
  for (int i = 0; i < n; ++i)
    MYRIAD_EXPECTS(data["X"][i].size() == static_cast<std::size_t>(k), "diamonds: X row ", i,
                   " has ", data["X"][i].size(), " entries, expected K = ", k);
  MYRIAD_EXPECTS(data.at("prior_only").get<int>() == 0,
                 "diamonds: prior_only must be 0 (the likelihood is always included)");
  return data;
}

/// brms's means_X: the column means of X[:, 2:K] (K − 1 values), in double.
inline std::vector<double> diamonds_means_x(const nlohmann::json& data) {
  const int n = data["N"].get<int>(), k = data["K"].get<int>();
  std::vector<double> means(static_cast<std::size_t>(k - 1), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 1; j < k; ++j) means[j - 1] += data["X"][i][j].get<double>();
  for (double& m : means) m /= n;
  return means;
}

/// The diamonds posterior from posteriordb's data.json at `data_json` (e.g.
/// tests/data/posteriordb/diamonds-diamonds/data.json): K coefficients (b[1] … b[K−1] on the
/// centred columns, then Intercept), centred in double and then rounded to T. Throws
/// std::runtime_error if the file cannot be read, myriad::invalid_argument if its data are not
/// diamonds-shaped.
template <class T = double>
models::LinearRegressionData<T> diamonds_regression(const std::string& data_json) {
  const nlohmann::json data = diamonds_json(data_json);
  const int n = data["N"].get<int>(), k = data["K"].get<int>();
  const std::vector<double> means = diamonds_means_x(data);
  std::vector<T> x, y;
  x.reserve(static_cast<std::size_t>(n) * k);
  y.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 1; j < k; ++j) x.push_back(T(data["X"][i][j].get<double>() - means[j - 1]));
    x.push_back(T(1));
    y.push_back(T(data["Y"][i].get<double>()));
  }
  // b ~ N(0, 1); Intercept ~ Student-t(3, 8, 10); σ ~ half-Student-t(3, 0, 10).
  std::vector<T> mean(static_cast<std::size_t>(k), T(0)), sd(static_cast<std::size_t>(k), T(1));
  std::vector<T> df = models::LinearRegressionData<T>::normal(k);
  mean[k - 1] = T(8);
  sd[k - 1] = T(10);
  df[k - 1] = T(3);
  auto regression = models::LinearRegressionData<T>::from_arrays(
      std::move(x), std::move(y), n, k, std::move(mean), std::move(sd), std::move(df),
      models::ScalePrior::half_student_t, 10.0, 3.0);
  std::vector<std::string> names;
  for (int j = 1; j < k; ++j) names.push_back("b[" + std::to_string(j) + "]");
  names.push_back("Intercept");
  regression.name_coefficients(std::move(names));
  return regression;
}

}  // namespace myriad::testing
