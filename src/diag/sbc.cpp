#include "myriad/diag/sbc.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"

namespace myriad::diag {
namespace {

// The stream tag of the band simulation's uniform ranks; keyed by (seed, sample), so samples
// and calls with different seeds are independent.
constexpr Purpose kBandSimulationPurpose = Purpose::sbc_bands;

// The relative tolerance below γ within which a count's two-sided tail still counts as inside.
// Mathematically equal atoms arise at different points (z and 1 − z mirror each other, with one
// tail summed from the left and the other from the right) and differ in the last bits; without
// the tolerance, the atom that γ is, evaluated at the mirror point, could fall just outside.
// Widening the bands only moves the simulated minima in [γ(1 − ε), γ) inside, so the simulated
// fraction outside stays at most α.
constexpr double kAtomTolerance = 1e-10;

void check_ranks(const std::vector<std::int64_t>& ranks, std::int64_t max_rank,
                 const char* caller) {
  MYRIAD_EXPECTS(max_rank >= 1, caller, ": max_rank must be >= 1 (ranks among at least one draw),",
                 " got ", max_rank);
  MYRIAD_EXPECTS(!ranks.empty(), caller, ": no ranks");
  for (std::size_t r = 0; r < ranks.size(); ++r)
    MYRIAD_EXPECTS(ranks[r] >= 0 && ranks[r] <= max_rank, caller, ": rank ", r, " is ", ranks[r],
                   ", outside 0 ... max_rank = ", max_rank);
}

// The two tails of X ~ Binomial(n, p) at one evaluation point, P(X ≤ x) and P(X ≥ x), tabled
// for x within 12 standard deviations of the mean (where the simulated counts fall, up to a
// probability far below any α) and computed by Boost.Math outside. In the table, the pmf comes
// from Boost at the mode and the ratio recurrence pmf(x + 1)/pmf(x) = (n − x)/(x + 1) · p/(1 − p)
// on either side (a relative error of a few ulp per step), and each tail is summed from its own
// end of the window, starting from Boost's tail beyond it: sums of positive terms, so the tails
// keep their relative accuracy however small, with three incomplete-beta evaluations per point
// instead of two per tabled count. The simulation, the bands and the inside test all read these
// same numbers, so a count exactly at the band's edge is classified the same way in all three
// (γ is one of these numbers: the quantile of a discrete statistic).
class BinomialTails {
 public:
  BinomialTails(std::int64_t n, double p) : distribution_(static_cast<double>(n), p), n_(n) {
    const double mean = static_cast<double>(n) * p;
    const double half_width = 12.0 * std::sqrt(mean * (1.0 - p)) + 2.0;
    first_ = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(mean - half_width)));
    last_ = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::ceil(mean + half_width)));
    const auto size = static_cast<std::size_t>(last_ - first_ + 1);
    std::vector<double> pmf(size);
    const std::int64_t mode = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::floor(static_cast<double>(n + 1) * p)), first_, last_);
    const double odds = p / (1.0 - p);
    pmf[mode - first_] = boost::math::pdf(distribution_, static_cast<double>(mode));
    for (std::int64_t x = mode; x < last_; ++x)
      pmf[x + 1 - first_] =
          pmf[x - first_] * static_cast<double>(n - x) / static_cast<double>(x + 1) * odds;
    for (std::int64_t x = mode; x > first_; --x)
      pmf[x - 1 - first_] =
          pmf[x - first_] * static_cast<double>(x) / static_cast<double>(n - x + 1) / odds;
    below_.resize(size);
    above_.resize(size);
    double sum = compute_below(first_ - 1);
    for (std::size_t j = 0; j < size; ++j) below_[j] = std::min(1.0, sum += pmf[j]);
    sum = compute_above(last_ + 1);
    for (std::size_t j = size; j-- > 0;) above_[j] = std::min(1.0, sum += pmf[j]);
  }

  /// P(X ≤ x).
  double below(std::int64_t x) const {
    return (x >= first_ && x <= last_) ? below_[x - first_] : compute_below(x);
  }
  /// P(X ≥ x).
  double above(std::int64_t x) const {
    return (x >= first_ && x <= last_) ? above_[x - first_] : compute_above(x);
  }
  /// The two-sided tail probability min(1, 2·min(P(X ≤ x), P(X ≥ x))) (Säilynoja et al., Sec. 2).
  double two_sided(std::int64_t x) const {
    return std::min(1.0, 2.0 * std::min(below(x), above(x)));
  }

  /// The band {x : two_sided(x) ≥ γ} = [lower, upper]: lower = min{x : 2 P(X ≤ x) ≥ γ}, the
  /// binomial quantile q(γ/2); upper = max{x : 2 P(X ≥ x) ≥ γ}, which is q(1 − γ/2) except
  /// where P(X ≥ x) = γ/2 exactly — and there the count belongs inside, since the α-quantile
  /// γ of the simulated minima was taken with "inside ⟺ two_sided ≥ γ". P(X ≤ x) grows and
  /// P(X ≥ x) falls with x, so both are bisections; for γ ≤ 1 the median lies in the band.
  void band(double gamma, std::int64_t& lower, std::int64_t& upper) const {
    gamma *= 1.0 - kAtomTolerance;
    std::int64_t lo = 0, hi = n_;  // 2 P(X ≤ n) = 2 ≥ γ
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (std::min(1.0, 2.0 * below(mid)) >= gamma)
        hi = mid;
      else
        lo = mid + 1;
    }
    lower = lo;
    lo = 0, hi = n_;  // 2 P(X ≥ 0) = 2 ≥ γ
    while (lo < hi) {
      const std::int64_t mid = hi - (hi - lo) / 2;
      if (std::min(1.0, 2.0 * above(mid)) >= gamma)
        lo = mid;
      else
        hi = mid - 1;
    }
    upper = lo;
  }

 private:
  double compute_below(std::int64_t x) const {
    if (x < 0) return 0.0;
    if (x >= n_) return 1.0;
    return boost::math::cdf(distribution_, static_cast<double>(x));
  }
  double compute_above(std::int64_t x) const {
    if (x <= 0) return 1.0;
    if (x > n_) return 0.0;
    // P(X ≥ x) = P(X > x − 1), from the complement directly (no cancellation in 1 − cdf).
    return boost::math::cdf(boost::math::complement(distribution_, static_cast<double>(x - 1)));
  }

  boost::math::binomial_distribution<double> distribution_;
  std::int64_t n_;
  std::int64_t first_ = 0, last_ = -1;
  std::vector<double> below_, above_;
};

}  // namespace

