// The log-semiring GEMM (estimate/log_semiring_gemm.hpp, mpis.md §3.4) on the host: the shape
// analysis of log-sum-product steps built by plan_log_sum_product from LogTensor views as the
// MP IS engine builds them, and the CPU twins of the CUDA paths — the tiled kernel's block
// (every tile, every thread, every tiling) and the max-shift (cuBLAS) algorithm with plain
// loops — against the generic element, LogSumProductStep's own per-element value.
//
// Tolerance (u = 2^-53, the unit roundoff). For one output with terms x_e = Σ_j T_j[e] the
// paths differ from the generic element only by rounding:
//  - each term's sum: the generic element rounds (c + A) + B, the GEMM paths A + B and add c
//    once at the end, each within 2u (|c| + |A| + |B|) of the exact sum; LSE is 1-Lipschitz
//    in the max norm, so the results move by at most 2u·scale, scale = Σ_j max |T_j| over
//    finite entries (the max-shift path's A − m_A and B − m_B, exact to u·2·scale, likewise);
//  - the shifted sum of K terms in (0, 1] whose largest is 1: recursive summation (any order,
//    including cuBLAS's) and the exp of each term (≤ 1 ulp in glibc) give a relative error of
//    at most (K + 1)u, plus one rounding per rescale of the tiled path (≤ K of them) and the
//    product of two exps in the max-shift path: ≤ (2K + 3)u relative, the same absolute in
//    the log;
//  - the final max + log(sum) + constants: ≤ 3u (scale + log K).
// Hence |Δ| ≤ u (8·scale + 4K + 16), a bound with slack of about 2 on every term. With the
// whole reduction in one chunk and no constant inputs, the tiled path's arithmetic is the
// generic element's term for term, and the test demands bitwise equality.
//
// The CPU policy's SIMD lanes (detail/log_sum_product_lane_kernel.hpp) run the generic element
// for a lane group of outputs: the same terms, sums and max, bit for bit; only the exponential is
// another's (xsimd's, ≤ 1 ulp like glibc's). The two shifted sums then differ by at most
// (2 + 2 + 2(K − 1))u relative (each term's exp on either side, and either side's recursive
// summation), and the results by that plus one rounding of max + log(sum) on each side:
// |Δ| ≤ u (2K + 4 + 2|U|).
//
// The split reduction (estimate/log_sum_product_split.hpp) sums the same terms in P groups, each
// rescaled once by exp(m_p − M) in the combine: the tiled path's per-chunk rescaling, within the
// same bound u (8·scale + 4K + 16).

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/log_sum_product_cases.hpp"
#include "common/log_sum_product_steps.hpp"
#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/detail/log_sum_product_lane_types.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/log_semiring_gemm.hpp"
#include "myriad/estimate/log_sum_product_split.hpp"
#include "myriad/estimate/log_tensor.hpp"

