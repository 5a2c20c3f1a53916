// The CUDA paths of MP IS's log-sum-product steps (kernels/cuda_contraction.cuh): generic,
// tiled (every tiling) and cuBLAS max-shift, each against the CPU generic element on the same
// steps the host tests use (tests/unit/test_log_semiring_gemm.cpp): a batched GEMV, timeseries
// levels over strided slices into a strided destination, several axes per group in scrambled
// orders, the backward pass's constant inputs, Chimpanzees' K⁴ × K block, M = N = 1 and M = 1,
// and a reduction that one operand broadcasts over. Skipped without a CUDA device.
//
// Tolerance: u (8·scale + 4K + 16), derived in tests/unit/test_log_semiring_gemm.cpp; CUDA's
// double exp and log are within 1 ulp (CUDA C Programming Guide, "Mathematical Functions"), as
// the derivation assumes of glibc's. The suite exists only in builds with CUDA: its device paths
// are in log_semiring_gemm_kernels.cu, which only those build.

#if defined(MYRIAD_HAS_CUDA)

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/log_sum_product_cases.hpp"
#include "common/log_sum_product_steps.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/log_semiring_gemm.hpp"
#include "myriad/estimate/log_tensor.hpp"

namespace myriad::log_semiring_gemm_test {

// tests/cuda/log_semiring_gemm_kernels.cu
void run_step_on_device(const LogSumProductStep& step, ContractionPath path);
void run_tiled_on_device(const LogSemiringGemm& gemm, LogGemmTilingId tiling);
void run_cublas_on_device(const LogSemiringGemm& gemm, std::int64_t budget_bytes);

namespace {

using namespace testing::log_sum_product_cases;

#define SKIP_WITHOUT_DEVICE()                                                     \
  do {                                                                            \
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: test skipped"; \
  } while (0)

/// N(0, 3²) plus per-(variable, index) offsets uniform in ±1e4 (kept) or ±reduced_offset
/// (eliminated); −inf with probability 0.1.
void fill(Case& c, double reduced_offset, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0), unit(0.0, 1.0);
  std::vector<std::vector<double>> offset(64);
  for (LogTensor& t : c.tensors) {
    if (t.rank() == 0) continue;
    for (std::int64_t i = 0; i < t.size(); ++i) {
      double x = normal(rng);
      std::int64_t rest = i;
      for (int a = t.rank() - 1; a >= 0; --a) {
        const std::int64_t index = rest % t.extents()[a];
        rest /= t.extents()[a];
        const int var = t.vars()[a];
        const bool reduced = std::count(c.eliminate.begin(), c.eliminate.end(), var) > 0;
        auto& table = offset[static_cast<std::size_t>(var)];
        while (static_cast<std::int64_t>(table.size()) <= index)
          table.push_back(uniform(rng) * (reduced ? reduced_offset : 1e4));
        x += table[static_cast<std::size_t>(index)];
      }
      t.data()[i] = unit(rng) < 0.1 ? -INFINITY : x;
    }
  }
}

std::vector<std::function<Case()>> cases() {
  return {starved_dot,
          starved_gemv,
          [] { return hierarchical(9, 40); },
          [] { return chain_level(20, 7); },
          [] { return chain_level(70, 5); },
          multi_axis,
          [] { return backward_with_constants(35); },
          [] { return chimpanzees_block(4); },
          batched_dot,
          column_gemv,
          broadcast_reduce};
}

/// The case's step over the tensors at `data` (host or device copies, same layout) writing
/// into an output tensor at `out`.
LogSumProductStep step_of(const Case& c, const std::vector<const double*>& data, double* out) {
  std::vector<LogTensorView> views;
  for (std::size_t j = 0; j < c.tensors.size(); ++j) {
    LogTensorView v = c.tensors[j].view();
    v.data = data[j];
    views.push_back(v);
  }
  LogTensorView output{out, c.output_vars, c.output_extents, row_major_strides(c.output_extents)};
  const LogTensorView destination = c.destination(output);
  return testing::log_sum_product_step(
      plan_log_sum_product(c.inputs(views), c.eliminate, &c.out_vars), destination);
}

std::int64_t output_size(const Case& c) {
  return checked_index_space_size(c.output_extents, "test output");
}

/// The CPU generic element's output (NaN outside the destination).
std::vector<double> generic_on_host(const Case& c) {
  std::vector<const double*> data;
  for (const LogTensor& t : c.tensors) data.push_back(t.data());
  std::vector<double> out(static_cast<std::size_t>(output_size(c)),
                          std::numeric_limits<double>::quiet_NaN());
  const LogSumProductStep step = step_of(c, data, out.data());
  for (std::int64_t o = 0; o < step.out_size; ++o) step(o);
  return out;
}

/// The case's tensors and a NaN-filled output on the device.
struct DeviceCase {
  std::vector<DeviceArray<double>> tensors;
  DeviceArray<double> out;
  LogSumProductStep step;

