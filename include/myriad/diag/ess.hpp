#pragma once
// Effective sample sizes and the Monte Carlo standard error of the mean, as in Stan, posterior
// and ArviZ: the multi-chain autocorrelation estimate of Vehtari et al. (2021), "Rank-
// normalization, folding, and localization: An improved R-hat for assessing convergence of
// MCMC", Bayesian Analysis 16(2), Sec. 3.2, truncated with Geyer's (1992) initial positive and
// initial monotone sequences ("Practical Markov chain Monte Carlo", Statistical Science 7).
//
// Conventions (those of ArviZ): chains are split in halves (ess_basic, ess_bulk, ess_below,
// ess_tail), fewer than 4 draws per chain, no chains or a non-finite draw give NaN, and so do
// constant draws (ArviZ 0.x returns S there; posterior returns NA, which we follow).

#include <cstdint>
#include <vector>

#include "myriad/diag/draws_view.hpp"

namespace myriad::diag {

/// Mean over chains of each chain's autocovariance (divisor n, about the chain's own mean),
/// lags 0..draws−1: (1/m) Σ_j γ̂_{j,t}. Computed with one forward FFT per pair of chains (packed
/// as real and imaginary parts) and a single inverse FFT of the summed power spectra.
std::vector<double> mean_autocovariance(DrawsView chains);

/// Multi-chain ESS of the chains exactly as given (no splitting, no transformation):
/// ρ̂_t = 1 − (W − (1/m) Σ_j γ̂_{j,t}) / var⁺, var⁺ = (n − 1)/n · W + B/n (Vehtari et al. 2021,
/// eqs. for ρ̂_t and var̂⁺), summed as τ̂ = −1 + 2 Σ_{t ≤ t_max} ρ̂'_t + ρ̂_{t_max+1}⁺ with ρ̂' Geyer's
/// initial positive and monotone sequence and the last, positive, even lag added as in Stan;
/// τ̂ ≥ 1/log10(m·n); ESS = m·n / τ̂. NaN for < 2 draws, non-finite or constant draws.
double effective_sample_size(DrawsView chains);

/// ESS of the raw split chains: the one that goes with the mean (mcse_mean).
double ess_basic(DrawsView draws);

/// Bulk ESS: ESS of the rank-normalised split chains (Vehtari et al. 2021, Sec. 4).
double ess_bulk(DrawsView draws);

/// ESS of the split indicator chains I(x ≤ threshold): the ESS for estimating
/// P(x ≤ threshold), and so for the quantile at that threshold (Vehtari et al. 2021, Sec. 4).
/// NaN when the indicator is constant.
double ess_below(DrawsView draws, double threshold);

/// Tail ESS: min(ess_below(q₀.₀₅), ess_below(q₀.₉₅)) with the type-7 quantiles of all draws
/// (Vehtari et al. 2021, Sec. 4).
double ess_tail(DrawsView draws);

/// Monte Carlo standard error of the mean: sd / sqrt(ess_basic), sd over all draws pooled
/// with divisor S − 1 (as ArviZ's mcse(method="mean")).
double mcse_mean(DrawsView draws);

}  // namespace myriad::diag
