// Constrained HMC over SIMD lanes (core/lanes.hpp). Its pieces — the Cholesky factorisation, the
// ∞-norm, the dense constraint factor, the structured Gram factorisations — against the one-lane
// code on each lane's own data: this translation unit is compiled for the baseline instruction
// set, where neither side contracts a·b + c into an FMA, so every lane must equal its one-lane
// result bit for bit, except where a transcendental function (xsimd's against libm's) is
// involved. Then whole runs: the CPU backend with each lane kernel the library holds against one
// chain at a time, under the rounding rule of CPU against CUDA (tests/common/chmc_agreement.hpp):
// the momenta alone already differ by an ulp there (Box–Muller at the kernel's instruction set
// against the host's dispatched one), so runs are compared to rounding, not bit for bit.

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "common/chmc_agreement.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/detail/chmc_lane_blocks.hpp"
#include "myriad/detail/simd_lanes.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/structured_gram.hpp"
#include "myriad/mcmc/constraint_factor.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"

namespace myriad {
namespace {

using Batch = xsimd::batch<double>;
constexpr int W = static_cast<int>(Batch::size);

/// A random SPD matrix B Bᵀ + n I (n × n, row-major), B with N(0, 1) entries.
std::vector<double> spd(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<double> b(n * n), a(n * n, 0.0);
  for (double& x : b) x = normal(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) a[i * n + j] += b[i * n + k] * b[j * n + k];
      if (i == j) a[i * n + j] += n;
    }
  return a;
}

/// Lane l's matrices interleaved: entry (i, j) of every lane in one batch.
std::vector<Batch> interleave(const std::vector<std::vector<double>>& lanes, int size) {
  std::vector<Batch> out(size);
  alignas(64) double values[W];
  for (int e = 0; e < size; ++e) {
    for (int l = 0; l < W; ++l) values[l] = lanes[l][e];
    out[e] = Batch::load_aligned(values);
  }
  return out;
}

double lane_of(const Batch& b, int l) {
  alignas(64) double values[W];
  b.store_aligned(values);
  return values[l];
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(LinalgLanes, CholeskyEqualsTheOneLaneFactorOnEveryLaneAndFlagsFailedLanes) {
  std::mt19937_64 rng(7);
  for (int n : {1, 2, 5, 9, 16, 33}) {
    for (int failing = -1; failing < W; ++failing) {  // -1: no lane fails
      std::vector<std::vector<double>> lanes;
      for (int l = 0; l < W; ++l) {
        std::vector<double> a = spd(n, rng);
        // Lane `failing` gets an indefinite matrix (a negative pivot at column n/2), or a NaN.
        if (l == failing) {
          if (l % 2 == 0) {
            a[(n / 2) * n + n / 2] = -1.0;
          } else {
            a[(n - 1) * n + (n - 1)] = std::numeric_limits<double>::quiet_NaN();
          }
        }
        lanes.push_back(a);
      }
      std::vector<Batch> group = interleave(lanes, n * n);
      const auto failed = linalg::cholesky_in_place_lanes(dense_matrix(group.data(), n, n));
      for (int l = 0; l < W; ++l) {
        std::vector<double> one = lanes[l];
        const int info = linalg::cholesky_in_place_info(dense_matrix(one.data(), n, n));
        EXPECT_EQ(LaneOps<Batch>::flag(failed, l), info != 0)
            << "n " << n << ", lane " << l << ", failing lane " << failing;
        EXPECT_EQ(info != 0, l == failing) << "the test's own matrices";
        if (info != 0) continue;  // a failed factor is meaningless on either side
        for (int i = 0; i < n; ++i)
          for (int j = 0; j <= i; ++j)
            ASSERT_TRUE(same_bits(lane_of(group[i * n + j], l), one[i * n + j]))
                << "n " << n << ", lane " << l << ", L(" << i << ", " << j
                << ") = " << lane_of(group[i * n + j], l) << " against " << one[i * n + j];
      }
    }
  }
}

TEST(LinalgLanes, MaxAbsIsEachLanesNormWithItsNaNRule) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 10.0);
  const int n = 11;
  std::vector<std::vector<double>> lanes(W, std::vector<double>(n));
  for (auto& v : lanes)
    for (double& x : v) x = normal(rng);
  lanes[0][4] = std::numeric_limits<double>::quiet_NaN();  // a NaN anywhere: the norm is NaN
  lanes[W - 1][n - 1] = -1e300;
  const std::vector<Batch> group = interleave(lanes, n);
  const Batch norm = linalg::max_abs(group, n);
  for (int l = 0; l < W; ++l) {
    const double one = linalg::max_abs(lanes[l], n);
    EXPECT_TRUE(same_bits(lane_of(norm, l), one) ||
                (std::isnan(one) && std::isnan(lane_of(norm, l))))
        << "lane " << l << ": " << lane_of(norm, l) << " against " << one;
  }
  EXPECT_TRUE(std::isnan(lane_of(norm, 0)));
  EXPECT_EQ(lane_of(norm, W - 1), 1e300);
}