namespace myriad {
namespace {

using namespace testing::log_sum_product_cases;

constexpr LogGemmTilingId kTilings[] = {LogGemmTilingId::gemv_rows, LogGemmTilingId::gemv_cols,
                                        LogGemmTilingId::tall,      LogGemmTilingId::wide,
                                        LogGemmTilingId::small,     LogGemmTilingId::square};

/// How a case's values are drawn: N(0, 3²) per entry, plus per-variable offsets uniform in
/// ±kept_offset (variables kept by the step) or ±reduced_offset (eliminated ones), summed over
/// the entry's coordinates, so rows, columns and reduction indices have their own scales; each
/// entry is −inf with probability minus_inf.
struct Values {
  double kept_offset = 1e4;
  double reduced_offset = 3.0;
  double minus_inf = 0.1;
};

/// Fills every tensor of rank ≥ 1 of the case (see Values; scalars keep their value). Offsets
/// are keyed by the tensors' own variables, so a renamed slice's reduced axis (the chain's m)
/// has the offsets of the variable it renames.
void fill(Case& c, const Values& values, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0), unit(0.0, 1.0);
  // Per (variable, index) offsets, shared by every tensor that carries the variable.
  std::vector<std::vector<double>> offset(64);
  const auto offset_of = [&](int var, std::int64_t index, bool reduced) {
    auto& table = offset[static_cast<std::size_t>(var)];
    while (static_cast<std::int64_t>(table.size()) <= index)
      table.push_back(uniform(rng) * (reduced ? values.reduced_offset : values.kept_offset));
    return table[static_cast<std::size_t>(index)];
  };
  std::vector<bool> reduced(64, false);
  for (int v : c.eliminate) reduced[static_cast<std::size_t>(v)] = true;
  for (LogTensor& t : c.tensors) {
    if (t.rank() == 0) continue;
    std::vector<std::int64_t> index(static_cast<std::size_t>(t.rank()), 0);
    for (std::int64_t i = 0; i < t.size(); ++i) {
      std::int64_t rest = i;
      for (int a = t.rank() - 1; a >= 0; --a) {
        index[a] = rest % t.extents()[a];
        rest /= t.extents()[a];
      }
      double x = normal(rng);
      for (int a = 0; a < t.rank(); ++a)
        x += offset_of(t.vars()[a], index[a], reduced[static_cast<std::size_t>(t.vars()[a])]);
      t.data()[i] = unit(rng) < values.minus_inf ? -INFINITY : x;
    }
  }
}

/// A fresh output tensor (NaN sentinels) and the case's step writing into it.
struct Output {
  LogTensor tensor;
  LogSumProductStep step;
};

std::unique_ptr<Output> make_output(const Case& c) {
  auto out = std::make_unique<Output>();
  out->tensor =
      LogTensor(c.output_vars, c.output_extents, std::numeric_limits<double>::quiet_NaN());
  const LogTensorView destination = c.destination(out->tensor.view());
  out->step = testing::log_sum_product_step(
      plan_log_sum_product(c.input_views(), c.eliminate, &c.out_vars), destination);
  return out;
}

/// The generic element's values: LogSumProductStep at every output element.
std::unique_ptr<Output> run_generic(const Case& c) {
  auto out = make_output(c);
  for (std::int64_t o = 0; o < out->step.out_size; ++o) out->step(o);
  return out;
}

/// Element-wise comparison over the whole output tensor (entries outside the destination
/// stay NaN in both: a stray write shows). `bitwise` demands identical values.
/// Largest |actual − generic| / tolerance over the comparisons of the running test (printed).
double worst_ratio = 0.0;

void expect_same_output(const Output& actual, const Output& expected, double tolerance,
                        bool bitwise, const std::string& what) {
  const std::vector<double>& a = actual.tensor.values();
  const std::vector<double>& e = expected.tensor.values();
  ASSERT_EQ(a.size(), e.size());
  int reported = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    bool same;
    if (std::isnan(e[i]) || std::isinf(e[i]))
      same = (std::isnan(a[i]) && std::isnan(e[i])) || a[i] == e[i];
    else if (bitwise)
      same = a[i] == e[i];
    else
      same = std::abs(a[i] - e[i]) <= tolerance;
    if (std::isfinite(a[i]) && std::isfinite(e[i])) worst = std::max(worst, std::abs(a[i] - e[i]));
    if (!same && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", the generic element "
                    << e[i] << " (tolerance " << (bitwise ? 0.0 : tolerance) << ")";
  }
  EXPECT_LE(worst, tolerance) << what;
  worst_ratio = std::max(worst_ratio, worst / tolerance);
}

/// Prints the worst error-to-tolerance ratio of the test (how much slack the bound has).
void print_worst_ratio(const char* test) {
  std::printf("[ %s ] worst |difference| / tolerance = %.3g\n", test, worst_ratio);
  worst_ratio = 0.0;
}

// --- the cases --------------------------------------------------------------------------------

std::vector<std::function<Case()>> numeric_cases() {
  return {
      [] { return hierarchical(7, 7); },
      [] { return hierarchical(9, 40); },
      [] { return chain_level(20, 7); },
      [] { return chain_level(5, 4); },
      [] { return multi_axis(); },
      [] { return backward_with_constants(10); },
      [] { return backward_with_constants(35); },
      [] { return chimpanzees_block(4); },
      [] { return batched_dot(); },
      [] { return column_gemv(); },
      [] { return broadcast_reduce(); },
  };
}

/// check(c, reference, seed) for every numeric case under each of three value draws, filled with
/// seeds first + 1, first + 2, …; `reference` is the generic element's output for c.
template <class Check>
void for_each_filled_case(std::uint64_t first, Check&& check) {
  static const Values draws[] = {
      {1e4, 3.0, 0.1},    // large offsets along rows and columns
      {1e4, 1e3, 0.1},    // and along the reduction (the max moves between chunks)
      {30.0, 3.0, 0.6}};  // mostly −inf: many outputs with no finite term
  std::uint64_t seed = first;
  for (const auto& make : numeric_cases()) {
    for (const Values& values : draws) {
      Case c = make();
      fill(c, values, ++seed);
      const auto reference = run_generic(c);
      check(c, *reference, seed);
    }
  }
}

LogSemiringGemm gemm_of(const Output& out) {
  std::string why;
  const std::optional<LogSemiringGemm> gemm = as_log_semiring_gemm(out.step, &why);
  EXPECT_TRUE(gemm.has_value()) << why;
  return gemm.value_or(LogSemiringGemm{});
}

// ---------------------------------------------------------------------------------------------
// Shape analysis

TEST(LogSemiringGemmShape, HierarchicalIsABatchedGemv) {
  Case c = hierarchical(7, 11);
  fill(c, {}, 1);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(g.a_input, 0);  // ℓ_z
  EXPECT_EQ(g.b_input, 1);  // λ
  EXPECT_EQ(g.m(), 7);      // mu
  EXPECT_EQ(g.n(), 1);
  EXPECT_EQ(g.k(), 11);  // z
  EXPECT_EQ(g.batches(), 3 * 5);
  ASSERT_EQ(g.batch.axes, 2);
  EXPECT_EQ(g.batch.axis[0], 0);  // run
  EXPECT_EQ(g.batch.axis[1], 1);  // group
  ASSERT_EQ(g.rows.axes, 1);
  EXPECT_EQ(g.rows.axis[0], 2);
  EXPECT_EQ(g.cols.axes, 0);
  EXPECT_TRUE(g.a_reduce_contiguous);
  EXPECT_TRUE(g.b_reduce_contiguous);
  EXPECT_EQ(choose_log_gemm_tiling(g.m(), g.n()), LogGemmTilingId::gemv_rows);
}

TEST(LogSemiringGemmShape, ChainLevelIsABatchedGemmOverStridedSlices) {
  Case c = chain_level(6, 9);
  fill(c, {}, 2);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(g.m(), 6);  // lag, A only
  EXPECT_EQ(g.n(), 6);  // chain, B only
  EXPECT_EQ(g.k(), 6);  // the scratch variable m
  EXPECT_EQ(g.batches(), 2 * 4);
  // The slices step over two time steps: A's and B's t strides are twice the tensor's.
  const LogTensorView cur = c.tensors[0].view();
  EXPECT_EQ(g.offset(g.batch, 1, g.a_input), 2 * cur.stride_of(20));
  EXPECT_EQ(g.offset(g.batch, 4, g.a_input), cur.stride_of(0));  // run 1, pair 0
  EXPECT_EQ(g.offset(g.rows, 5, g.a_input), 5 * cur.stride_of(1));
  EXPECT_EQ(g.offset(g.reduce, 3, g.b_input), 3 * cur.stride_of(1));  // B's m is its lag
  // The output is the next level's head: its t stride is the contiguous next level's.
  EXPECT_EQ(g.offset(g.batch, 1, LogSemiringGemm::kOutputSlot), 6 * 6);
  EXPECT_FALSE(g.b_reduce_contiguous);
  EXPECT_TRUE(g.a_reduce_contiguous);
}

TEST(LogSemiringGemmShape, MultiAxisGroupsDecodeLikeTheElement) {
  Case c = multi_axis();
  fill(c, {}, 3);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(g.m(), 4 * 5);  // a1, a2 in output order
  EXPECT_EQ(g.n(), 2 * 3);  // b2, b1 in output order
  EXPECT_EQ(g.k(), 6 * 3);  // e2, e1 in elimination order
  EXPECT_EQ(g.batches(), 2);
  // Every output's offsets, decoded from (batch, row, col), equal the element's base offsets
  // at the same output element.
  const LogSumProductElement& e = out->step.element;
  for (std::int64_t s = 0; s < g.batches(); ++s)
    for (std::int64_t row = 0; row < g.m(); ++row)
      for (std::int64_t col = 0; col < g.n(); ++col) {
        std::int64_t offset[LogSemiringGemm::kOutputSlot + 1];
        g.output_offsets(s, row, col, offset);
        // Row-major output index over (b2, a1, s, b1, a2) from the group coordinates.
        const std::int64_t a1 = row / 5, a2 = row % 5, b2 = col / 3, b1 = col % 3;
        const std::int64_t o = (((b2 * 4 + a1) * 2 + s) * 3 + b1) * 5 + a2;
        std::int64_t base[kMaxStepInputs];
        e.base_offsets(o, base);
        EXPECT_EQ(offset[0], base[0]);
        EXPECT_EQ(offset[1], base[1]);
        std::int64_t out_offset = 0, rest = o;
        for (int a = e.out_axes - 1; a >= 0; --a) {
          out_offset += (rest % e.out_extent[a]) * out->step.out_stride[a];
          rest /= e.out_extent[a];
        }
        EXPECT_EQ(offset[LogSemiringGemm::kOutputSlot], out_offset);
      }
  // Reduction indices in the element's sweep order (e2 slow, e1 fast).
  const LogTensor& a = c.tensors[0];
  EXPECT_EQ(g.offset(g.reduce, 1, g.a_input), a.stride_of(10));
  EXPECT_EQ(g.offset(g.reduce, 3, g.a_input), a.stride_of(11));
}

TEST(LogSemiringGemmShape, ConstantInputsAreAddedOnceAndKeptAxesGoByCarrier) {
  Case c = backward_with_constants(10);
  fill(c, {}, 4);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(out->step.element.constants, 2);  // A and −log K
  EXPECT_EQ(g.a_input, 1);                    // B
  EXPECT_EQ(g.b_input, 2);                    // W
  EXPECT_EQ(g.m(), 33);                       // e: B only
  EXPECT_EQ(g.n(), 12);                       // a: W only (A is constant)
  EXPECT_EQ(g.k(), 10);                       // b
  EXPECT_EQ(g.batches(), 2);                  // run
}

TEST(LogSemiringGemmShape, ChimpanzeesBlockIsTall) {
  Case c = chimpanzees_block(5);
  fill(c, {}, 5);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(g.a_input, 0);  // ℓ
  EXPECT_EQ(g.m(), 5);      // k_sb
  EXPECT_EQ(g.n(), 625);    // K⁴
  EXPECT_EQ(g.rows.axes, 1);
  EXPECT_EQ(g.cols.axes, 4);
  EXPECT_EQ(g.k(), 5);
  EXPECT_EQ(g.batches(), 3);
  EXPECT_EQ(choose_log_gemm_tiling(g.m(), g.n()), LogGemmTilingId::wide);
  EXPECT_EQ(choose_log_gemm_tiling(625, 5), LogGemmTilingId::tall);
}

TEST(LogSemiringGemmShape, KeptAxisOfConstantsOnlyIsABatchAxisAndBroadcastsReduce) {
  Case c = broadcast_reduce();
  fill(c, {}, 6);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(g.m(), 9);
  EXPECT_EQ(g.n(), 40);
  EXPECT_EQ(g.k(), 5 * 4);
  EXPECT_EQ(g.batches(), 3);                       // x, carried by the constant C only
  EXPECT_EQ(g.offset(g.reduce, 1, g.b_input), 0);  // e2: B broadcasts
  EXPECT_EQ(g.offset(g.reduce, 4, g.b_input), c.tensors[1].stride_of(10));
}

TEST(LogSemiringGemmShape, NonGemmStepsAreRejectedWithAReason) {
  LogTensor a({10, 1}, {6, 4}), b({10, 2}, {6, 3}), d({10}, {6}), constant({1}, {4});
  const auto step_of = [](std::vector<LogTensorView> inputs, std::vector<int> eliminate,
                          double* out) {
    return testing::contiguous_log_sum_product_step(plan_log_sum_product(inputs, eliminate), out);
  };
  std::vector<double> out(64);
  std::string why;
  // One varying input: a reduction (the marginal weights' step), even with a constant added.
  EXPECT_FALSE(as_log_semiring_gemm(step_of({a.view()}, {10}, out.data()), &why));
  EXPECT_NE(why.find("1 inputs vary"), std::string::npos) << why;
  EXPECT_FALSE(as_log_semiring_gemm(step_of({a.view(), constant.view()}, {10}, out.data()), &why));
  // Three varying inputs do not factor into two operands.
  EXPECT_FALSE(
      as_log_semiring_gemm(step_of({a.view(), b.view(), d.view()}, {10}, out.data()), &why));
  EXPECT_NE(why.find("3 inputs vary"), std::string::npos) << why;
  // Nothing eliminated: a broadcast sum.
  EXPECT_FALSE(as_log_semiring_gemm(step_of({a.view(), b.view()}, {}, out.data()), &why));
  EXPECT_NE(why.find("0 inputs vary"), std::string::npos) << why;
  // No output.
  EXPECT_FALSE(as_log_semiring_gemm(step_of({a.view(), b.view()}, {10}, nullptr), &why));
  EXPECT_NE(why.find("no output"), std::string::npos) << why;
  // Two varying inputs are a GEMM.
  EXPECT_TRUE(as_log_semiring_gemm(step_of({a.view(), b.view()}, {10}, out.data())));
}

TEST(LogSemiringGemmShape, PathResolution) {
  LogSemiringGemm g;
  const auto shape = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    g.rows.size = m;
    g.cols.size = n;
    g.reduce.size = k;
    return &g;
  };
  using P = ContractionPath;
  EXPECT_EQ(resolve_contraction_path(P::generic, shape(64, 64, 64)), P::generic);
  EXPECT_EQ(resolve_contraction_path(P::tiled, nullptr), P::generic);
  EXPECT_EQ(resolve_contraction_path(P::cublas, nullptr), P::generic);
  EXPECT_EQ(resolve_contraction_path(P::tiled, shape(2, 2, 2)), P::tiled);
  EXPECT_EQ(resolve_contraction_path(P::cublas, shape(2, 2, 2)), P::cublas);
  EXPECT_EQ(resolve_contraction_path(P::cublas, shape(std::int64_t{1} << 31, 2, 2)), P::tiled);
  EXPECT_EQ(resolve_contraction_path(P::automatic, nullptr), P::generic);
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(64, 64, 4)), P::generic);  // short K
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(16, 16, 16)), P::tiled);
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(3, 3, 64)), P::generic);    // 9 of 8 × 64
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(256, 1, 16)), P::tiled);    // GEMV
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(40, 40, 16)), P::tiled);    // 1600/4096
  EXPECT_EQ(resolve_contraction_path(P::automatic, shape(1, 1, 1000)), P::generic);  // dot
}

