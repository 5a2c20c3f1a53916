// posteriordb's normal linear regressions as built-in models: each Stan program's transformed data
// (centring, logs, indicator columns) done here, once, on the data of --data, and the posterior
// sampled as one LinearRegression (models/linear_regression.hpp, which states the density,
// Stan's log transform of sigma and the names recorded). The model blocks are in
// tests/data/posteriordb/<posterior>/model.stan.

#include <cmath>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "myriad/models/linear_regression.hpp"
#include "myriad/run/sbc.hpp"
#include "posteriordb_spec.hpp"

namespace myriad {

namespace {

using Regression = models::LinearRegressionData<double>;
using models::ScalePrior;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxRows = 1 << 28;

/// The design matrix from its columns (each of n values), row-major.
std::vector<double> design(const std::vector<std::vector<double>>& columns, int n) {
  std::vector<double> x;
  x.reserve(static_cast<std::size_t>(n) * columns.size());
  for (int i = 0; i < n; ++i)
    for (const auto& column : columns) x.push_back(column[i]);
  return x;
}

std::vector<double> ones(int n) { return std::vector<double>(static_cast<std::size_t>(n), 1.0); }

/// log of every entry, which Stan's transformed data take: each must be positive.
std::vector<double> logs(const StanData& data, const std::string& name, std::vector<double> v) {
  check_data_bounds(data, name, v, std::numeric_limits<double>::min(), kInf);
  for (double& x : v) x = std::log(x);
  return v;
}

/// A regression with flat priors on every coefficient and on sigma > 0, as the programs that
/// declare no prior (Stan's improper uniform) write it.
Regression flat(std::vector<double> x, std::vector<double> y, int n, int k) {
  return Regression::from_arrays(std::move(x), std::move(y), n, k, std::vector<double>(k, 0.0),
                                 Regression::flat(k), ScalePrior::flat, 1.0);
}

/// kidiq-kidscore_momhsiq: kid_score ~ N(beta[1] + beta[2] mom_hs + beta[3] mom_iq, sigma),
/// sigma ~ Cauchy(0, 2.5) on sigma > 0, beta flat.
Regression kidiq(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows);
  const std::vector<double> score = data.reals("kid_score", n), iq = data.reals("mom_iq", n),
                            hs = data.reals("mom_hs", n);
  check_data_bounds(data, "kid_score", score, 0, 200);
  check_data_bounds(data, "mom_iq", iq, 0, 200);
  check_data_bounds(data, "mom_hs", hs, 0, 1);
  return Regression::from_arrays(design({ones(n), hs, iq}, n), score, n, 3,
                                 std::vector<double>(3, 0.0), Regression::flat(3),
                                 ScalePrior::half_cauchy, 2.5);
}

/// earnings-logearn_interaction_z: log earn ~ N(beta[1] + beta[2] z + beta[3] male
/// + beta[4] z male, sigma), z the standardised height (Stan's sd divides by N − 1); flat priors.
Regression earnings(const StanData& data) {
  const int n = data.integer("N", 2, kMaxRows);
  const std::vector<double> log_earn = logs(data, "earn", data.reals("earn", n)),
                            height = data.reals("height", n), male = data.reals("male", n);
  const double mean = std::accumulate(height.begin(), height.end(), 0.0) / n;
  double ss = 0;
  for (double h : height) ss += (h - mean) * (h - mean);
  const double sd = std::sqrt(ss / (n - 1));
  if (!(sd > 0)) throw invalid_argument(data.origin() + ": data variable 'height' is constant");
  std::vector<double> z(n), inter(n);
  for (int i = 0; i < n; ++i) {
    z[i] = (height[i] - mean) / sd;
    inter[i] = z[i] * male[i];
  }
  return flat(design({ones(n), z, male, inter}, n), log_earn, n, 4);
}

/// mesquite-logmesquite_logvash: log weight on the logs of canopy volume, area, shape and total
/// height, and group; flat priors.
Regression mesquite(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows);
  const std::vector<double> weight = data.reals("weight", n), d1 = data.reals("diam1", n),
                            d2 = data.reals("diam2", n), ch = data.reals("canopy_height", n),
                            th = data.reals("total_height", n), group = data.reals("group", n);
  const std::initializer_list<std::pair<const char*, const std::vector<double>*>> positive = {
      {"weight", &weight},
      {"diam1", &d1},
      {"diam2", &d2},
      {"canopy_height", &ch},
      {"total_height", &th}};
  for (const auto& [name, v] : positive)
    check_data_bounds(data, name, *v, std::numeric_limits<double>::min(), kInf);
  std::vector<double> volume(n), area(n), shape(n), height(n), y(n);
  for (int i = 0; i < n; ++i) {
    volume[i] = std::log(d1[i] * d2[i] * ch[i]);
    area[i] = std::log(d1[i] * d2[i]);
    shape[i] = std::log(d1[i] / d2[i]);
    height[i] = std::log(th[i]);
    y[i] = std::log(weight[i]);
  }
  return flat(design({ones(n), volume, area, shape, height, group}, n), y, n, 6);
}

