#pragma once
// posteriordb references for the statistical tests (tests/data/posteriordb/, BSD 3-Clause, from
// stan-dev/posteriordb): a posterior's reference.csv, the summary of 10 000 draws of Stan's NUTS
// (variable, mean, sd, mcse_mean, q5, q50, q95, ess_bulk), and the agreement check its README
// states: |mean − mean_ref| ≤ z · sqrt(mcse² + mcse_ref²). The files' paths and data.json are
// read as the ports' unit tests read them (common/posteriordb_port_checks.hpp).

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/posteriordb_port_checks.hpp"
#include "myriad/run/sample_config.hpp"
#include "posterior_check.hpp"

namespace myriad::testing {

/// The posterior's reference.csv, by variable name (common/posteriordb_port_checks.hpp reads it).
inline std::map<std::string, ReferenceSummary> posteriordb_reference(const std::string& posterior) {
  std::map<std::string, ReferenceSummary> rows;
  for (const ReferenceSummary& row : posteriordb_reference_rows(posterior)) rows[row.name] = row;
  return rows;
}

/// Every reference variable's mean agrees with the run's within z combined standard errors, and
/// its sd within z standard errors of the sd (each side's sd · √(1/(2 ESS))-like error from the
/// run's ESS of the squared deviations: mean_of on (x − mean_ref)²).
inline void expect_agrees_with_reference(const SampleResult& result,
                                         const std::map<std::string, ReferenceSummary>& reference,
                                         double z = 5.0) {
  for (const auto& [name, ref] : reference) {
    const int q = quantity_index(result, name);
    const MomentCheck mean = mean_of(result, q, [](double x) { return x; });
    const double se = std::sqrt(mean.mcse * mean.mcse + ref.mcse_mean * ref.mcse_mean);
    EXPECT_LE(std::abs(mean.estimate - ref.mean), z * se)
        << name << ": mean " << mean.estimate << ", reference " << ref.mean << " (se " << se << ")";
    const MomentCheck variance =
        mean_of(result, q, [&](double x) { return (x - ref.mean) * (x - ref.mean); });
    // The reference's own error of its variance, from its ESS (ess = (sd / mcse)²) and the normal
    // approximation Var(s²) ≈ 2σ⁴/ESS.
    const double ref_ess = (ref.sd / ref.mcse_mean) * (ref.sd / ref.mcse_mean);
    const double ref_variance_se = ref.sd * ref.sd * std::sqrt(2.0 / ref_ess);
    const double variance_se =
        std::sqrt(variance.mcse * variance.mcse + ref_variance_se * ref_variance_se);
    EXPECT_LE(std::abs(variance.estimate - ref.sd * ref.sd), z * variance_se)
        << name << ": variance " << variance.estimate << ", reference " << ref.sd * ref.sd
        << " (se " << variance_se << ")";
  }
}

}  // namespace myriad::testing