// ---------------------------------------------------------------------------------------------
// The tile body

TEST(LogSemiringGemmTileBody, OnlineRescaleAcrossChunksIsExact) {
  // One thread of the small tiling, output (0, 0): A's column 0 and B's column 0 staged per
  // chunk, with the maximum jumping by 1e4 between chunks in both directions, −inf terms and a
  // chunk of −inf only. Reference: long-double LSE.
  using Tiling = LogGemmSmall;
  LogGemmStage<Tiling> stage{};
  LogGemmAccumulator<Tiling> acc;
  acc.clear();
  const std::vector<std::vector<double>> chunks = {
      {-INFINITY, -INFINITY},               // nothing yet: stays −inf, sum 0
      {-5.0, 0.0, 1.5, -INFINITY, 2.0},     // first finite terms
      {1e4, 1e4 - 1.0, -INFINITY, 9999.5},  // the maximum jumps: the old sum underflows
      {-3e4, 1e4 + 0.25, -1e4},             // a small rescale
      {-INFINITY}};
  long double max = -INFINITY;
  for (const auto& chunk : chunks)
    for (double x : chunk) max = std::max<long double>(max, x);
  long double sum = 0;
  for (const auto& chunk : chunks) {
    for (int k = 0; k < static_cast<int>(chunk.size()); ++k) {
      // Split each term between A and B so that both staged arrays are exercised.
      stage.a[k * Tiling::kPitchA] = chunk[k] == -INFINITY ? -INFINITY : chunk[k] / 3.0;
      stage.b[k * Tiling::kPitchB] = chunk[k] == -INFINITY ? 0.0 : chunk[k] - chunk[k] / 3.0;
      if (chunk[k] != -INFINITY) sum += std::exp(static_cast<long double>(chunk[k]) - max);
    }
    acc.fold(stage.a, stage.b, 0, 0, static_cast<int>(chunk.size()));
  }
  const double expected = static_cast<double>(max + std::log(sum));
  EXPECT_NEAR(acc.log_sum(0, 0), expected, 4 * kUnitRoundoff * 4e4);
  // All −inf: −inf, not NaN.
  LogGemmAccumulator<Tiling> empty;
  empty.clear();
  stage.a[0] = -INFINITY;
  stage.b[0] = -INFINITY;
  empty.fold(stage.a, stage.b, 0, 0, 1);
  EXPECT_EQ(empty.log_sum(0, 0), -INFINITY);
}

