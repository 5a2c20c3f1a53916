#pragma once
// Quadrature for checking normalising constants: the trapezoid rule on a box of one or two
// dimensions in log space, and on a line for integrands analytic in a strip.

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace myriad::testing {

/// log ∫ exp(f) over an axis-aligned box by the trapezoid rule with `steps` intervals per axis
/// (one or two dimensions), with the maximum subtracted before exponentiating.
inline double log_trapezoid(const std::function<double(const std::vector<double>&)>& f,
                            const std::vector<double>& lo, const std::vector<double>& hi,
                            int steps) {
  const int dim = static_cast<int>(lo.size());
  std::vector<double> h(dim);
  for (int d = 0; d < dim; ++d) h[d] = (hi[d] - lo[d]) / steps;
  std::vector<double> values;
  std::vector<double> weights;
  std::vector<double> x(dim);
  const int n1 = dim == 2 ? steps + 1 : 1;
  for (int a = 0; a <= steps; ++a) {
    for (int b = 0; b < n1; ++b) {
      x[0] = lo[0] + a * h[0];
      double w = (a == 0 || a == steps) ? 0.5 : 1.0;
      if (dim == 2) {
        x[1] = lo[1] + b * h[1];
        w *= (b == 0 || b == steps) ? 0.5 : 1.0;
      }
      values.push_back(f(x));
      weights.push_back(w);
    }
  }
  const double max_value = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (std::size_t k = 0; k < values.size(); ++k)
    sum += weights[k] * std::exp(values[k] - max_value);
  double volume = 1;
  for (double v : h) volume *= v;
  return max_value + std::log(sum * volume);
}

/// ∫_{−∞}^{∞} g(y) dy by the trapezoid rule on [lo, hi] with step h: for integrands analytic in
/// a strip around the real axis and negligible beyond [lo, hi], the error falls like
/// exp(−2π·width/h) (Trefethen & Weideman 2014, "The exponentially convergent trapezoidal
/// rule", §5), far below double rounding at the steps used here.
inline double trapezoid_on_line(const std::function<double(double)>& g, double lo, double hi,
                                double h) {
  const int n = static_cast<int>(std::ceil((hi - lo) / h));
  double sum = 0.5 * (g(lo) + g(hi));
  for (int i = 1; i < n; ++i) sum += g(lo + i * (hi - lo) / n);
  return sum * (hi - lo) / n;
}

}  // namespace myriad::testing
