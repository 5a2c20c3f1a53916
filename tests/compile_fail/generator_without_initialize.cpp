// Must not compile: constrained HMC on a generator without initialize() (model/generator.hpp)
// fails with a static_assert that names the missing member, not deep inside the sampler.
#include "myriad/backend/cpu_chmc_backend.hpp"

namespace {

struct NoInitialize {
  using value_type = double;
  MYRIAD_HD int input_dim() const { return 2; }
  MYRIAD_HD int output_dim() const { return 1; }
  MYRIAD_HD double observed(int) const { return 1.0; }
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    x[0] = u[0] * u[0] + u[1] * u[1];
  }
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return myriad::standard_normal_log_prior(u, 2);
  }
};

}  // namespace

int main() { return myriad::make_cpu_chmc_backend<NoInitialize, double>(NoInitialize{}, 4) ? 0 : 1; }