TEST(LogSemiringGemmTiled, HostBlockMatchesTheGenericElementForEveryTiling) {
  for_each_filled_case(100, [](const Case& c, const Output& reference, std::uint64_t seed) {
    const LogSemiringGemm probe = gemm_of(reference);
    const double tolerance = tolerance_of(c, probe.k());
    const bool bitwise = probe.k() <= LogGemmSquare::kChunk && probe.step.element.constants == 0;
    for (LogGemmTilingId tiling : kTilings) {
      const auto out = make_output(c);
      run_log_semiring_gemm_tiled_host(gemm_of(*out), tiling);
      expect_same_output(*out, reference, tolerance, bitwise,
                         c.name + " tiling " + std::to_string(static_cast<int>(tiling)) + " seed " +
                             std::to_string(seed));
    }
  });
  print_worst_ratio("tiled host block vs generic");
}

TEST(LogSemiringGemmTiled, ChainLevelAtLargerKWithTheChosenTiling) {
  // K = 70: five chunks, the square tiling with partial tiles (70 = 2·32 + 6).
  Case c = chain_level(70, 5);
  fill(c, {1e4, 1e3, 0.05}, 7);
  const auto reference = run_generic(c);
  const auto out = make_output(c);
  const LogSemiringGemm g = gemm_of(*out);
  EXPECT_EQ(choose_log_gemm_tiling(g.m(), g.n()), LogGemmTilingId::square);
  run_log_semiring_gemm_tiled_host(g);
  expect_same_output(*out, *reference, tolerance_of(c, g.k()), false, "chain K = 70");
  print_worst_ratio("tiled chain K = 70 vs generic");
}

