#include "myriad/diag/ess.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "myriad/diag/fft.hpp"
#include "myriad/diag/rhat.hpp"

namespace myriad::diag {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Lags are computed by direct sums in blocks of kLagBlock for the first kDirectLags lags and by
// FFT for all lags beyond. Geyer's truncation usually stops within a few lags for well-mixing
// chains, where the direct sums cost 8 multiply-adds per draw against the FFT's 5·log2(2n), but
// strongly autocorrelated chains need hundreds of lags, where only the FFT is O(n log n).
constexpr int64_t kLagBlock = 8;
constexpr int64_t kDirectLags = 2 * kLagBlock;

// Mean over m sequences of their autocovariances γ̂_{j,t} (divisor n, each about its own mean),
// computed on demand: operator()(t) fills whatever block of lags t falls in.
template <class Value>
class LazyMeanAutocovariance {
 public:
  LazyMeanAutocovariance(int64_t m, int64_t n, const std::vector<double>& means, const Value& value)
      : m_(m), n_(n), means_(means), value_(value), acov_(static_cast<size_t>(n), 0.0) {}

  double operator()(int64_t lag) {
    if (lag >= filled_) {
      if (lag < kDirectLags) {
        fill_direct(filled_, std::min(n_, (lag / kLagBlock + 1) * kLagBlock));
      } else {
        fill_fft();
      }
    }
    return acov_[lag];
  }

  // All lags by FFT of the centred sequences y_j zero-padded to N ≥ 2n: one forward transform
  // per pair packed as z = a + ib, whose power spectrum |Z_k|² has even part
  // (|Z_k|² + |Z_{N−k}|²)/2 = |A_k|² + |B_k|². So the real part of the inverse transform of
  // Σ|Z_k|² is Σ_j Σ_i y_{j,i} y_{j,i+t}, with one inverse transform for all sequences.
  void fill_fft() {
    const FftPlan plan(next_power_of_two(2 * n_));
    const int64_t size = plan.size();
    std::vector<std::complex<double>> buffer(static_cast<size_t>(size));
    std::vector<double> spectrum(static_cast<size_t>(size), 0.0);
    for (int64_t s = 0; s < m_; s += 2) {
      const double mean_a = means_[s];
      if (s + 1 < m_) {
        const double mean_b = means_[s + 1];
        for (int64_t t = 0; t < n_; ++t) {
          buffer[t] = {value_(s, t) - mean_a, value_(s + 1, t) - mean_b};
        }
      } else {
        for (int64_t t = 0; t < n_; ++t) buffer[t] = value_(s, t) - mean_a;
      }
      std::fill(buffer.begin() + n_, buffer.end(), std::complex<double>{});
      plan.forward(buffer.data());
      for (int64_t k = 0; k < size; ++k) spectrum[k] += std::norm(buffer[k]);
    }
    for (int64_t k = 0; k < size; ++k) buffer[k] = spectrum[k];
    plan.inverse(buffer.data());
    const double scale = 1.0 / (static_cast<double>(n_) * static_cast<double>(m_));
    for (int64_t t = 0; t < n_; ++t) acov_[t] = buffer[t].real() * scale;
    filled_ = n_;
  }

  const std::vector<double>& all() const { return acov_; }

 private:
  // Lags [from, to), to − from ≤ kLagBlock, by direct sums over each centred sequence.
  void fill_direct(int64_t from, int64_t to) {
    std::vector<double> centred(static_cast<size_t>(n_));
    double total[kLagBlock] = {};
    for (int64_t s = 0; s < m_; ++s) {
      const double mean = means_[s];
      for (int64_t t = 0; t < n_; ++t) centred[t] = value_(s, t) - mean;
      const double* y = centred.data();
      double sum[kLagBlock] = {};
      // Σ_i y_i y_{i+lag} for kLagBlock lags at once: y_i is loaded once per block.
      const int64_t all_in_range = n_ - from - (kLagBlock - 1);
      int64_t i = 0;
      for (; i < all_in_range; ++i) {
        const double yi = y[i];
        const double* ahead = y + i + from;
        for (int64_t k = 0; k < kLagBlock; ++k) sum[k] += yi * ahead[k];
      }
      for (; i < n_ - from; ++i) {
        for (int64_t k = 0; k < kLagBlock && i + from + k < n_; ++k) {
          sum[k] += y[i] * y[i + from + k];
        }
      }
      for (int64_t k = 0; k < kLagBlock; ++k) total[k] += sum[k];
    }
    const double scale = 1.0 / (static_cast<double>(n_) * static_cast<double>(m_));
    for (int64_t t = from; t < to; ++t) acov_[t] = total[t - from] * scale;
    filled_ = to;
  }