  explicit DeviceCase(const Case& c) {
    std::vector<const double*> data;
    for (const LogTensor& t : c.tensors) {
      tensors.emplace_back(t.values());
      data.push_back(tensors.back().data());
    }
    out = DeviceArray<double>(std::vector<double>(static_cast<std::size_t>(output_size(c)),
                                                  std::numeric_limits<double>::quiet_NaN()));
    step = step_of(c, data, out.data());
  }
  std::vector<double> result() const { return download(out.data(), out.size()); }
};

void expect_same(const std::vector<double>& actual, const std::vector<double>& expected,
                 double tolerance, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    const bool same = std::isfinite(e) ? std::abs(a - e) <= tolerance
                                       : (a == e || (std::isnan(a) && std::isnan(e)));
    if (!same && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << a << " on the device, " << e
                    << " from the CPU generic element (tolerance " << tolerance << ")";
  }
}

LogSemiringGemm gemm_of(const LogSumProductStep& step) {
  std::string why;
  const std::optional<LogSemiringGemm> gemm = as_log_semiring_gemm(step, &why);
  EXPECT_TRUE(gemm.has_value()) << why;
  return gemm.value_or(LogSemiringGemm{});
}

TEST(LogSemiringGemmCuda, EveryPathMatchesTheCpuGenericElement) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 300;
  for (const auto& make : cases())
    for (double reduced_offset : {3.0, 1e3}) {
      Case c = make();
      fill(c, reduced_offset, ++seed);
      const std::vector<double> expected = generic_on_host(c);
      for (ContractionPath path : {ContractionPath::generic, ContractionPath::tiled,
                                   ContractionPath::cublas, ContractionPath::automatic}) {
        DeviceCase device(c);
        const LogSemiringGemm gemm = gemm_of(device.step);
        if (path == ContractionPath::tiled || path == ContractionPath::cublas) {
          EXPECT_EQ(resolve_contraction_path(path, &gemm), path) << c.name;
        }
        run_step_on_device(device.step, path);
        expect_same(device.result(), expected, tolerance_of(c, gemm.k()),
                    c.name + " on " + to_string(path) + ", seed " + std::to_string(seed));
      }
    }
}

TEST(LogSemiringGemmCuda, EveryTilingMatchesTheCpuGenericElement) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 400;
  for (const auto& make : cases()) {
    Case c = make();
    fill(c, 1e3, ++seed);
    const std::vector<double> expected = generic_on_host(c);
    for (LogGemmTilingId tiling :
         {LogGemmTilingId::gemv_rows, LogGemmTilingId::gemv_cols, LogGemmTilingId::tall,
          LogGemmTilingId::wide, LogGemmTilingId::small, LogGemmTilingId::square}) {
      DeviceCase device(c);
      const LogSemiringGemm gemm = gemm_of(device.step);
      run_tiled_on_device(gemm, tiling);
      expect_same(device.result(), expected, tolerance_of(c, gemm.k()),
                  c.name + " tiling " + std::to_string(static_cast<int>(tiling)));
    }
  }
}

TEST(LogSemiringGemmCuda, CublasInRoundsOfOneBatchMatches) {
  SKIP_WITHOUT_DEVICE();
  for (const auto& make : {std::function<Case()>([] { return hierarchical(9, 40); }),
                           std::function<Case()>([] { return chain_level(20, 7); }),
                           std::function<Case()>([] { return backward_with_constants(10); })}) {
    Case c = make();
    fill(c, 1e3, 500);
    const std::vector<double> expected = generic_on_host(c);
    DeviceCase device(c);
    const LogSemiringGemm gemm = gemm_of(device.step);
    run_cublas_on_device(gemm, 1);
    expect_same(device.result(), expected, tolerance_of(c, gemm.k()), c.name + " in rounds");
  }
}

TEST(LogSemiringGemmCuda, CublasUnderflowFallsBackToTheExactElement) {
  SKIP_WITHOUT_DEVICE();
  // A = (0, −800), B = (−800, 0): S = 2e^-800 underflows to 0; the true value is log 2 − 800.
  Case c;
  c.name = "gap_800";
  c.tensors = {LogTensor({10}, {2}, std::vector<double>{0.0, -800.0}),
               LogTensor({10}, {2}, std::vector<double>{-800.0, 0.0})};
  c.eliminate = {10};
  c.out_vars = c.output_vars = {};
  c.output_extents = {};
  DeviceCase device(c);
  run_step_on_device(device.step, ContractionPath::cublas);
  const std::vector<double> out = device.result();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0], std::log(2.0) - 800.0, 4 * kUnitRoundoff * 800);
}

}  // namespace
}  // namespace myriad::log_semiring_gemm_test

#endif  // MYRIAD_HAS_CUDA