/// The dense constraint factor of `g` at W points, in lanes and one lane at a time: J, L, the
/// Gram solve, J v and Jᵀ w of every lane bit for bit, ½ log|G| to a few ulp (xsimd's log), and
/// the lanes whose Gram matrix is singular flagged.
template <class Generator>
void expect_dense_factor_lanes_agree(const Generator& g, const std::vector<std::vector<double>>& u,
                                     const std::vector<bool>& singular) {
  const int m = g.output_dim(), n = g.input_dim();
  const std::int64_t size = DenseConstraintFactor<double>::workspace_size(m, n, 0);
  std::vector<Batch> group_work(size), group_u = interleave(u, n);
  ChainWorkspace<Batch> group_ws{group_work.data(), 1};
  auto group = DenseConstraintFactor<Batch>::at(group_ws, 0, m, n, 0);
  const ChainVector<Batch> group_point{group_u.data(), 1, n};
  std::vector<Dual<Batch>> no_duals(1, Dual<Batch>(Batch(0.0)));
  const auto ok = group.evaluate(g, group_point, no_duals);
  // A right-hand side per lane for the solves and products.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> rhs(W, std::vector<double>(m)),
      tangent(W, std::vector<double>(n));
  for (int l = 0; l < W; ++l) {
    for (double& x : rhs[l]) x = normal(rng);
    for (double& x : tangent[l]) x = normal(rng);
  }
  std::vector<Batch> group_rhs = interleave(rhs, m), group_tangent = interleave(tangent, n);
  std::vector<Batch> group_jv(m), group_jtw(n);
  ChainVector<Batch> rhs_view{group_rhs.data(), 1, m}, jv{group_jv.data(), 1, m},
      jtw{group_jtw.data(), 1, n};
  const ChainVector<Batch> tangent_view{group_tangent.data(), 1, n};
  group.apply(tangent_view, jv);
  group.apply_transpose(rhs_view, jtw);
  const Batch half_log_det = group.half_log_det();
  group.gram_solve(rhs_view);
  for (int l = 0; l < W; ++l) {
    std::vector<double> work(size), point = u[l];
    ChainWorkspace<double> ws{work.data(), 1};
    auto one = DenseConstraintFactor<double>::at(ws, 0, m, n, 0);
    std::vector<Dual<double>> duals(1, Dual<double>(0.0));
    const bool one_ok = one.evaluate(g, ChainVector<double>{point.data(), 1, n}, duals);
    EXPECT_EQ(LaneOps<Batch>::flag(ok, l), one_ok) << "lane " << l;
    EXPECT_EQ(one_ok, !singular[l]) << "the test's own points";
    for (int e = 0; e < m * n; ++e)
      ASSERT_TRUE(same_bits(lane_of(group.jacobian.data[e], l), one.jacobian.data[e])) << "J";
    if (!one_ok) continue;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j <= i; ++j)
        ASSERT_TRUE(same_bits(lane_of(group.chol(i, j), l), one.chol(i, j))) << "L";
    std::vector<double> v = rhs[l], out_jv(m), out_jtw(n), t = tangent[l];
    ChainVector<double> v_view{v.data(), 1, m}, jv_one{out_jv.data(), 1, m},
        jtw_one{out_jtw.data(), 1, n};
    one.apply(ChainVector<double>{t.data(), 1, n}, jv_one);
    one.apply_transpose(v_view, jtw_one);
    const double one_half_log_det = one.half_log_det();
    one.gram_solve(v_view);
    for (int i = 0; i < m; ++i) {
      ASSERT_TRUE(same_bits(lane_of(group_rhs[i], l), v[i])) << "G⁻¹ w, lane " << l;
      ASSERT_TRUE(same_bits(lane_of(group_jv[i], l), out_jv[i])) << "J v, lane " << l;
    }
    for (int i = 0; i < n; ++i) ASSERT_TRUE(same_bits(lane_of(group_jtw[i], l), out_jtw[i]));
    // Each log within 1 ulp on either side, summed over M terms: M · 4u relative to Σ |log L_ii|.
    double scale = 0.0;
    for (int i = 0; i < m; ++i) scale += std::abs(std::log(one.chol(i, i)));
    EXPECT_NEAR(lane_of(half_log_det, l), one_half_log_det, 4.0 * m * 0x1p-53 * (scale + 1.0))
        << "lane " << l;
  }
}

