// The GP probit workload (thesis §3.6.2, models/gp_probit.hpp) has no ground truth: as the
// thesis does, the pseudo-marginal and APM samplers are checked against each other. On a
// reduced data set (20 evenly spaced complete rows of the Wisconsin data, all 9 features,
// N = 50 as the thesis), PM-MH, APM MI+MH, APM SS+MH and APM SS+SS (the thesis's four) run 16
// chains each from the prior, and
// - R-hat across methods (rank-normalised split R-hat with each method's draws as one group)
//   is below 1.01 for every parameter: the methods' marginals agree to within what their
//   effective sample sizes allow. For agreeing groups R̂ ≈ 1 + 1/(2 ESS) plus chi-square noise,
//   so the threshold means something only with a few hundred effective draws per method: 3000
//   draws per chain give PM-MH, the stickiest, ESS ≥ 200 (at 1500, ESS ≈ 100 put one
//   parameter's R̂ at 1.0101 while every mean agreed within MCSE);
// - every method's mean of every parameter lies within 5 combined MCSE of APM SS+SS's, the
//   method with the largest ESS here.
// PM-MH's chains stick for hundreds of iterations (the thesis saw the same), so its own
// per-chain R-hat is not asked to pass.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/diag/rhat.hpp"
#include "myriad/models/breast_cancer_wisconsin.hpp"
#include "myriad/models/gp_probit.hpp"
#include "myriad/run/sample_auxiliary.hpp"
#include "posterior_check.hpp"

namespace myriad {
namespace {

TEST(StatGpProbit, PseudoMarginalAndApmSamplersAgreeOnAReducedDataSet) {
  const models::BreastCancerRows rows = models::breast_cancer_wisconsin(20);
  const auto data = models::GpProbitData<double>::from_arrays(
      rows.rows, models::BreastCancerRows::kFeatures, rows.features, rows.labels);
  const models::GpProbit<double> model = data.host_model(50);
  const AuxiliaryMethod methods[] = {AuxiliaryMethod::pm_mh, AuxiliaryMethod::apm_mi_mh,
                                     AuxiliaryMethod::apm_ss_mh, AuxiliaryMethod::apm_ss_ss};
  std::vector<SampleResult> results;
  for (AuxiliaryMethod method : methods) {
    AuxiliaryConfig config;
    static_cast<SampleConfig&>(config) = testing::run_config(16, 500, 3000, 2016);
    config.method = method;
    results.push_back(sample_auxiliary(model, config));
    EXPECT_EQ(results.back().sampling_stats.non_finite, 0) << to_string(method);
  }
  const SampleResult& reference = results.back();
  const auto q = static_cast<int>(reference.names.size());
  const std::int64_t per_method = reference.chains * reference.kept_draws;
  for (int p = 0; p < q; ++p) {
    std::vector<double> grouped;
    for (const SampleResult& r : results)
      for (std::int64_t k = 0; k < per_method; ++k) grouped.push_back(r.draws_data[k * q + p]);
    const diag::DrawsView view{grouped.data(), static_cast<std::int64_t>(results.size()),
                               per_method, per_method, 1};
    const double across = diag::rhat(view);
    EXPECT_LT(across, 1.01) << reference.names[p];
    const testing::MomentCheck ref = testing::mean_of(reference, p, [](double x) { return x; });
    for (std::size_t m = 0; m + 1 < results.size(); ++m) {
      const testing::MomentCheck own = testing::mean_of(results[m], p, [](double x) { return x; });
      EXPECT_LE(std::abs(own.estimate - ref.estimate), 5 * std::hypot(own.mcse, ref.mcse))
          << to_string(methods[m]) << " " << reference.names[p] << ": " << own.estimate << " ± "
          << own.mcse << " against apm-ss-ss " << ref.estimate << " ± " << ref.mcse;
    }
    std::printf("%-11s R-hat across methods %.4f; mean ± MCSE:", reference.names[p].c_str(),
                across);
    for (const SampleResult& r : results) {
      const testing::MomentCheck own = testing::mean_of(r, p, [](double x) { return x; });
      std::printf(" %.3f ± %.3f (ESS %.0f)", own.estimate, own.mcse, r.summary[p].ess_bulk);
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace myriad