  int64_t m_, n_;
  const std::vector<double>& means_;
  const Value& value_;
  std::vector<double> acov_;
  int64_t filled_ = 0;
};

// Sequence means; false when a draw is non-finite or all draws are equal.
template <class Value>
bool sequence_means(int64_t m, int64_t n, const Value& value, std::vector<double>& means) {
  means.assign(static_cast<size_t>(m), 0.0);
  double lowest = value(0, 0), highest = lowest, total = 0.0;
  for (int64_t s = 0; s < m; ++s) {
    double sum = 0.0;
    for (int64_t t = 0; t < n; ++t) {
      const double x = value(s, t);
      sum += x;
      lowest = std::min(lowest, x);
      highest = std::max(highest, x);
    }
    means[s] = sum / static_cast<double>(n);
    total += sum;
  }
  return std::isfinite(total) && lowest != highest;
}

// Multi-chain ESS of m sequences of n draws read through value(sequence, draw); a port of
// ArviZ's _ess (itself Stan's ess), with the notation of Vehtari et al. (2021), Sec. 3.2.
template <class Value>
double geyer_ess(int64_t m, int64_t n, const Value& value) {
  if (m < 1 || n < 2) return kNaN;
  std::vector<double> means;
  if (!sequence_means(m, n, value, means)) return kNaN;
  LazyMeanAutocovariance<Value> acov(m, n, means, value);

  const double dn = static_cast<double>(n);
  // W: mean within-sequence variance (divisor n − 1); var⁺ = (n − 1)/n · W + B/n.
  const double within = acov(0) * dn / (dn - 1.0);
  double var_plus = within * (dn - 1.0) / dn;
  if (m > 1) {
    double grand_mean = 0.0;
    for (double mean : means) grand_mean += mean;
    grand_mean /= static_cast<double>(m);
    double between = 0.0;
    for (double mean : means) between += (mean - grand_mean) * (mean - grand_mean);
    var_plus += between / static_cast<double>(m - 1);
  }
  if (!(var_plus > 0.0)) return kNaN;
  auto rho_at = [&](int64_t lag) { return 1.0 - (within - acov(lag)) / var_plus; };

  // Geyer's initial positive sequence: sum pairs ρ̂_{2k} + ρ̂_{2k+1} while they are positive.
  std::vector<double> rho(static_cast<size_t>(n), 0.0);
  rho[0] = 1.0;
  double rho_even = 1.0;
  double rho_odd = rho_at(1);
  rho[1] = rho_odd;
  int64_t t = 1;
  while (t < n - 3 && rho_even + rho_odd > 0.0) {
    rho_even = rho_at(t + 1);
    rho_odd = rho_at(t + 2);
    if (rho_even + rho_odd >= 0.0) {
      rho[t + 1] = rho_even;
      rho[t + 2] = rho_odd;
    }
    t += 2;
  }
  const int64_t max_t = t - 2;
  // Stan's improvement for antithetic chains: keep the last even lag when it is positive.
  if (rho_even > 0.0) rho[max_t + 1] = rho_even;
  // Geyer's initial monotone sequence: the pair sums must not increase.
  for (int64_t k = 1; k <= max_t - 2; k += 2) {
    const double previous = rho[k - 1] + rho[k];
    if (rho[k + 1] + rho[k + 2] > previous) {
      rho[k + 1] = previous / 2.0;
      rho[k + 2] = previous / 2.0;
    }
  }
  double sum = 0.0;
  for (int64_t k = 0; k <= max_t; ++k) sum += rho[k];
  double tau = -1.0 + 2.0 * sum + (max_t + 1 < n ? rho[max_t + 1] : 0.0);
  const double draws = static_cast<double>(m) * dn;
  // τ̂ ≥ 1/log10(S) bounds the ESS of antithetic chains by S·log10(S).
  tau = std::max(tau, 1.0 / std::log10(draws));
  for (int64_t k = 0; k <= max_t + 1 && k < n; ++k) {
    if (std::isnan(rho[k])) return kNaN;
  }
  return draws / tau;
}

bool usable(DrawsView draws) {
  if (draws.chains < 1 || draws.draws < 4 || draws.data == nullptr) return false;
  for (int64_t c = 0; c < draws.chains; ++c) {
    for (int64_t t = 0; t < draws.draws; ++t) {
      if (!std::isfinite(draws(c, t))) return false;
    }
  }
  return true;
}

// Split chain s of `draws`: chain s/2's first half for even s, its last half for odd s.
struct SplitValue {
  DrawsView draws;
  int64_t second;  // first draw of the last half, n − ⌊n/2⌋
  double operator()(int64_t s, int64_t t) const { return draws(s >> 1, (s & 1) * second + t); }
};

}  // namespace