std::vector<std::vector<double>> random_points(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> u(W, std::vector<double>(n));
  for (auto& point : u)
    for (double& x : point) x = normal(rng);
  return u;
}

TEST(ChmcLanes, DenseConstraintFactorOfTheSphereEqualsTheOneLaneFactors) {
  // J = 2uᵀ differs per lane; at u = 0 the Gram matrix 4|u|² is 0 and the lane fails alone.
  const auto g = models::Sphere::make(6, 1.5);
  std::vector<std::vector<double>> u = random_points(6, 11);
  std::vector<bool> singular(W, false);
  u[W - 1].assign(6, 0.0);
  singular[W - 1] = true;
  expect_dense_factor_lanes_agree(g, u, singular);
}

TEST(ChmcLanes, DenseConstraintFactorOfALinearGaussianEqualsTheOneLaneFactors) {
  const auto problem = models::LinearGaussianProblem::make(3, 7, 4);
  expect_dense_factor_lanes_agree(problem.host_model(), random_points(7, 12),
                                  std::vector<bool>(W, false));
}

/// A structured Gram matrix (J = [B T], T diagonal or lower triangular) of W random Jacobians,
/// in lanes and one lane at a time: the factorisation's success per lane, G⁻¹ v bit for bit and
/// log|G| to ulps; lane `failing` gets a non-positive T_ii and must fail alone.
template <template <class> class Gram, bool kTriangular>
void expect_structured_gram_lanes_agree(int m, int k, int failing) {
  const int n = k + m;
  std::mt19937_64 rng(17 + m + k);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> positive(0.5, 2.0);
  std::vector<std::vector<double>> jacobians(W, std::vector<double>(m * n, 0.0)),
      rhs(W, std::vector<double>(m));
  for (int l = 0; l < W; ++l) {
    for (int i = 0; i < m; ++i) {
      for (int a = 0; a < k; ++a) jacobians[l][i * n + a] = normal(rng);
      for (int j = 0; j < (kTriangular ? i : 0); ++j)
        jacobians[l][i * n + k + j] = 0.3 * normal(rng);
      jacobians[l][i * n + k + i] = positive(rng);
      rhs[l][i] = normal(rng);
    }
    if (l == failing) jacobians[l][(m / 2) * n + k + m / 2] = -1.0;
  }
  const std::int64_t size = Gram<double>::workspace_size(m, k);
  std::vector<Batch> group_j = interleave(jacobians, m * n), group_work(size),
                     group_rhs = interleave(rhs, m);
  const auto group = Gram<Batch>::from_jacobian(MatrixView<const Batch>{group_j.data(), m, n, n, 1},
                                                k, ChainWorkspace<Batch>{group_work.data(), 1}, 0);
  const auto ok = group.factor();
  const Batch log_det = group.log_det();
  group.solve(ChainVector<Batch>{group_rhs.data(), 1, m});
  for (int l = 0; l < W; ++l) {
    std::vector<double> work(size), v = rhs[l];
    const auto one =
        Gram<double>::from_jacobian(MatrixView<const double>{jacobians[l].data(), m, n, n, 1}, k,
                                    ChainWorkspace<double>{work.data(), 1}, 0);
    const bool one_ok = one.factor();
    EXPECT_EQ(LaneOps<Batch>::flag(ok, l), one_ok) << "lane " << l;
    EXPECT_EQ(one_ok, l != failing) << "the test's own Jacobians";
    if (!one_ok) continue;
    one.solve(ChainVector<double>{v.data(), 1, m});
    for (int i = 0; i < m; ++i)
      ASSERT_TRUE(same_bits(lane_of(group_rhs[i], l), v[i]))
          << "G⁻¹ v, lane " << l << ", row " << i << ": " << lane_of(group_rhs[i], l) << " against "
          << v[i];
    // M + K logs, each within 1 ulp on either side.
    EXPECT_NEAR(lane_of(log_det, l), one.log_det(),
                4.0 * (m + k) * 0x1p-53 * (std::abs(one.log_det()) + 2.0 * (m + k)))
        << "lane " << l;
  }
}

