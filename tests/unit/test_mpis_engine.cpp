// The MP IS engine on the CPU policy against brute-force enumeration of all K^n index tuples
// (mpis.md §2.2, §5, §6): log P_MP, marginal weights, joint marginals with parents and the
// distribution of posterior index draws, on plates, nested plates, timeseries chains,
// parent-mixture proposals, a v-structure and vector events.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/mpis_test_models.hpp"
#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/estimate/mpis_engine.hpp"

namespace myriad {
namespace {

using testing::BruteForce;
using testing::TestPlatedModel;
using testing::TestStructure;

struct Case {
  const char* name;
  TestStructure structure;
  std::int64_t k;
};

std::vector<Case> cases() {
  return {{"two_level", TestStructure::two_level, 3},
          {"two_level_mixture", TestStructure::two_level_mixture, 3},
          {"v_structure", TestStructure::v_structure, 3},
          {"timeseries", TestStructure::timeseries, 3},
          {"plate_of_series", TestStructure::plate_of_series, 2},
          {"vector_event", TestStructure::vector_event, 3}};
}

using Engine = MpisEngine<TestPlatedModel, CpuParallel>;

Engine make_engine(const Case& c, int runs, std::uint64_t seed) {
  TestPlatedModel model;
  model.kind = c.structure;
  PlatedStructure s = model.structure();
  MpisPlan plan = plan_mpis(s, c.k, runs);
  return Engine(model, s, plan, CpuParallel{}, seed);
}

std::vector<std::vector<double>> all_particles(const Engine& engine) {
  std::vector<std::vector<double>> out;
  for (int g = 0; g < engine.structure().latent_count(); ++g) out.push_back(engine.particles(g));
  return out;
}

TEST(MpisEngine, LogMarginalMatchesBruteForce) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Engine engine = make_engine(c, 3, 17);
    engine.forward();
    EXPECT_EQ(engine.nonfinite_entries(), 0);
    const std::vector<double> log_p = engine.log_marginal();
    const auto particles = all_particles(engine);
    for (int run = 0; run < 3; ++run) {
      TestPlatedModel model;
      model.kind = c.structure;
      const BruteForce brute(model, engine.structure(), c.k, particles, run);
      EXPECT_NEAR(log_p[run], brute.log_p(), 1e-10 * std::max(1.0, std::abs(brute.log_p())))
          << "run " << run;
    }
  }
}

TEST(MpisEngine, MarginalWeightsAndJointMarginalsMatchBruteForce) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Engine engine = make_engine(c, 2, 5);
    engine.forward();
    engine.backward();
    const auto particles = all_particles(engine);
    const PlatedStructure& s = engine.structure();
    const MpisPlan& plan = engine.plan();
    for (int run = 0; run < 2; ++run) {
      TestPlatedModel model;
      model.kind = c.structure;
      const BruteForce brute(model, s, c.k, particles, run);
      const std::vector<double> p = brute.probabilities();
      std::vector<std::int64_t> tuple(brute.variables());
      for (int g = 0; g < s.latent_count(); ++g) {
        const std::int64_t instances = s.instances(s.latent_decl(g).plate);
        // Marginal weights w_g[run][instance][k].
        const std::vector<double> log_w = engine.log_marginal_weights(g);
        std::vector<double> expected(static_cast<std::size_t>(instances * c.k), 0.0);
        for (std::int64_t t = 0; t < brute.tuples(); ++t) {
          brute.decode(t, tuple);
          for (std::int64_t i = 0; i < instances; ++i)
            expected[static_cast<std::size_t>(i * c.k + tuple[brute.variable(g, i)])] += p[t];
        }
        for (std::int64_t i = 0; i < instances * c.k; ++i)
          EXPECT_NEAR(std::exp(log_w[static_cast<std::size_t>(run * instances * c.k + i)]),
                      expected[static_cast<std::size_t>(i)], 1e-11)
              << s.latent_decl(g).name << " entry " << i << " run " << run;

        // Joint marginal of ℓ_g's scope: P_z(k_g, parents' k, lag) per instance.
        const MpisTensor& scope = plan.tensors[plan.latent_factor[g]];
        const std::vector<double> log_joint = engine.log_joint_marginal(g);
        std::vector<double> joint(static_cast<std::size_t>(scope.size()), 0.0);
        for (std::int64_t t = 0; t < brute.tuples(); ++t) {
          brute.decode(t, tuple);
          for (std::int64_t i = 0; i < instances; ++i) {
            // The tensor element of (run, instance i, the tuple's indices).
            std::int64_t offset = 0;
            std::int64_t plate_rest = i;
            std::vector<std::int64_t> coord(scope.vars.size());
            const std::vector<int> path = s.path(s.latent_decl(g).plate);
            for (std::size_t a = scope.vars.size(); a-- > 0;) {
              const int v = scope.vars[a];
              if (v == MpisPlan::kRunVar) {
                coord[a] = run;
              } else if (!plan.is_k_var(v)) {
                coord[a] = plate_rest % scope.extents[a];
                plate_rest /= scope.extents[a];
              } else if (v == plan.latent_var[g]) {
                coord[a] = tuple[brute.variable(g, i)];
              } else if (v == plan.lag_var[g]) {
                const std::int64_t steps = s.plate_decl(s.latent_decl(g).plate).size;
                coord[a] = i % steps == 0 ? -1 : tuple[brute.variable(g, i - 1)];
              } else {
                const int parent = plan.var_latent[v];
                const std::int64_t divisor = instances / s.instances(s.latent_decl(parent).plate);
                coord[a] = tuple[brute.variable(parent, i / divisor)];
              }
            }
            if (std::count(coord.begin(), coord.end(), -1) > 0) {
              // t = 0: the lag index is uniform and independent of everything else.
              for (std::int64_t lag = 0; lag < c.k; ++lag) {
                offset = 0;
                for (std::size_t a = 0; a < coord.size(); ++a)
                  offset = offset * scope.extents[a] + (coord[a] < 0 ? lag : coord[a]);
                joint[static_cast<std::size_t>(offset)] += p[t] / static_cast<double>(c.k);
              }
              continue;
            }
            for (std::size_t a = 0; a < coord.size(); ++a)
              offset = offset * scope.extents[a] + coord[a];
            joint[static_cast<std::size_t>(offset)] += p[t];
          }
        }
        const std::int64_t per_run = scope.size() / 2;
        for (std::int64_t e = run * per_run; e < (run + 1) * per_run; ++e)
          EXPECT_NEAR(std::exp(log_joint[static_cast<std::size_t>(e)]),
                      joint[static_cast<std::size_t>(e)], 1e-11)
              << s.latent_decl(g).name << " joint element " << e;
      }
    }
  }
}

