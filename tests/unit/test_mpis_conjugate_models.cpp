// The conjugate plated models (include/myriad/models/hierarchical_gaussian.hpp,
// gaussian_chain.hpp) side by side: the densities and proposals the engine sees, and argument
// validation. Their exact answers against dense conditioning are in
// tests/unit/models/test_<model>.cpp.

#include <gtest/gtest.h>

#include <cmath>

#include "myriad/core/error.hpp"
#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"

namespace myriad {
namespace {

TEST(MpisConjugateModels, DensitiesAreTheStatedGaussians) {
  const auto hg = models::HierarchicalGaussianData::synthetic(3, 2, 1.5, 0.5, 0.8, true, 1);
  const models::HierarchicalGaussian m = hg.host_model();
  const double mu = 0.3, z = -0.4;
  ParentValues parents;
  parents.count = 1;
  parents.value[0] = &mu;
  PlateIndex at;
  at.depth = 2;
  at.index[0] = 2;
  at.index[1] = 1;
  EXPECT_NEAR(m.log_prior(m.kZ, &z, parents, at), normal_log_density(z, mu, 0.5), 1e-15);
  EXPECT_NEAR(m.log_proposal(m.kZ, &z, parents, at), normal_log_density(z, mu, 0.5), 1e-15);
  parents.value[0] = &z;
  EXPECT_NEAR(m.log_likelihood(0, parents, at), normal_log_density(hg.x()[5], z, 0.8), 1e-15);
  const auto independent =
      models::HierarchicalGaussianData::synthetic(3, 2, 1.5, 0.5, 0.8, false, 1);
  EXPECT_NEAR(independent.host_model().log_proposal(m.kZ, &z, parents, at),
              normal_log_density(z, 0.0, std::sqrt(1.5 * 1.5 + 0.5 * 0.5)), 1e-15);

  const auto chain = models::GaussianChainData::synthetic(5, 0.9, 0.5, 0.3, 2.0, true, 1);
  const models::GaussianChain c = chain.host_model();
  ParentValues previous;
  previous.count = 1;
  at.depth = 1;
  at.index[0] = 0;
  EXPECT_NEAR(c.log_prior(0, &z, previous, at), normal_log_density(z, 0.0, 2.0), 1e-15);
  previous.value[0] = &mu;
  at.index[0] = 3;
  EXPECT_NEAR(c.log_prior(0, &z, previous, at), normal_log_density(z, 0.9 * mu, 0.5), 1e-15);
  EXPECT_NEAR(c.log_proposal(0, &z, previous, at), normal_log_density(z, 0.9 * mu, 0.5), 1e-15);
  previous.value[0] = &z;
  EXPECT_NEAR(c.log_likelihood(0, previous, at), normal_log_density(chain.x()[3], z, 0.3), 1e-15);
}

TEST(MpisConjugateModels, RejectBadArguments) {
  EXPECT_THROW(models::HierarchicalGaussianData::synthetic(0, 2, 1, 1, 1, false, 1),
               invalid_argument);
  EXPECT_THROW(models::HierarchicalGaussianData::synthetic(2, 2, 1, -1, 1, false, 1),
               invalid_argument);
  EXPECT_THROW(models::GaussianChainData::synthetic(0, 0.9, 1, 1, 1, true, 1), invalid_argument);
  EXPECT_THROW(models::GaussianChainData::synthetic(3, 0.9, 1, 0, 1, true, 1), invalid_argument);
}

}  // namespace
}  // namespace myriad
