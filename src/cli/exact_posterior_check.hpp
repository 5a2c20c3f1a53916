#pragma once
// run.json's exact_posterior_check: a weighted posterior summary (AIS, MP IS) against the exact
// posterior a model knows (model/exact_moment.hpp).

#include <string>
#include <vector>

#include "json.hpp"
#include "myriad/estimate/log_z.hpp"
#include "myriad/model/exact_moment.hpp"

namespace myriad::cli {

/// The largest error of a posterior mean, in absolute terms and in units of its Monte Carlo
/// standard error, and the largest absolute error of a posterior sd, over the quantities named
/// in both `exact` and `names` (summary[i] summarises names[i]); null when none is.
Json exact_posterior_check(const std::vector<ExactMoment>& exact,
                           const std::vector<std::string>& names,
                           const std::vector<WeightedMoments>& summary);

}  // namespace myriad::cli