std::int64_t sbc_rank(const double* draws, std::int64_t count, std::int64_t stride, double truth,
                      double tie_uniform) {
  MYRIAD_EXPECTS(count >= 0, "sbc_rank: count must be >= 0, got ", count);
  MYRIAD_EXPECTS(stride >= 1, "sbc_rank: stride must be >= 1, got ", stride);
  MYRIAD_EXPECTS(count == 0 || draws != nullptr, "sbc_rank: draws is null");
  MYRIAD_EXPECTS(!std::isnan(truth), "sbc_rank: truth is NaN");
  MYRIAD_EXPECTS(tie_uniform >= 0.0 && tie_uniform < 1.0,
                 "sbc_rank: tie_uniform must lie in [0, 1), got ", tie_uniform);
  std::int64_t below = 0, ties = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double draw = draws[i * stride];
    MYRIAD_EXPECTS(!std::isnan(draw), "sbc_rank: draw ", i, " is NaN");
    below += draw < truth;
    ties += draw == truth;
  }
  // Truth's position among itself and its t ties is uniform on {0, …, t} when truth and draws
  // are exchangeable; ⌊u·(t + 1)⌋ ≤ t for u < 1.
  const auto tie_position =
      static_cast<std::int64_t>(std::floor(tie_uniform * static_cast<double>(ties + 1)));
  return below + std::min(tie_position, ties);
}

