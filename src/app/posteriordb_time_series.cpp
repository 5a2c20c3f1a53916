// posteriordb's time-series posteriors and its two-component mixture as built-in models: each
// reads its Stan data block from --data and samples the port in include/myriad/models/ (which
// states the density, the transforms and the names recorded). The Stan programs are in
// tests/data/posteriordb/<posterior>/model.stan.

#include <limits>
#include <string>
#include <vector>

#include "myriad/models/ar_k.hpp"
#include "myriad/models/arma11.hpp"
#include "myriad/models/garch11.hpp"
#include "myriad/models/low_dim_gauss_mix.hpp"
#include "posteriordb_spec.hpp"

namespace myriad {

namespace {

constexpr int kMaxLength = 1 << 28;

/// arK-arK: data { int<lower=0> K; int<lower=0> T; array[T] real y; }.
models::ArKData<double> ar_k(const StanData& data) {
  const int length = data.integer("T", 0, kMaxLength);
  return models::ArKData<double>::from_arrays(data.integer("K", 0, kMaxLength), length,
                                              data.reals("y", length));
}

/// arma-arma11: data { int<lower=1> T; array[T] real y; }.
models::Arma11Data<double> arma11(const StanData& data) {
  const int length = data.integer("T", 1, kMaxLength);
  return models::Arma11Data<double>::from_arrays(length, data.reals("y", length));
}

/// garch-garch11: data { int<lower=0> T; array[T] real y; real<lower=0> sigma1; }.
models::Garch11Data<double> garch11(const StanData& data) {
  const int length = data.integer("T", 0, kMaxLength);
  return models::Garch11Data<double>::from_arrays(length, data.reals("y", length),
                                                  data.real("sigma1"));
}

/// low_dim_gauss_mix-low_dim_gauss_mix: data { int<lower=0> N; vector[N] y; }.
models::LowDimGaussMixData<double> low_dim_gauss_mix(const StanData& data) {
  const int n = data.integer("N", 0, kMaxLength);
  return models::LowDimGaussMixData<double>::from_arrays(n, data.reals("y", n));
}

}  // namespace

std::vector<ModelSpec> posteriordb_time_series_specs() {
  return {
      posteriordb_spec("arK", "arK-arK", "autoregression of order K, normal(0, 10) priors",
                       "int<lower=0> K, T; array[T] real y", ar_k),
      posteriordb_spec("arma11", "arma-arma11",
                       "ARMA(1, 1) with its recursive errors, sigma ~ half-Cauchy(0, 2.5)",
                       "int<lower=1> T; array[T] real y", arma11),
      posteriordb_spec("garch11", "garch-garch11",
                       "GARCH(1, 1) volatility, alpha1 + beta1 < 1 by a parameter-dependent bound",
                       "int<lower=0> T; array[T] real y; real<lower=0> sigma1", garch11),
      posteriordb_spec("low_dim_gauss_mix", "low_dim_gauss_mix-low_dim_gauss_mix",
                       "two-component normal mixture with ordered means",
                       "int<lower=0> N; vector[N] y", low_dim_gauss_mix),
  };
}

}  // namespace myriad