/// Pearson's chi-square statistic of `draws` index tuples against P_z, and its degrees of
/// freedom (cells with probability > 0, minus one).
double chi_square(const std::vector<std::int64_t>& counts, const std::vector<double>& p,
                  std::int64_t draws, int& dof) {
  double x2 = 0;
  dof = -1;
  for (std::size_t c = 0; c < p.size(); ++c) {
    const double expected = p[c] * static_cast<double>(draws);
    if (expected <= 0) {
      EXPECT_EQ(counts[c], 0) << "a zero-probability tuple was drawn";
      continue;
    }
    ++dof;
    x2 += (counts[c] - expected) * (counts[c] - expected) / expected;
  }
  return x2;
}

/// Upper 1e-6 quantile of chi-square with `dof` degrees of freedom (Wilson–Hilferty).
double chi_square_critical(int dof) {
  const double z = 4.753424;  // Φ⁻¹(1 − 1e-6)
  const double a = 2.0 / (9.0 * dof);
  return dof * std::pow(1.0 - a + z * std::sqrt(a), 3);
}

TEST(MpisEngine, IndexDrawsFollowTheExactPosteriorOverTuples) {
  // Reverse-elimination sampling is exact (mpis.md §6), also where the paper's per-parent
  // factorisation (Eq. 38) is not, as in the v-structure: the full tuple distribution of the
  // draws must pass a chi-square test against P_z at level 1e-6.
  const std::int64_t draws = 60000;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Engine engine = make_engine(c, 2, 23);
    engine.forward();
    engine.sample_indices(draws);
    const auto particles = all_particles(engine);
    const PlatedStructure& s = engine.structure();
    std::vector<std::vector<std::int32_t>> sampled;
    for (int g = 0; g < s.latent_count(); ++g) sampled.push_back(engine.sampled_indices(g));
    for (int run = 0; run < 2; ++run) {
      TestPlatedModel model;
      model.kind = c.structure;
      const BruteForce brute(model, s, c.k, particles, run);
      std::vector<std::int64_t> counts(static_cast<std::size_t>(brute.tuples()), 0);
      for (std::int64_t n = 0; n < draws; ++n) {
        std::int64_t code = 0;
        for (int g = 0; g < s.latent_count(); ++g) {
          const std::int64_t instances = s.instances(s.latent_decl(g).plate);
          for (std::int64_t i = 0; i < instances; ++i) {
            const std::int32_t k =
                sampled[g][static_cast<std::size_t>((n * 2 + run) * instances + i)];
            ASSERT_GE(k, 0);
            ASSERT_LT(k, c.k);
            code = code * c.k + k;
          }
        }
        ++counts[static_cast<std::size_t>(code)];
      }
      int dof = 0;
      const double x2 = chi_square(counts, brute.probabilities(), draws, dof);
      EXPECT_LT(x2, chi_square_critical(dof)) << "run " << run << ", " << dof << " dof";
    }
  }
}

