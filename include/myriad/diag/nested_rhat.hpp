#pragma once
// Nested R-hat for many short chains: C. C. Margossian, M. D. Hoffman, P. Sountsov,
// L. Riou-Durand, A. Vehtari and A. Gelman (2024), "Nested R-hat: Assessing the convergence of
// Markov chain Monte Carlo when running many short chains", Bayesian Analysis,
// doi:10.1214/24-BA1453; the estimators below are eqs. (15)–(19) of the 2023 arXiv version
// (arXiv:2110.13017), the numbering the posterior R package cites.

#include "myriad/diag/draws_view.hpp"

namespace myriad::diag {

/// Nested R̂ with the chains grouped into K = `superchains` superchains of M = chains/K
/// consecutive chains (superchain k holds chains k·M … k·M + M − 1, e.g. the chains started
/// from one shared initial point). With N draws per chain, θ̄_{·mk} the chain means, θ̄_{··k}
/// the superchain means and θ̄_{···} their mean:
///   B̂_ν = 1/(K − 1) Σ_k (θ̄_{··k} − θ̄_{···})²                  (between superchains)
///   B̃_k = 1/(M − 1) Σ_m (θ̄_{·mk} − θ̄_{··k})², 0 when M = 1      (between chains in k)
///   W̃_k = 1/M Σ_m 1/(N − 1) Σ_n (θ^{(nmk)} − θ̄_{·mk})², 0 when N = 1 (within chains)
///   Ŵ_ν = 1/K Σ_k (B̃_k + W̃_k),      nR̂ = sqrt(1 + B̂_ν / Ŵ_ν).
/// No chain splitting. Throws myriad::invalid_argument unless K ≥ 2, chains ≥ K and K divides
/// chains. NaN for no draws or a non-finite draw, and when B̂_ν = Ŵ_ν = 0 (constant draws);
/// +∞ when Ŵ_ν = 0 < B̂_ν.
double nested_rhat(DrawsView draws, int superchains);

}  // namespace myriad::diag
