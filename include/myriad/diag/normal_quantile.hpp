#pragma once
// Inverse of the standard normal CDF, Φ⁻¹(p), by Wichura's algorithm AS 241 (PPND16):
// M. J. Wichura (1988), "Algorithm AS 241: The percentage points of the normal distribution",
// Applied Statistics 37(3), 477–484. Three minimax rational approximations of degree 7/7
// (central region |p − 1/2| ≤ 0.425; tails in r = sqrt(−log min(p, 1 − p)), split at r = 5)
// give about 1e-16 relative accuracy, so no Newton refinement (and no erfc) is needed.

#include <cmath>
#include <cstddef>
#include <limits>

namespace myriad::diag {

namespace detail {
/// c[0] + c[1]·r + … + c[N−1]·r^{N−1} by Horner's rule.
template <std::size_t N>
inline double horner(const double (&c)[N], double r) {
  double sum = c[N - 1];
  for (std::size_t i = N - 1; i-- > 0;) sum = sum * r + c[i];
  return sum;
}
}  // namespace detail

/// Φ⁻¹(p) for p in (0, 1); −∞ at p = 0, +∞ at p = 1, NaN outside [0, 1] or for NaN.
inline double normal_quantile(double p) {
  // AS 241 coefficients, increasing powers: a/b central, c/d near tail, e/f far tail.
  static constexpr double a[] = {3.3871328727963666080e+0, 1.3314166789178437745e+2,
                                 1.9715909503065514427e+3, 1.3731693765509461125e+4,
                                 4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                 3.3430575583588128105e+4, 2.5090809287301226727e+3};
  static constexpr double b[] = {1.00000000000000000000e+0, 4.2313330701600911252e+1,
                                 6.8718700749205790830e+2,  5.3941960214247511077e+3,
                                 2.1213794301586595867e+4,  3.9307895800092710610e+4,
                                 2.8729085735721942674e+4,  5.2264952788528545610e+3};
  static constexpr double c[] = {1.42343711074968357734e+0, 4.63033784615654529590e+0,
                                 5.76949722146069140550e+0, 3.64784832476320460504e+0,
                                 1.27045825245236838258e+0, 2.41780725177450611770e-1,
                                 2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double d[] = {1.00000000000000000000e+0, 2.05319162663775882187e+0,
                                 1.67638483018380384940e+0, 6.89767334985100004550e-1,
                                 1.48103976427480074590e-1, 1.51986665636164571966e-2,
                                 5.47593808499534494600e-4, 1.05075007164441684324e-9};
  static constexpr double e[] = {6.65790464350110377720e+0, 5.46378491116411436990e+0,
                                 1.78482653991729133580e+0, 2.96560571828504891230e-1,
                                 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                 2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double f[] = {1.00000000000000000000e+0, 5.99832206555887937690e-1,
                                 1.36929880922735805310e-1, 1.48753612908506148525e-2,
                                 7.86869131145613259100e-4, 1.84631831751005468180e-5,
                                 1.42151175831644588870e-7, 2.04426310338993978564e-15};

  if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();

  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    // Central region: Φ⁻¹(p) = q · A(r)/B(r), r = 0.180625 − q².
    const double r = 0.180625 - q * q;
    return q * detail::horner(a, r) / detail::horner(b, r);
  }
  // Tails: r = sqrt(−log(min(p, 1 − p))); 1 − p is exact for p > 1/2 (Sterbenz).
  const double r = std::sqrt(-std::log(q < 0.0 ? p : 1.0 - p));
  const double x = r <= 5.0 ? detail::horner(c, r - 1.6) / detail::horner(d, r - 1.6)
                            : detail::horner(e, r - 5.0) / detail::horner(f, r - 5.0);
  return q < 0.0 ? -x : x;
}

}  // namespace myriad::diag