// ---------------------------------------------------------------------------------------------
// The max-shift (cuBLAS) algorithm

TEST(LogSemiringGemmMaxShift, HostTwinMatchesTheGenericElement) {
  for_each_filled_case(200, [](const Case& c, const Output& reference, std::uint64_t seed) {
    const double tolerance = tolerance_of(c, gemm_of(reference).k());
    // One round with the default budget, and one batch per round (a budget of one byte).
    for (std::int64_t budget : {kMaxShiftScratchBytes, std::int64_t{1}}) {
      const auto out = make_output(c);
      run_log_semiring_gemm_max_shift_host(gemm_of(*out), true, budget);
      expect_same_output(
          *out, reference, tolerance, false,
          c.name + " budget " + std::to_string(budget) + " seed " + std::to_string(seed));
    }
  });
  print_worst_ratio("max-shift host twin vs generic");
}

/// C = LSE_e A[e] + B[e] for one output with two terms, A = (0, −gap), B = (−gap, 0), through
/// the max-shift path with and without the exact fallback; returns {checked, raw, generic}.
struct GapResult {
  double checked, raw, generic;
  bool accurate;
};
GapResult two_term_gap(double gap) {
  LogTensor a({10}, {2}, std::vector<double>{0.0, -gap});
  LogTensor b({10}, {2}, std::vector<double>{-gap, 0.0});
  const LogSumProductPlan plan = plan_log_sum_product({a.view(), b.view()}, {10});
  double out = NAN;
  LogSumProductStep step;
  step.element = plan.element;
  step.out = &out;
  step.out_size = 1;
  GapResult r{};
  step(0);
  r.generic = out;
  const LogSemiringGemm g = *as_log_semiring_gemm(step);
  run_log_semiring_gemm_max_shift_host(g, true);
  r.checked = out;
  run_log_semiring_gemm_max_shift_host(g, false);
  r.raw = out;
  // S = 2 exp(−gap) with both maxima 0.
  r.accurate = g.max_shift_accurate(2 * std::exp(-gap), 0.0, 0.0);
  return r;
}