/// nes1992-nes: partyid7 on ideology, race, age group indicators (age_discrete 2, 3, 4 against
/// 1), education, gender and income; flat priors.
Regression nes(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows);
  const std::vector<double> party = data.reals("partyid7", n), ideo = data.reals("real_ideo", n),
                            race = data.reals("race_adj", n), educ = data.reals("educ1", n),
                            gender = data.reals("gender", n), income = data.reals("income", n);
  const std::vector<int> age = data.integers("age_discrete", n, std::numeric_limits<int>::min(),
                                             std::numeric_limits<int>::max());
  std::vector<double> age30(n), age45(n), age65(n);
  for (int i = 0; i < n; ++i) {
    age30[i] = age[i] == 2;
    age45[i] = age[i] == 3;
    age65[i] = age[i] == 4;
  }
  return flat(design({ones(n), ideo, race, age30, age45, age65, educ, gender, income}, n), party, n,
              9);
}

/// kilpisjarvi_mod-kilpisjarvi: y ~ N(alpha + beta x, sigma), alpha ~ N(pmualpha, psalpha),
/// beta ~ N(pmubeta, psbeta), sigma flat on (0, ∞). xpred (a prediction input) is read and
/// checked, but no generated quantity uses it.
Regression kilpisjarvi(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows);
  const std::vector<double> x = data.reals("x", n), y = data.reals("y", n);
  data.real("xpred");
  const std::vector<double> mean = {data.real("pmualpha"), data.real("pmubeta")};
  const std::vector<double> sd = {data.real("psalpha"), data.real("psbeta")};
  check_data_bounds(data, "psalpha", {sd[0]}, std::numeric_limits<double>::min(), kInf);
  check_data_bounds(data, "psbeta", {sd[1]}, std::numeric_limits<double>::min(), kInf);
  Regression r =
      Regression::from_arrays(design({ones(n), x}, n), y, n, 2, mean, sd, ScalePrior::flat, 1.0);
  r.name_coefficients({"alpha", "beta"});
  return r;
}

/// sblrc-blr: y ~ N(X beta, sigma), beta ~ N(0, 10), sigma ~ N(0, 10) on sigma > 0.
Regression blr(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows), d = data.integer("D", 1, 1 << 16);
  return Regression::from_arrays(data.matrix("X", n, d), data.reals("y", n), n, d,
                                 std::vector<double>(d, 0.0), std::vector<double>(d, 10.0),
                                 ScalePrior::half_normal, 10.0);
}

/// diamonds-diamonds (brms 2.10): the design centred without its intercept column,
/// Xc = X[:, 2:K] − means_X, Y ~ N(Intercept + Xc b, sigma), b ~ N(0, 1),
/// Intercept ~ Student-t(3, 8, 10), sigma ~ half-Student-t(3, 0, 10). Coefficients in Stan's order
/// (b[1] … b[K−1], Intercept): the design is [Xc | 1].
Regression diamonds(const StanData& data) {
  const int n = data.integer("N", 1, kMaxRows), k = data.integer("K", 2, 1 << 16);
  const std::vector<double> y = data.reals("Y", n), x = data.matrix("X", n, k);
  if (data.integer("prior_only", 0, 1) != 0)
    throw invalid_argument(data.origin() +
                           ": data variable 'prior_only' must be 0 (the likelihood is included)");
  std::vector<double> means(k - 1, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 1; j < k; ++j) means[j - 1] += x[static_cast<std::size_t>(i) * k + j];
  for (double& m : means) m /= n;
  std::vector<double> xc;
  xc.reserve(static_cast<std::size_t>(n) * k);
  for (int i = 0; i < n; ++i) {
    for (int j = 1; j < k; ++j) xc.push_back(x[static_cast<std::size_t>(i) * k + j] - means[j - 1]);
    xc.push_back(1.0);
  }
  std::vector<double> mean(k, 0.0), sd(k, 1.0), df = Regression::normal(k);
  mean[k - 1] = 8;
  sd[k - 1] = 10;
  df[k - 1] = 3;
  Regression r = Regression::from_arrays(std::move(xc), y, n, k, mean, sd, df,
                                         ScalePrior::half_student_t, 10.0, 3.0);
  std::vector<std::string> names;
  for (int j = 1; j < k; ++j) names.push_back("b[" + std::to_string(j) + "]");
  names.push_back("Intercept");
  r.name_coefficients(std::move(names));
  return r;
}