RankHistogram rank_histogram(const std::vector<std::int64_t>& ranks, std::int64_t max_rank,
                             int bins) {
  MYRIAD_EXPECTS(bins >= 2, "rank_histogram: bins must be >= 2, got ", bins);
  check_ranks(ranks, max_rank, "rank_histogram");
  MYRIAD_EXPECTS((max_rank + 1) % bins == 0, "rank_histogram: bins = ", bins,
                 " must divide max_rank + 1 = ", max_rank + 1,
                 " (bins of unequal numbers of rank values are not equally likely under "
                 "uniformity)");
  RankHistogram histogram;
  histogram.bins = bins;
  histogram.max_rank = max_rank;
  histogram.counts.assign(static_cast<std::size_t>(bins), 0);
  const std::int64_t width = (max_rank + 1) / bins;
  for (std::int64_t rank : ranks) ++histogram.counts[static_cast<std::size_t>(rank / width)];

  // Pearson's X² = Σ (O_b − E)²/E with E = N/bins; asymptotically χ² with bins − 1 degrees of
  // freedom, whose upper tail is the regularized upper incomplete gamma Q(k/2, x/2).
  const double expected = static_cast<double>(ranks.size()) / bins;
  double chi_square = 0.0;
  for (std::int64_t count : histogram.counts) {
    const double deviation = static_cast<double>(count) - expected;
    chi_square += deviation * deviation / expected;
  }
  histogram.chi_square = chi_square;
  histogram.degrees_of_freedom = bins - 1;
  histogram.p_value = boost::math::gamma_q(0.5 * (bins - 1), 0.5 * chi_square);
  return histogram;
}

EcdfBands ecdf_difference_bands(const std::vector<std::int64_t>& ranks, std::int64_t max_rank,
                                double alpha, int points, std::uint64_t seed, int simulations) {
  check_ranks(ranks, max_rank, "ecdf_difference_bands");
  MYRIAD_EXPECTS(alpha > 0.0 && alpha < 1.0, "ecdf_difference_bands: alpha must lie in (0, 1),",
                 " got ", alpha);
  MYRIAD_EXPECTS(simulations >= 1, "ecdf_difference_bands: simulations must be >= 1, got ",
                 simulations);
  const auto n = static_cast<std::int64_t>(ranks.size());
  const std::int64_t values = max_rank + 1;  // L + 1 possible ranks
  const std::int64_t k =
      points > 0 ? points : std::min<std::int64_t>(values, std::max<std::int64_t>(n, 2));
  MYRIAD_EXPECTS(k >= 2 && k <= values, "ecdf_difference_bands: points must lie in 2 ... ",
                 "max_rank + 1 = ", values, " (or be <= 0 for the default), got ", points);

  // Evaluation points at rank boundaries c_i = ⌊i (L + 1)/K⌋, i = 1 … K − 1 (strictly increasing
  // in 1 … L since (L + 1)/K ≥ 1): F̂(z_i) = #{rank < c_i}/N = #{u ≤ z_i}/N for the fractional
  // ranks u = (rank + 1)/(L + 2), because (r + 1)/(L + 2) ≤ c/(L + 1) ⟺ r + 1 ≤ c + c/(L + 1)
  // ⟺ r < c for integers r and 1 ≤ c ≤ L. Under uniform ranks that count is exactly
  // Binomial(N, c_i/(L + 1)), which is what the bands assume (header comment).
  const std::int64_t evaluations = k - 1;
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(evaluations));
  EcdfBands bands;
  bands.alpha = alpha;
  bands.z.resize(boundary.size());
  for (std::int64_t i = 0; i < evaluations; ++i) {
    boundary[i] = (i + 1) * values / k;
    bands.z[i] = static_cast<double>(boundary[i]) / static_cast<double>(values);
  }
  std::vector<BinomialTails> tails;
  tails.reserve(boundary.size());
  for (std::int64_t i = 0; i < evaluations; ++i) tails.emplace_back(n, bands.z[i]);

  // Simulation of γ (Säilynoja et al., Sec. 2): for each of M samples of N uniform ranks, the
  // counts x_i = #{rank < c_i} come from the histogram over the K cells [c_j, c_{j+1}) (c_0 = 0,
  // c_K = L + 1): the cell of rank r is the largest j with ⌊j (L + 1)/K⌋ ≤ r, i.e. with
  // j (L + 1)/K < r + 1, which is ⌈(r + 1) K/(L + 1)⌉ − 1 = ⌊((r + 1) K − 1)/(L + 1)⌋. The
  // sample's statistic is the smallest two-sided tail probability over the points.
  std::vector<double> minima(static_cast<std::size_t>(simulations));