TEST(LogSemiringGemmMaxShift, UnderflowLimitIsDetectedAndRecomputedExactly) {
  // mpis.md §3.4's example: the true value is log 2 − 50; the reference code's log(S + eps)
  // gives log(1.19e-7) ≈ −15.9. Without eps the max shift is accurate here.
  const GapResult g50 = two_term_gap(50.0);
  EXPECT_NEAR(g50.generic, std::log(2.0) - 50.0, 1e-13);
  EXPECT_TRUE(g50.accurate);
  EXPECT_NEAR(g50.raw, g50.generic, 1e-13);
  EXPECT_EQ(g50.checked, g50.raw);
  // 700 nats: S = 2e^-700 ≈ 2e-304 is normal and above K · 2^-1020: accepted.
  const GapResult g700 = two_term_gap(700.0);
  EXPECT_TRUE(g700.accurate);
  EXPECT_NEAR(g700.checked, std::log(2.0) - 700.0, 4 * kUnitRoundoff * 700);
  // 720 nats: S ≈ 4e-313 is subnormal (about 28 significant bits): flagged and recomputed.
  const GapResult g720 = two_term_gap(720.0);
  EXPECT_FALSE(g720.accurate);
  EXPECT_TRUE(std::isfinite(g720.raw));
  EXPECT_EQ(g720.checked, g720.generic);
  // 800 nats: S underflows to 0 and the plain formula gives −inf, although the true value is
  // log 2 − 800; the checked epilogue gives the generic element's value.
  const GapResult g800 = two_term_gap(800.0);
  EXPECT_FALSE(g800.accurate);
  EXPECT_EQ(g800.raw, -INFINITY);
  EXPECT_NEAR(g800.generic, std::log(2.0) - 800.0, 4 * kUnitRoundoff * 800);
  EXPECT_EQ(g800.checked, g800.generic);
}

TEST(LogSemiringGemmMaxShift, ZeroWeightRowsAndPairsGiveMinusInfinity) {
  // A's row 0 is all −inf (m_A = −inf: exactly −inf without a GEMM), and A's row 1 and B's
  // column 0 have disjoint finite supports (S = 0 with finite maxima: the fallback's −inf).
  const double x = -INFINITY;
  LogTensor a({1, 10}, {2, 3}, std::vector<double>{x, x, x, 0.5, x, x});
  LogTensor b({10, 2}, {3, 2}, std::vector<double>{x, 1.0, -2.0, 0.0, 3.0, x});
  const LogSumProductPlan plan = plan_log_sum_product({a.view(), b.view()}, {10});
  std::vector<double> out(4, NAN), generic(4, NAN);
  LogSumProductStep step;
  step.element = plan.element;
  step.out_size = 4;
  step.out_stride[0] = 2;
  step.out_stride[1] = 1;
  step.out = generic.data();
  for (std::int64_t o = 0; o < 4; ++o) step(o);
  step.out = out.data();
  run_log_semiring_gemm_max_shift_host(*as_log_semiring_gemm(step));
  EXPECT_EQ(out[0], -INFINITY);
  EXPECT_EQ(out[1], -INFINITY);
  EXPECT_EQ(out[2], -INFINITY);  // row 1 (e = 0 only) with column 0 (e = 1, 2 only)
  EXPECT_NEAR(out[3], generic[3], 1e-15);
  EXPECT_EQ(generic[2], -INFINITY);
}

// ---------------------------------------------------------------------------------------------
// The CPU policy's SIMD lanes