TEST(MpisEngine, RunsAreIndependentOfTheirBatch) {
  // Run r uses Philox stream (seed, first_run + r): a run computed alone equals the same run
  // computed inside a batch.
  const Case c = cases()[3];
  Engine batch = make_engine(c, 4, 99);
  batch.forward();
  const std::vector<double> all = batch.log_marginal();
  TestPlatedModel model;
  model.kind = c.structure;
  PlatedStructure s = model.structure();
  Engine single(model, s, plan_mpis(s, c.k, 1), CpuParallel{}, 99, /*first_run=*/2);
  single.forward();
  EXPECT_EQ(single.log_marginal()[0], all[2]);
}

TEST(MpisEngine, OneParticleIsGlobalImportanceSampling) {
  // With K = 1 the MP IS estimator is the global one (mpis.md §8), on the same particles.
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    TestPlatedModel model;
    model.kind = c.structure;
    PlatedStructure s = model.structure();
    Engine mp(model, s, plan_mpis(s, 1, 3), CpuParallel{}, 7);
    mp.forward();
    Engine global(model, s, plan_mpis(s, 1, 3), CpuParallel{}, 7);
    const std::vector<double> log_r = global.global_log_weights(0, 1);
    const std::vector<double> log_p = mp.log_marginal();
    for (int run = 0; run < 3; ++run)
      EXPECT_NEAR(log_p[run], log_r[run], 1e-10 * std::max(1.0, std::abs(log_r[run])));
  }
}

}  // namespace
}  // namespace myriad

namespace myriad {
namespace {

/// A chunked plate's subtree computed window by window equals the whole computation (mpis.md
/// §3.3: the plate's product over elements is a sum of logs): log P̂ and marginal weights to
/// rounding, draws exactly (uniforms keyed by global element numbers), for chunks that divide
/// the plate and chunks that leave a remainder.
void expect_chunking_changes_nothing(const TestPlatedModel& model, int plate, std::int64_t k) {
  const PlatedStructure s = model.structure();
  const MpisPlan plan = plan_mpis(s, k, 3);
  Engine whole(model, s, plan, CpuParallel{}, 31);
  whole.forward();
  whole.backward();
  whole.sample_indices(200);
  for (std::int64_t chunk = 1; chunk < s.plate_decl(plate).size; ++chunk) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    MpisEngineOptions options;
    options.seed = 31;
    options.chunking = MpisChunking{plate, chunk};
    Engine chunked(model, s, plan, CpuParallel{}, options);
    chunked.forward();
    chunked.backward();
    chunked.sample_indices(200);
    const auto a = whole.log_marginal(), b = chunked.log_marginal();
    for (std::size_t r = 0; r < a.size(); ++r) EXPECT_NEAR(b[r], a[r], 1e-12 * std::abs(a[r]));
    for (int g = 0; g < s.latent_count(); ++g) {
      const auto wa = whole.log_marginal_weights(g), wb = chunked.log_marginal_weights(g);
      ASSERT_EQ(wa.size(), wb.size());
      for (std::size_t i = 0; i < wa.size(); ++i)
        EXPECT_NEAR(std::exp(wb[i]), std::exp(wa[i]), 1e-12) << s.latent_decl(g).name << " " << i;
      EXPECT_EQ(chunked.sampled_indices(g), whole.sampled_indices(g)) << s.latent_decl(g).name;
    }
    EXPECT_EQ(chunked.nonfinite_entries(), whole.nonfinite_entries());
  }
}

TEST(MpisEngine, ChunkingAPlateChangesNothing) {
  TestPlatedModel model;
  for (TestStructure structure :
       {TestStructure::two_level, TestStructure::two_level_mixture, TestStructure::v_structure,
        TestStructure::plate_of_series, TestStructure::vector_event}) {
    model.kind = structure;
    SCOPED_TRACE(static_cast<int>(structure));
    expect_chunking_changes_nothing(model, /*plate=*/0, 4);
  }
}

TEST(MpisEngine, ChunkingRejectsPlatesItCannotSplit) {
  TestPlatedModel model;
  model.kind = TestStructure::two_level;
  const PlatedStructure s = model.structure();
  MpisEngineOptions options;
  options.chunking = MpisChunking{1, 1};  // "b" is nested in "a"
  EXPECT_THROW(Engine(model, s, plan_mpis(s, 2, 1), CpuParallel{}, options), invalid_argument);
  model.kind = TestStructure::timeseries;
  const PlatedStructure t = model.structure();
  options.chunking = MpisChunking{0, 2};  // a timeseries
  EXPECT_THROW(Engine(model, t, plan_mpis(t, 2, 1), CpuParallel{}, options), invalid_argument);
  Engine chunked(model, s, plan_mpis(s, 2, 1), CpuParallel{}, MpisEngineOptions{1, 0, {0, 1}, {}});
  chunked.forward();
  chunked.backward();
  EXPECT_THROW(chunked.log_joint_marginal(1), invalid_argument);  // z's scope is not kept
}

}  // namespace
}  // namespace myriad
