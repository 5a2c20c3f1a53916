#include "myriad/diag/fft.hpp"

#include <cmath>
#include <utility>

#include "myriad/core/error.hpp"

namespace myriad::diag {

int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

FftPlan::FftPlan(int64_t size) : size_(size) {
  MYRIAD_EXPECTS(size >= 1 && (size & (size - 1)) == 0, "FFT size must be a power of two, got ",
                 size);
  int bits = 0;
  while ((int64_t{1} << bits) < size) ++bits;
  for (int64_t j = 0; j < size; ++j) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((j >> b) & 1) << (bits - 1 - b);
    if (j < r) {
      bit_reversed_.push_back(j);
      bit_reversed_.push_back(r);
    }
  }
  // Each stage gets its own contiguous table so that the butterfly loop reads it with unit
  // stride; the angles are computed directly (no recurrence) to keep them exact to 1 ulp.
  twiddles_.resize(static_cast<size_t>(size > 1 ? size - 1 : 0));
  const double pi = std::acos(-1.0);
  for (int64_t h = 1; h < size; h <<= 1) {
    for (int64_t j = 0; j < h; ++j) {
      const double angle = -pi * static_cast<double>(j) / static_cast<double>(h);
      twiddles_[h - 1 + j] = {std::cos(angle), std::sin(angle)};
    }
  }
}

void FftPlan::forward(std::complex<double>* data) const {
  for (size_t s = 0; s < bit_reversed_.size(); s += 2) {
    std::swap(data[bit_reversed_[s]], data[bit_reversed_[s + 1]]);
  }
  // std::complex<double> is layout-compatible with double[2] ([complex.numbers]); working on
  // the doubles avoids the NaN-recovery branch of the complex multiply (__muldc3).
  double* d = reinterpret_cast<double*>(data);
  const double* w = reinterpret_cast<const double*>(twiddles_.data());
  const int64_t n = size_;
  if (n >= 2) {  // stage h = 1: the twiddle is 1
    for (int64_t a = 0; a < n; a += 2) {
      const double re = d[2 * a + 2], im = d[2 * a + 3];
      d[2 * a + 2] = d[2 * a] - re;
      d[2 * a + 3] = d[2 * a + 1] - im;
      d[2 * a] += re;
      d[2 * a + 1] += im;
    }
  }
  for (int64_t h = 2; h < n; h <<= 1) {
    const double* wh = w + 2 * (h - 1);
    for (int64_t start = 0; start < n; start += 2 * h) {
      double* lo = d + 2 * start;
      double* hi = lo + 2 * h;
      for (int64_t j = 0; j < h; ++j) {
        const double wr = wh[2 * j], wi = wh[2 * j + 1];
        const double xr = hi[2 * j], xi = hi[2 * j + 1];
        const double tr = wr * xr - wi * xi;
        const double ti = wr * xi + wi * xr;
        hi[2 * j] = lo[2 * j] - tr;
        hi[2 * j + 1] = lo[2 * j + 1] - ti;
        lo[2 * j] += tr;
        lo[2 * j + 1] += ti;
      }
    }
  }
}

void FftPlan::inverse(std::complex<double>* data) const {
  // x = conj(FFT(conj(X))) / N.
  for (int64_t j = 0; j < size_; ++j) data[j] = std::conj(data[j]);
  forward(data);
  const double scale = 1.0 / static_cast<double>(size_);
  for (int64_t j = 0; j < size_; ++j) data[j] = std::conj(data[j]) * scale;
}

std::vector<double> autocovariance(const double* x, int64_t n) {
  MYRIAD_EXPECTS(n >= 0, "sequence length must be non-negative, got ", n);
  std::vector<double> acov(static_cast<size_t>(n), 0.0);
  if (n == 0) return acov;
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);

  const FftPlan plan(next_power_of_two(2 * n));
  std::vector<std::complex<double>> buffer(static_cast<size_t>(plan.size()));
  for (int64_t i = 0; i < n; ++i) buffer[i] = x[i] - mean;
  plan.forward(buffer.data());
  for (auto& c : buffer) c = std::norm(c);
  plan.inverse(buffer.data());
  for (int64_t t = 0; t < n; ++t) acov[t] = buffer[t].real() / static_cast<double>(n);
  return acov;
}

}  // namespace myriad::diag