TEST(ChmcLanes, DiagonalPlusLowRankGramEqualsTheOneLaneFactorisation) {
  for (int failing : {-1, 0, W - 1})
    expect_structured_gram_lanes_agree<linalg::DiagonalPlusLowRankGram, false>(25, 4, failing);
}

TEST(ChmcLanes, TriangularPlusLowRankGramEqualsTheOneLaneFactorisation) {
  for (int failing : {-1, 0, W - 1})
    expect_structured_gram_lanes_agree<linalg::TriangularPlusLowRankGram, true>(20, 4, failing);
}

/// The CPU backend with each lane kernel the library holds for `g` against one chain at a time,
/// from one seed, under the rounding tolerances of CPU against CUDA (tests/common/
/// chmc_agreement.hpp): the AVX2 and AVX-512 kernels contract a·b + c into FMAs and use xsimd's
/// exp and log, which perturbs the arithmetic as nvcc does. `chains` is not a multiple of the
/// widths, so that the last group runs with idle lanes.
template <class Generator>
void expect_backend_lanes_agree(const Generator& g, std::int64_t chains, double step_size,
                                int iterations, const std::string& name) {
  const ChmcSettings<double> settings = testing::test_settings(step_size);
  CpuChmcBackend<Generator, double> scalar(g, chains, false);
  ASSERT_EQ(scalar.lane_width(), 1);
  const testing::ChmcRecording reference = testing::record_chmc(scalar, settings, iterations, 1);
  const auto kernels = library_lane_kernels<ChmcLaneFamily, Generator, double>();
  ASSERT_FALSE(kernels.empty());
  for (const auto& kernel : kernels) {
    CpuChmcBackend<Generator, double> lanes(g, chains);
    lanes.set_lane_kernel(kernel);
    const testing::ChmcRecording candidate = testing::record_chmc(lanes, settings, iterations, 1);
    testing::expect_recordings_agree(
        reference, candidate, settings,
        name + " in " + kernel.isa + " lanes against one chain at a time");
  }
}

TEST(ChmcLanes, BuiltInGeneratorsRunInLanesByDefault) {
  const auto sphere = models::Sphere::make(5, 1.0);
  CpuChmcBackend<models::Sphere, double> backend(sphere, 64);
  const auto kernels = library_lane_kernels<ChmcLaneFamily, models::Sphere, double>();
  EXPECT_EQ(backend.lane_width(), kernels.front().width);
  EXPECT_GT(backend.lane_width(), 1);
  EXPECT_NE(backend.device_name().find("lanes of"), std::string::npos) << backend.device_name();
  CpuChmcBackend<models::Sphere, double> scalar(sphere, 64, false);
  EXPECT_EQ(scalar.device_name().find("lanes"), std::string::npos) << scalar.device_name();
}

TEST(ChmcLanes, SphereBackendAgreesWithOneChainAtATime) {
  expect_backend_lanes_agree(models::Sphere::make(5, 1.0), 301, 1.0, 5, "sphere");
}

