#pragma once
// The continuous-tempering estimators over an ensemble of chains (thesis §5.4, (5.29)–(5.31);
// thesis-methods.md §8.3), every chain sample used, Rao–Blackwellised over β:
//
//   Ẑ = ζ Σ_n w₁(x_n) / Σ_n w₀(x_n),   E_p[f] ≈ Σ w₁ f / Σ w₁,   E_q[f] ≈ Σ w₀ f / Σ w₀,
//
// with the weights of estimate/continuous_tempering.hpp. Each is a ratio of sums, so each chain
// keeps its own sums and the chains, independent, give the standard errors: for R = Σ_c a_c /
// Σ_c b_c over C chains, the delta method's Var R ≈ C / (C − 1) · Σ_c (a_c − R b_c)² / (Σ_c b_c)²
// (a ratio estimator's variance; Cochran, "Sampling Techniques", §6.3), and SE(log R) = SE(R)/R.
// Ẑ is consistent, not unbiased (unlike AIS's).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/estimate/continuous_tempering.hpp"

namespace myriad {

/// An estimate and its standard error.
struct EstimateWithError {
  double value = 0;
  double se = 0;
};

/// A view of per-chain sums of w₀, w₁, w₀ f and w₁ f for `quantities` functions f of x, in
/// device-visible arrays laid out [end][chain] and [end][quantity][chain] (a warp's chains add to
/// consecutive addresses): each chain adds only to its own entries.
struct TemperingSumsView {
  double* weight = nullptr;    ///< [end][chain], end 0 = base (w₀), 1 = target (w₁)
  double* weighted = nullptr;  ///< [end][quantity][chain]
  std::int64_t chains = 0;
  int quantities = 0;

  /// Adds chain c's sample with weights w and f(x) = f[0 … quantities) (any indexable f).
  /// Returns false, adding nothing, when a weight is not finite: the caller counts the sample.
  template <class T, class F>
  MYRIAD_HD bool add(std::int64_t c, const TemperingWeights<T>& w, const F& f) const {
    const double w0 = static_cast<double>(w.base), w1 = static_cast<double>(w.target);
    if (!myriad::isfinite(w0) || !myriad::isfinite(w1)) return false;
    weight[c] += w0;
    weight[chains + c] += w1;
    for (int q = 0; q < quantities; ++q) {
      const double fq = static_cast<double>(f[q]);
      weighted[static_cast<std::int64_t>(q) * chains + c] += w0 * fq;
      weighted[static_cast<std::int64_t>(quantities + q) * chains + c] += w1 * fq;
    }
    return true;
  }
};

/// Per-chain sums of w₀, w₁, w₀ f and w₁ f for `quantities` functions f of x (TemperingSumsView's
/// layout, owned on the host), and the estimators over them.
class TemperingSums {
 public:
  TemperingSums(std::int64_t chains, int quantities)
      : chains_(chains),
        quantities_(quantities),
        weight_(static_cast<std::size_t>(2 * chains), 0.0),
        weighted_(static_cast<std::size_t>(2 * chains * quantities), 0.0) {
    MYRIAD_EXPECTS(chains >= 2, "tempering estimates need at least 2 chains, got ", chains);
    MYRIAD_EXPECTS(quantities >= 0, "quantities must be non-negative, got ", quantities);
  }

  /// The sums as a view (their arrays are 2 · chains and 2 · quantities · chains long: a backend
  /// fills them from its own).
  TemperingSumsView view() { return {weight_.data(), weighted_.data(), chains_, quantities_}; }

  /// Adds chain c's sample with weights w and f(x) = f[0 … quantities). Non-finite weights are
  /// the caller's to count; they are not added.
  template <class T>
  void add(std::int64_t c, const TemperingWeights<T>& w, const T* f) {
    view().add(c, w, f);
  }

  /// log Ẑ = log ζ + log(Σ w₁ / Σ w₀), its standard error over chains.
  EstimateWithError log_z(double log_zeta) const {
    const EstimateWithError r = ratio([&](std::int64_t c) { return weight_[index(1, c)]; },
                                      [&](std::int64_t c) { return weight_[index(0, c)]; });
    return {log_zeta + std::log(r.value), r.se / r.value};
  }

  /// E_p[f_q] (end 1, weights w₁) or E_q[f_q] (end 0, weights w₀), with its standard error.
  EstimateWithError target_mean(int q) const { return mean(1, q); }
  EstimateWithError base_mean(int q) const { return mean(0, q); }

  std::int64_t chains() const { return chains_; }

 private:
  std::size_t index(int end, std::int64_t c) const {
    return static_cast<std::size_t>(end * chains_ + c);
  }
  std::size_t index(int end, std::int64_t c, int q) const {
    return static_cast<std::size_t>((static_cast<std::int64_t>(end) * quantities_ + q) * chains_ +
                                    c);
  }

  EstimateWithError mean(int end, int q) const {
    MYRIAD_EXPECTS(q >= 0 && q < quantities_, "quantity ", q, " out of range");
    return ratio([&](std::int64_t c) { return weighted_[index(end, c, q)]; },
                 [&](std::int64_t c) { return weight_[index(end, c)]; });
  }

  /// Σ a / Σ b over chains and its delta-method standard error (file comment).
  template <class A, class B>
  EstimateWithError ratio(const A& a, const B& b) const {
    double sum_a = 0, sum_b = 0;
    for (std::int64_t c = 0; c < chains_; ++c) {
      sum_a += a(c);
      sum_b += b(c);
    }
    const double r = sum_a / sum_b;
    double spread = 0;
    for (std::int64_t c = 0; c < chains_; ++c) {
      const double e = a(c) - r * b(c);
      spread += e * e;
    }
    const double n = static_cast<double>(chains_);
    return {r, std::sqrt(n / (n - 1) * spread) / std::fabs(sum_b)};
  }

  std::int64_t chains_;
  int quantities_;
  std::vector<double> weight_;    ///< [end][chain]
  std::vector<double> weighted_;  ///< [end][quantity][chain]
};

}  // namespace myriad
