// posteriordb's posteriors with latent structure as built-in models: the latent Gaussian process
// (a Cholesky factor of the kernel matrix in the density), the hidden Markov model (the forward
// algorithm) and the pharmacokinetic ODE (an adaptive Runge–Kutta solver in the density). Each
// reads its Stan data block from --data and samples the port in include/myriad/models/, which
// states the density, the transforms, the names recorded and its caps. The Stan programs are in
// tests/data/posteriordb/<posterior>/model.stan.

#include <limits>
#include <string>
#include <vector>

#include "myriad/models/gp_pois_regr.hpp"
#include "myriad/models/hmm_example.hpp"
#include "myriad/models/one_comp_mm_elim_abs.hpp"
#include "posteriordb_spec.hpp"

namespace myriad {

namespace {

constexpr int kMaxLength = 1 << 28;

/// gp_pois_regr-gp_pois_regr: data { int<lower=1> N; array[N] real x; array[N] int k; }.
models::GpPoisRegrData<double> gp_pois_regr(const StanData& data) {
  const int n = data.integer("N", 1, models::GpPoisRegr<double>::kMaxPoints);
  return models::GpPoisRegrData<double>::from_arrays(
      n, data.reals("x", n), data.integers("k", n, 0, std::numeric_limits<int>::max()));
}

/// hmm_example-hmm_example: data { int<lower=0> N; int<lower=0> K; array[N] real y; }.
models::HmmExampleData<double> hmm_example(const StanData& data) {
  const int n = data.integer("N", 0, kMaxLength);
  return models::HmmExampleData<double>::from_arrays(
      n, data.integer("K", 0, models::HmmExample<double>::kMaxStates), data.reals("y", n));
}

/// one_comp_mm_elim_abs-one_comp_mm_elim_abs: data { real t0; real D; real V;
/// int<lower=1> N_t; array[N_t] real times; array[N_t] real C_hat; }.
models::OneCompMmElimAbsData<double> one_comp_mm_elim_abs(const StanData& data) {
  const int n = data.integer("N_t", 1, kMaxLength);
  return models::OneCompMmElimAbsData<double>::from_arrays(
      data.real("t0"), data.real("D"), data.real("V"), n, data.reals("times", n),
      data.reals("C_hat", n));
}

}  // namespace

std::vector<ModelSpec> posteriordb_latent_specs() {
  return {
      posteriordb_spec("gp_pois_regr", "gp_pois_regr-gp_pois_regr",
                       "Poisson regression on a latent squared-exponential Gaussian process "
                       "(N <= 16)",
                       "int<lower=1> N; array[N] real x; array[N] int k", gp_pois_regr),
      posteriordb_spec("hmm_example", "hmm_example-hmm_example",
                       "two-state hidden Markov model with normal emissions, by the forward "
                       "algorithm",
                       "int<lower=0> N, K; array[N] real y", hmm_example),
      posteriordb_spec("one_comp_mm_elim_abs", "one_comp_mm_elim_abs-one_comp_mm_elim_abs",
                       "one-compartment pharmacokinetics with Michaelis-Menten elimination: an "
                       "ODE solved by Dormand-Prince 5(4) in the density",
                       "real t0, D, V; int<lower=1> N_t; array[N_t] real times, C_hat",
                       one_comp_mm_elim_abs),
  };
}

}  // namespace myriad