TEST(ChmcLanes, LinearGaussianBackendAgreesWithOneChainAtATime) {
  const auto problem = models::LinearGaussianProblem::make(4, 12, 3);
  expect_backend_lanes_agree(problem.host_model(), 203, 1.2, 5, "linear_gaussian");
}

TEST(ChmcLanes, LotkaVolterraBackendAgreesWithOneChainAtATime) {
  // Triangular + low-rank Gram, the generator's own add_jacobian_vjp, exp in z = exp(u₁ − 2):
  // at δt = 0.2 most transitions are accepted and the rest spread over every failure counter.
  const auto problem = testing::small_lotka_volterra();
  expect_backend_lanes_agree(problem.host_model(), 101, 0.2, 5, "lotka_volterra");
}

TEST(ChmcLanes, LotkaVolterraSummariesBackendAgreesWithOneChainAtATime) {
  // Dense 9 × 9 Gram, the summaries' add_jacobian_vjp (Hessian–vector products on duals of
  // batches), the short series (S = 10, N = 24).
  const auto problem = testing::small_lotka_volterra();
  expect_backend_lanes_agree(problem.host_summaries_model(), 45, 0.3, 4,
                             "lotka_volterra_summaries");
}

TEST(ChmcLanes, GldBackendAgreesWithOneChainAtATime) {
  // Diagonal + rank-4 Gram, the log-determinant gradient on duals of batches, and the power
  // term's switch between its series and expm1(λa)/λ made per lane (both forms, selected).
  // Ten observations: with forty, chains started from prior draws of the shapes meet noise
  // slopes d_m near 1e-5, where the capacitance S = I + Σ (b_m/d_m)(b_m/d_m)ᵀ reaches 1e10 and
  // log|G| amplifies an ulp of J (xsimd's exp and log against libm's) to ~1e-5 — measured with
  // the one-chain code alone: ½ log|G| at one such point spread over 5.6e-5 when u moved by an
  // ulp in some coordinates — so the rounding rule of chmc_agreement.hpp, which assumes energies
  // that agree to ≪ 1e-8, does not hold there for any two implementations (CPU against CUDA
  // included).
  const auto problem = models::GldProblem::make(11, 10);
  expect_backend_lanes_agree(problem.host_model(), 37, 0.6, 4, "gld");
}

TEST(ChmcLanes, NoisyGeneratorsAgreeWithOneChainAtATime) {
  // g(u) + ε n around a generator that runs in lanes runs in lanes too (the CLI's noise=ε).
  const auto sphere = models::Noisy<models::Sphere>::make(models::Sphere::make(4, 1.0), 0.3);
  expect_backend_lanes_agree(sphere, 77, 0.8, 5, "noisy sphere");
  const auto problem = testing::small_lotka_volterra();
  const auto lotka_volterra = models::Noisy<models::LotkaVolterra>::make(problem.host_model(), 0.5);
  expect_backend_lanes_agree(lotka_volterra, 45, 0.2, 4, "noisy lotka_volterra");
}

TEST(ChmcLanes, ThreadCountChangesNothing) {
  const auto sphere = models::Sphere::make(6, 1.3);
  const ChmcSettings<double> settings = testing::test_settings(1.0);
  std::vector<testing::ChmcRecording> runs;
  const int threads = omp_get_max_threads();
  for (int n : {1, 2}) {
    omp_set_num_threads(n);
    CpuChmcBackend<models::Sphere, double> lanes(sphere, 99);
    runs.push_back(testing::record_chmc(lanes, settings, 4, 1));
  }
  omp_set_num_threads(threads);
  EXPECT_EQ(runs[0].positions, runs[1].positions);
  EXPECT_EQ(runs[0].halvings, runs[1].halvings);
  EXPECT_EQ(runs[0].draws, runs[1].draws);
  for (std::size_t i = 0; i < runs[0].stats.size(); ++i) {
    EXPECT_EQ(runs[0].stats[i].accepted, runs[1].stats[i].accepted);
    EXPECT_EQ(runs[0].stats[i].newton_iterations, runs[1].stats[i].newton_iterations);
  }
}

}  // namespace
}  // namespace myriad