#pragma omp parallel
  {
    std::vector<std::int64_t> cells(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
    for (int m = 0; m < simulations; ++m) {
      const RandomStream stream(seed, static_cast<std::uint64_t>(m));
      std::fill(cells.begin(), cells.end(), 0);
      // Two uniform ranks per Philox block, from words 0–1 and 2–3.
      for (std::int64_t j = 0; j < n; j += 2) {
        const RandomStream::Block block =
            stream.block(0, kBandSimulationPurpose, static_cast<std::uint32_t>(j / 2));
        for (int word = 0; word < 4 && j + word / 2 < n; word += 2) {
          const double u =
              RandomStream::uniform_from_words<double>(block.v[word], block.v[word + 1]);
          const auto rank = std::min<std::int64_t>(
              static_cast<std::int64_t>(u * static_cast<double>(values)), max_rank);
          ++cells[static_cast<std::size_t>(((rank + 1) * k - 1) / values)];
        }
      }
      double smallest = 1.0;
      std::int64_t count = 0;
      for (std::int64_t i = 0; i < evaluations; ++i) {
        count += cells[static_cast<std::size_t>(i)];
        smallest = std::min(smallest, tails[static_cast<std::size_t>(i)].two_sided(count));
      }
      minima[static_cast<std::size_t>(m)] = smallest;
    }
  }
  // γ = the ⌊αM⌋-th smallest minimum (from 0): at most ⌊αM⌋ ≤ αM simulated samples have a
  // minimum below γ, i.e. fall outside bands that keep every count with two-sided ≥ γ.
  const auto quantile_index = std::min<std::size_t>(
      static_cast<std::size_t>(std::floor(alpha * simulations)), minima.size() - 1);
  std::nth_element(minima.begin(), minima.begin() + static_cast<std::ptrdiff_t>(quantile_index),
                   minima.end());
  bands.gamma = minima[quantile_index];

  // The observed ECDF difference and the bands, per point (ranks sorted, so no table of L + 1
  // counts).
  std::vector<std::int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  bands.ecdf_difference.resize(boundary.size());
  bands.lower.resize(boundary.size());
  bands.upper.resize(boundary.size());
  const double scale = 1.0 / static_cast<double>(n);
  std::int64_t below = 0;  // #{rank < c_i}
  for (std::int64_t i = 0; i < evaluations; ++i) {
    while (below < n && sorted[static_cast<std::size_t>(below)] < boundary[i]) ++below;
    const double z = bands.z[i];
    std::int64_t lower = 0, upper = 0;
    tails[i].band(bands.gamma, lower, upper);
    bands.ecdf_difference[i] = static_cast<double>(below) * scale - z;
    bands.lower[i] = static_cast<double>(lower) * scale - z;
    bands.upper[i] = static_cast<double>(upper) * scale - z;
    // Inside on the integer counts, not the differences: no rounding at the edges.
    if (below < lower || below > upper) bands.inside = false;
  }
  return bands;
}

}  // namespace myriad::diag
