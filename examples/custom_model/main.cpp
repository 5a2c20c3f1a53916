// A user-defined model sampled with myriad: independent normals x_i ~ N(i, (1 + i)²) written
// once over a generic scalar. It supplies no gradient, so myriad differentiates it with
// forward-mode dual numbers. The program checks its posterior means against the truth within
// 5 Monte Carlo standard errors and exits non-zero otherwise. Compiled by a host compiler it
// runs on the CPU; compiled by nvcc (main.cu) it carries its own CUDA backend.

#include <cmath>
#include <cstdio>
#include <string>

#include <myriad/core/math.hpp>
#include <myriad/io/summary_csv.hpp>
#include <myriad/run/sample.hpp>

/// The model concept: dim() and a log density generic over the element type of x.
struct ShiftedNormals {
  int dimension = 4;

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S lp = S(0);
    for (int i = 0; i < dimension; ++i) lp += myriad::normal_log_density(x[i], S(i), S(1 + i));
    return lp;
  }
};

int main() {
  myriad::SampleConfig config;
  config.chains = 256;
  config.warmup = 300;
  config.draws = 300;
  config.seed = 42;
#if defined(__CUDACC__)
  config.device = myriad::Device::automatic;  // main.cu: this model's CUDA backend is compiled in
#else
  config.device = myriad::Device::cpu;  // a host compiler reaches only the library's instances
#endif

  const myriad::SampleResult result = myriad::sample(ShiftedNormals{}, config);
  std::fputs(myriad::io::format_summary_table(result.summary).c_str(), stdout);
  std::printf("%.3g gradient evaluations/s on %s\n", result.gradient_evaluations_per_second(),
              result.device.c_str());

  int failures = 0;
  for (int i = 0; i < 4; ++i) {
    const auto& row = result.summary[i];
    if (!(std::abs(row.mean - i) <= 5 * row.mcse_mean) || !(row.rhat < 1.01)) {
      std::printf("%s: mean %g (exact %d, mcse %g), rhat %g\n", row.name.c_str(), row.mean, i,
                  row.mcse_mean, row.rhat);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