std::vector<double> mean_autocovariance(DrawsView chains) {
  if (chains.chains < 1 || chains.draws < 1) return {};
  auto value = [&](int64_t s, int64_t t) { return chains(s, t); };
  std::vector<double> means(static_cast<size_t>(chains.chains));
  for (int64_t s = 0; s < chains.chains; ++s) {
    double sum = 0.0;
    for (int64_t t = 0; t < chains.draws; ++t) sum += chains(s, t);
    means[s] = sum / static_cast<double>(chains.draws);
  }
  LazyMeanAutocovariance<decltype(value)> acov(chains.chains, chains.draws, means, value);
  acov.fill_fft();
  return acov.all();
}

double effective_sample_size(DrawsView chains) {
  if (chains.data == nullptr) return kNaN;
  return geyer_ess(chains.chains, chains.draws, [&](int64_t s, int64_t t) { return chains(s, t); });
}

double ess_basic(DrawsView draws) {
  if (!usable(draws)) return kNaN;
  const SplitValue split{draws, draws.draws - draws.draws / 2};
  return geyer_ess(2 * draws.chains, draws.draws / 2, split);
}

double ess_bulk(DrawsView draws) {
  const RankedDraws ranked(draws);
  if (!ranked.valid()) return kNaN;
  return effective_sample_size(ranked.bulk());
}

double ess_below(DrawsView draws, double threshold) {
  if (!usable(draws) || std::isnan(threshold)) return kNaN;
  const SplitValue split{draws, draws.draws - draws.draws / 2};
  return geyer_ess(2 * draws.chains, draws.draws / 2,
                   [&](int64_t s, int64_t t) { return split(s, t) <= threshold ? 1.0 : 0.0; });
}

double ess_tail(DrawsView draws) {
  const RankedDraws ranked(draws);
  if (!ranked.valid()) return kNaN;
  // The trimmed copy splits into the same half chains as `draws`, and is contiguous.
  const double lower = ess_below(ranked.trimmed(), ranked.quantile(0.05));
  const double upper = ess_below(ranked.trimmed(), ranked.quantile(0.95));
  if (std::isnan(lower) || std::isnan(upper)) return kNaN;
  return std::min(lower, upper);
}

double mcse_mean(DrawsView draws) {
  if (!usable(draws)) return kNaN;
  const double count = static_cast<double>(draws.size());
  double sum = 0.0;
  for (int64_t c = 0; c < draws.chains; ++c) {
    for (int64_t t = 0; t < draws.draws; ++t) sum += draws(c, t);
  }
  const double mean = sum / count;
  double squares = 0.0;
  for (int64_t c = 0; c < draws.chains; ++c) {
    for (int64_t t = 0; t < draws.draws; ++t) {
      squares += (draws(c, t) - mean) * (draws(c, t) - mean);
    }
  }
  return std::sqrt(squares / (count - 1.0)) / std::sqrt(ess_basic(draws));
}

}  // namespace myriad::diag
