#pragma once
// A small self-contained radix-2 complex FFT, used by the diagnostics to compute chain
// autocovariances in O(n log n) (the multi-chain ESS of ess.hpp needs them at every lag).

#include <complex>
#include <cstdint>
#include <vector>

namespace myriad::diag {

/// Smallest power of two ≥ n (1 for n ≤ 1).
int64_t next_power_of_two(int64_t n);

/// Iterative radix-2 decimation-in-time FFT of one power-of-two size, with the bit-reversal
/// permutation and the twiddle factors computed once. Immutable after construction, so one
/// plan may be shared by threads.
class FftPlan {
 public:
  /// Plan for `size` points; throws myriad::invalid_argument unless size is a power of two.
  explicit FftPlan(int64_t size);

  /// Number of points.
  int64_t size() const { return size_; }

  /// In place: X_k = Σ_j x_j e^{−2πi jk/N}.
  void forward(std::complex<double>* data) const;

  /// In place: x_j = (1/N) Σ_k X_k e^{+2πi jk/N}, the exact inverse of forward().
  void inverse(std::complex<double>* data) const;

 private:
  int64_t size_;
  std::vector<int64_t> bit_reversed_;  // index j ↔ bit-reversed j, listed once per swap pair
  // Twiddles of the stage with half-length h at [h − 1, 2h − 1): e^{−πi j/h}, j < h.
  std::vector<std::complex<double>> twiddles_;
};

/// Sample autocovariance of x_0..x_{n−1} at lags 0..n−1 about the sample mean x̄, with the
/// biased divisor n of Stan and ArviZ: γ̂_t = (1/n) Σ_{i<n−t} (x_i − x̄)(x_{i+t} − x̄).
/// Computed as the inverse FFT of the power spectrum of x − x̄ zero-padded to the next power
/// of two ≥ 2n, which makes the circular correlation equal to the linear one.
std::vector<double> autocovariance(const double* x, int64_t n);

}  // namespace myriad::diag
