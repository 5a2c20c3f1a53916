#pragma once
// Potential scale reduction factors (R-hat): the classic split-R-hat and the rank-normalised,
// folded R-hat of Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021), "Rank-normalization,
// folding, and localization: An improved R-hat for assessing convergence of MCMC", Bayesian
// Analysis 16(2), 667–718, which is what Stan, posterior and ArviZ report. The rank
// normalisation is shared with the bulk ESS (ess.hpp) and the summary (summary.hpp), so the
// one-sort machinery behind it, RankedDraws, lives here too.
//
// Conventions (those of ArviZ): each chain is split into its first and last ⌊n/2⌋ draws (the
// middle draw of an odd-length chain is dropped); fewer than 4 draws per chain, no chains, or
// a non-finite draw give NaN; constant draws give NaN.

#include <cstdint>
#include <vector>

#include "myriad/diag/draws_view.hpp"

namespace myriad::diag {

/// Gelman–Rubin potential scale reduction of the chains exactly as given (no splitting, no
/// normalisation), BDA3 eq. (11.3)–(11.4): with n draws per chain, W the mean of the
/// within-chain variances (divisor n − 1) and B/n the variance of the chain means (divisor
/// m − 1), R̂ = sqrt(var⁺ / W) where var⁺ = (n − 1)/n · W + B/n. NaN for fewer than 2 chains
/// or 2 draws, for non-finite draws, and when W = B = 0; +∞ when W = 0 < B.
double potential_scale_reduction(DrawsView chains);

/// Classic split-R-hat of the raw values: potential_scale_reduction of the 2·chains half
/// chains (BDA3, Sec. 11.4; reviewed in Vehtari et al. 2021).
double split_rhat_basic(DrawsView draws);

/// Rank-normalised split-R-hat (Vehtari et al. 2021, Sec. 4): the maximum of
/// R̂_bulk = potential_scale_reduction(z) and R̂_tail = potential_scale_reduction(z_fold),
/// where z are the rank-normalised split draws and z_fold those of |x − median(x)|.
double rhat(DrawsView draws);

/// One quantity's draws copied once, sorted once, and rank-normalised (Vehtari et al. 2021,
/// Sec. 4): with r the rank of a split draw among all S split draws pooled (average ranks
/// for ties), its normal score is z = Φ⁻¹((r − 3/8) / (S + 1/4)), Blom's (1958) offsets as in
/// posterior and ArviZ. (The arXiv version of the paper prints S − 1/4; the reference
/// implementations use S − 2·3/8 + 1 = S + 1/4.) The folded scores are those of
/// |x − median(split draws)|; their order is merged from the sorted draws, so one sort serves
/// the quantiles, the median, and both rankings. Buffers, including the table of Φ⁻¹ at
/// integer ranks, are kept between calls: reuse one object for many quantities of the same
/// shape. Not thread-safe; use one per thread.
class RankedDraws {
 public:
  RankedDraws() = default;
  /// Same as assign(draws).
  explicit RankedDraws(DrawsView draws) { assign(draws); }

  /// Copies, sorts and ranks `draws`. Sorting needs only finite draws; the rank scores need
  /// at least 1 chain and 4 draws per chain as well (valid()).
  void assign(DrawsView draws);

  /// True when the rank-normalised scores exist: ≥ 1 chain, ≥ 4 draws each, all finite.
  bool valid() const { return valid_; }
  /// True when sorted() holds all draws: ≥ 1 draw and all finite.
  bool sorted_valid() const { return sorted_valid_; }

  /// All draws, each chain's middle draw included, ascending; empty unless sorted_valid().
  const std::vector<double>& sorted() const { return sorted_; }

  /// Type-7 sample quantile (linear interpolation, numpy's default) of all draws:
  /// with h = (N − 1)·prob, x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋)) on 0-based order
  /// statistics. NaN unless sorted_valid() and prob in [0, 1].
  double quantile(double prob) const;

  /// Every draw once, middle draws included, in no particular order (for means and sds).
  const std::vector<double>& values() const { return values_; }

  /// The draws without each odd-length chain's middle draw: `chains` chains of 2·⌊n/2⌋ draws
  /// whose halves are the split chains, so split-based functions give the same results on this
  /// contiguous copy as on the original view.
  DrawsView trimmed() const;
  /// Rank-normalised split draws, 2·chains chains of ⌊n/2⌋; empty unless valid().
  DrawsView bulk() const;
  /// Rank-normalised folded split draws, same shape as bulk(); empty unless valid().
  DrawsView folded() const;

 private:
  void sort_values();
  void rank_split_draws();
  class ScoreScatter;

  bool valid_ = false;
  bool sorted_valid_ = false;
  int64_t chains_ = 0;
  int64_t half_ = 0;  // draws per split chain, ⌊n/2⌋
  int index_bits_ = 0;
  std::vector<double> values_;  // split layout [2·chains][half], then the middle draws
  std::vector<uint64_t> keys_;  // sorted (order-preserving value bits | values_ index)
  std::vector<uint64_t> scratch_;
  std::vector<double> sorted_;
  std::vector<double> split_sorted_;  // sorted_ without middle draws (odd chain lengths only)
  std::vector<double> bulk_;
  std::vector<double> folded_;
  std::vector<int64_t> tie_group_;
  struct ScoredIndex {
    int64_t index;
    double score;
  };
  std::vector<ScoredIndex> scattered_;  // scores bucketed by destination block
  std::vector<int64_t> bucket_ends_;
  std::vector<double> blom_scores_;  // Φ⁻¹((r − 3/8)/(S + 1/4)) for r = 1..S
};

}  // namespace myriad::diag