/// SBC for a regression port (`myriad sbc --model NAME --data FILE`): its design from the data
/// file, β and σ drawn from its priors and ỹ from the model (LinearRegressionData::simulate).
/// Only blr's priors are all proper and normal; the others have a flat prior (kidscore_momhsiq,
/// logearn_interaction_z, logmesquite_logvash, nes: β; kilpisjarvi: σ) or Student-t ones
/// (diamonds), so they state no simulation (check_simulable names the first such prior).
ModelSpec with_simulation(ModelSpec spec, Regression (*make)(const StanData&)) {
  spec.sbc_check = [make](const ModelArguments& a) { make(a.required_data()).check_simulable(); };
  spec.sbc = [make](const ModelArguments& a, std::uint64_t seed, std::int64_t r,
                    const ChmcConfig& config) {
    std::vector<double> truth;
    Regression data = make(a.required_data()).simulate(seed, r, truth);
    SampleConfig resolved = config;
    resolved.device = choose_device<models::LinearRegression<double>>(config.device);
    SampleResult run = resolved.device == Device::cuda ? sample(data.device_model(), resolved)
                                                       : sample(data.host_model(), resolved);
    return SbcReplication{std::move(truth), std::move(run)};
  };
  return spec;
}

}  // namespace

std::vector<ModelSpec> posteriordb_regression_specs() {
  return {

      posteriordb_spec("kidscore_momhsiq", "kidiq-kidscore_momhsiq",
                       "kid_score on mom_hs and mom_iq, sigma ~ half-Cauchy(0, 2.5)",
                       "int<lower=0> N; vector<lower=0, upper=200>[N] kid_score, mom_iq; "
                       "vector<lower=0, upper=1>[N] mom_hs",
                       kidiq),

      posteriordb_spec("logearn_interaction_z", "earnings-logearn_interaction_z",
                       "log earnings on standardised height, sex and their interaction",
                       "int<lower=0> N; vector[N] earn, height, male", earnings),
      posteriordb_spec("logmesquite_logvash", "mesquite-logmesquite_logvash",
                       "log mesquite weight on log canopy volume, area, shape, height and group",
                       "int<lower=0> N; vector[N] weight, diam1, diam2, canopy_height, "
                       "total_height, group",
                       mesquite),
      posteriordb_spec("nes", "nes1992-nes",
                       "party identification on ideology, race, age group, education, gender, "
                       "income",
                       "int<lower=0> N; vector[N] partyid7, real_ideo, race_adj, educ1, gender, "
                       "income; array[N] int age_discrete",
                       nes),
      posteriordb_spec("kilpisjarvi", "kilpisjarvi_mod-kilpisjarvi",
                       "linear trend of summer temperature, normal priors from the data",
                       "int<lower=0> N; vector[N] x, y; real xpred, pmualpha, psalpha, pmubeta, "
                       "psbeta",
                       kilpisjarvi),
      with_simulation(
          posteriordb_spec("blr", "sblrc-blr",
                           "Bayesian linear regression, beta ~ N(0, 10), sigma ~ half-N(0, 10)",
                           "int<lower=0> N, D; matrix[N, D] X; vector[N] y", blr),
          blr),
      posteriordb_spec("diamonds", "diamonds-diamonds",
                       "brms regression of price on 24 correlated predictors (badly conditioned)",
                       "int<lower=1> N, K; vector[N] Y; matrix[N, K] X; int prior_only", diamonds),
  };
}

}  // namespace myriad