/// u (2K + 4 + 2 max|U|) over the reference's finite outputs (the lanes' bound, at the top).
double lanes_tolerance(const Output& reference) {
  double largest = 0.0;
  for (double x : reference.tensor.values())
    if (std::isfinite(x)) largest = std::max(largest, std::abs(x));
  const double k = static_cast<double>(reference.step.element.elim_size);
  return kUnitRoundoff * (2.0 * k + 4.0 + 2.0 * largest);
}

std::unique_ptr<Output> run_lanes(const Case& c, const LogSumProductLaneKernel& kernel) {
  auto out = make_output(c);
  run_log_sum_product_lanes(CpuParallel{}, kernel, out->step);
  return out;
}

std::vector<LogSumProductLaneKernel> lane_kernels_or_skip() {
  const std::vector<LogSumProductLaneKernel> kernels = library_log_sum_product_lane_kernels();
#if defined(MYRIAD_SIMD_LANES)
  EXPECT_FALSE(kernels.empty()) << "a build with SIMD lanes has a kernel for at least sse2";
#else
  EXPECT_TRUE(kernels.empty());
#endif
  return kernels;
}

TEST(LogSumProductLanes, EveryInstructionSetMatchesTheGenericElement) {
  const auto kernels = lane_kernels_or_skip();
  if (kernels.empty()) GTEST_SKIP() << "built without SIMD lanes (no xsimd)";
  // Every case's geometry: inputs that broadcast, move by one or stride along the lanes, constant
  // inputs, output slices, lane groups cut short by the output's end.
  for_each_filled_case(300, [&](const Case& c, const Output& reference, std::uint64_t seed) {
    for (const LogSumProductLaneKernel& kernel : kernels)
      expect_same_output(*run_lanes(c, kernel), reference, lanes_tolerance(reference), false,
                         c.name + " in " + kernel.isa + " lanes, seed " + std::to_string(seed));
  });
  print_worst_ratio("SIMD lanes vs generic");
}

TEST(LogSumProductLanes, NonFiniteTermsFollowTheGenericElement) {
  // +inf (an overflowed weight: U = +inf), NaN (ignored by the max, poisons the sum: U = max)
  // and rows of −inf (U = −inf), in lanes of the same group.
  const auto kernels = lane_kernels_or_skip();
  if (kernels.empty()) GTEST_SKIP() << "built without SIMD lanes (no xsimd)";
  Case c = batched_dot();
  fill(c, Values{1e4, 3.0, 0.0}, 7);  // finite, so that only the entries set below are not
  double* a = c.tensors[0].data();
  a[0 * 37 + 3] = INFINITY;
  a[1 * 37 + 5] = std::numeric_limits<double>::quiet_NaN();
  for (int e = 0; e < 37; ++e) a[2 * 37 + e] = -INFINITY;
  a[3 * 37 + 1] = INFINITY;
  a[3 * 37 + 2] = std::numeric_limits<double>::quiet_NaN();
  const auto reference = run_generic(c);
  EXPECT_EQ(reference->tensor.values()[0], INFINITY);
  EXPECT_EQ(reference->tensor.values()[2], -INFINITY);
  for (const LogSumProductLaneKernel& kernel : kernels)
    expect_same_output(*run_lanes(c, kernel), *reference, lanes_tolerance(*reference), false,
                       std::string("non-finite terms in ") + kernel.isa + " lanes");
}

TEST(LogSumProductLanes, ThePolicyRunsLanesUnlessToldNotAndThreadsChangeNoBit) {
  Case c = hierarchical(200, 100);  // 3000 outputs of 100 terms: above the parallel threshold
  fill(c, Values{}, 11);
  const auto reference = run_generic(c);
  // simd_lanes = false: the generic element, bit for bit.
  auto scalar = make_output(c);
  run_log_sum_product(CpuParallel{false}, scalar->step);
  expect_same_output(*scalar, *reference, 0.0, true, "CpuParallel without lanes");
  // simd_lanes = true: the widest kernel, whatever the number of threads.
  const LogSumProductLaneKernel widest = library_log_sum_product_lane_kernel();
  const int threads = omp_get_max_threads();
  std::vector<std::vector<double>> outputs;
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    auto lanes = make_output(c);
    run_log_sum_product(CpuParallel{true}, lanes->step);
    outputs.push_back(lanes->tensor.values());
    if (widest.width > 0) {
      expect_same_output(*lanes, *run_lanes(c, widest), 0.0, true, "CpuParallel with lanes");
    } else {
      expect_same_output(*lanes, *reference, 0.0, true, "CpuParallel, a build without lanes");
    }
  }
  omp_set_num_threads(threads);
  for (std::size_t i = 1; i < outputs.size(); ++i)
    EXPECT_EQ(outputs[i], outputs[0]) << "the thread count changed the lanes' results";
}

// ---------------------------------------------------------------------------------------------
// The split reduction

std::unique_ptr<Output> run_split(const Case& c, std::int64_t parts) {
  auto out = make_output(c);
  const std::int64_t terms = out->step.element.elim_size;
  LogSumProductSplit split;
  split.part_terms = (terms + parts - 1) / parts;
  split.parts = (terms + split.part_terms - 1) / split.part_terms;
  run_log_sum_product_split(CpuParallel{false}, out->step, split);
  return out;
}

TEST(LogSumProductSplit, EveryPartitionMatchesTheGenericElement) {
  for_each_filled_case(500, [](const Case& c, const Output& reference, std::uint64_t seed) {
    const std::int64_t terms = reference.step.element.elim_size;
    for (std::int64_t parts : {std::int64_t{2}, std::int64_t{3}, std::int64_t{7}, terms})
      expect_same_output(
          *run_split(c, parts), reference, tolerance_of(c, terms), false,
          c.name + " in " + std::to_string(parts) + " parts, seed " + std::to_string(seed));
  });
  print_worst_ratio("split reduction vs generic");
}

TEST(LogSumProductSplit, AStarvedStepSplitsAndMatches) {
  // Seven outputs of 5000 terms each: the shape of the single-block chimpanzees step.
  Case c = starved_dot();
  fill(c, Values{}, 21);
  const auto reference = run_generic(c);
  // On 132 SMs (270 336 thread slots): 19 parts of 264 terms, the last one 248.
  const LogSumProductSplit split = choose_log_sum_product_split(7, 5000, 132 * 2048);
  EXPECT_EQ(split.parts, 19);
  EXPECT_EQ(split.part_terms, 264);
  auto out = make_output(c);
  run_log_sum_product_split(CpuParallel{false}, out->step, split);
  expect_same_output(*out, *reference, tolerance_of(c, 5000), false, "starved step");
}

TEST(LogSumProductSplit, TheRuleSplitsOnlyWhatWouldStarveTheDevice) {
  const std::int64_t slots = 132 * 2048;
  // Outputs enough to fill the device, or a reduction too short for two parts: not split.
  EXPECT_EQ(choose_log_sum_product_split(slots, 1 << 20, slots).parts, 1);
  EXPECT_EQ(choose_log_sum_product_split(10, 2 * kSplitMinPartTerms - 1, slots).parts, 1);
  EXPECT_EQ(choose_log_sum_product_split(0, 1 << 20, slots).parts, 1);
  // One output of a long reduction: as many parts as thread slots, each at least the minimum.
  const LogSumProductSplit one = choose_log_sum_product_split(1, std::int64_t{1} << 30, slots);
  EXPECT_EQ(one.parts, std::min(slots, kSplitMaxPairs));
  // The scratch bound: at most kSplitMaxPairs (output, part) pairs.
  const LogSumProductSplit wide =
      choose_log_sum_product_split(1000, std::int64_t{1} << 30, 1 << 30);
  EXPECT_LE(wide.parts * 1000, kSplitMaxPairs);
  // The length bound, and the parts cover the terms with none empty, whatever the shape.
  for (std::int64_t outputs : {1, 3, 100, 5000})
    for (std::int64_t terms : {512, 1000, 4097, 100000, 12345678}) {
      const LogSumProductSplit s = choose_log_sum_product_split(outputs, terms, slots);
      if (s.parts == 1) continue;
      EXPECT_GE(s.part_terms, kSplitMinPartTerms);
      EXPECT_GE(s.parts * s.part_terms, terms);
      EXPECT_LT((s.parts - 1) * s.part_terms, terms) << "an empty last part";
      EXPECT_LE(s.parts * outputs, std::max<std::int64_t>(slots, outputs) + outputs);
    }
}

TEST(LogSumProductSplit, NonFiniteTermsFollowTheGenericElement) {
  // 37 terms in parts of 10: +inf, NaN in a part whose other terms are −inf, rows of −inf.
  Case c = batched_dot();
  fill(c, Values{1e4, 3.0, 0.0}, 9);
  double* a = c.tensors[0].data();
  a[0 * 37 + 3] = INFINITY;
  for (int e = 20; e < 30; ++e) a[1 * 37 + e] = -INFINITY;
  a[1 * 37 + 25] = std::numeric_limits<double>::quiet_NaN();
  for (int e = 0; e < 37; ++e) a[2 * 37 + e] = -INFINITY;
  for (int e = 0; e < 37; ++e) a[3 * 37 + e] = -INFINITY;
  a[3 * 37 + 31] = std::numeric_limits<double>::quiet_NaN();
  const auto reference = run_generic(c);
  EXPECT_EQ(reference->tensor.values()[0], INFINITY);
  EXPECT_EQ(reference->tensor.values()[2], -INFINITY);
  EXPECT_EQ(reference->tensor.values()[3], -INFINITY);
  for (std::int64_t parts : {2, 4, 37})
    expect_same_output(*run_split(c, parts), *reference, tolerance_of(c, 37), false,
                       "non-finite terms in " + std::to_string(parts) + " parts");
}

}  // namespace
}  // namespace myriad
