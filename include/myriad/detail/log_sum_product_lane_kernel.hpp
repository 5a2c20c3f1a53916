#pragma once
// One lane group of a log-sum-product step on the CPU: the generic element
// (estimate/log_sum_product_element.hpp) for `width` consecutive output elements at once, one per
// SIMD lane, as a warp runs it on the GPU with a thread per element. Included only by the
// per-instruction-set translation units (src/backend/simd/lane_kernels_<isa>.cpp).
//
// Every lane walks the eliminated assignments in the element's order, with the same sums in the
// same order and the same max, so a lane's U differs from the scalar element's only through the
// exponential (xsimd's polynomial against libm's): at most a few ulp per term, hence
// |ΔU| ≤ u · (2E + 4 + 2|U|) for E eliminated assignments (tests/unit/test_log_semiring_gemm.cpp
// states and checks the bound). The lanes share one odometer: an input's offset is its lane's
// base plus a running offset common to all lanes, so each load is a broadcast (the input does not
// move along the lanes), a contiguous load (it moves by one) or a gather.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "myriad/core/math.hpp"
#include "myriad/detail/log_sum_product_lane_types.hpp"

namespace myriad {
namespace detail {

template <class Arch>
void log_sum_product_lane_group(const LogSumProductStep& step, std::int64_t group) {
  using B = xsimd::batch<double, Arch>;
  using Index = xsimd::batch<std::int64_t, Arch>;
  constexpr int W = static_cast<int>(B::size);
  const LogSumProductElement& e = step.element;
  const std::int64_t first = group * W;
  const int lanes = static_cast<int>(std::min<std::int64_t>(W, step.out_size - first));

  // Each lane's input offsets; lanes past the end repeat the last element (computed, not written).
  alignas(64) std::int64_t base[kMaxStepInputs][W];
  alignas(64) double constant[W];
  for (int l = 0; l < W; ++l) {
    std::int64_t b[kMaxStepInputs];
    e.base_offsets(first + std::min(l, lanes - 1), b);
    for (int j = 0; j < e.inputs; ++j) base[j][l] = b[j];
    double c = 0.0;  // the element's order: constants summed first, once
    for (int k = 0; k < e.constants; ++k) c += e.data[e.constant_input[k]][b[e.constant_input[k]]];
    constant[l] = c;
  }

  // How each varying input moves along the lanes.
  enum class Load { broadcast, contiguous, gather };
  Load load[kMaxStepInputs];
  const double* origin[kMaxStepInputs];
  Index index[kMaxStepInputs];
  std::int64_t stride[kMaxStepInputs][kMaxStepAxes];
  for (int v = 0; v < e.varying; ++v) {
    const int j = e.varying_input[v];
    const std::int64_t step_along = base[j][1] - base[j][0];  // W ≥ 2
    bool progression = true;
    for (int l = 1; l < W; ++l)
      progression = progression && base[j][l] - base[j][0] == l * step_along;
    load[v] = progression && step_along == 0   ? Load::broadcast
              : progression && step_along == 1 ? Load::contiguous
                                               : Load::gather;
    origin[v] = e.data[j] + (load[v] == Load::gather ? 0 : base[j][0]);
    index[v] = Index::load_aligned(base[j]);
    for (int b = 0; b < e.elim_axes; ++b) stride[v][b] = e.elim_stride[j][b];
  }

  const B constants = B::load_aligned(constant);
  // Calls visit(s) with the lanes' Σ_j T_j at every eliminated assignment, in the element's order.
  const auto sweep = [&](auto&& visit) {
    std::int64_t running[kMaxStepInputs] = {};
    std::int64_t digit[kMaxStepAxes] = {};
    for (std::int64_t a = 0; a < e.elim_size; ++a) {
      B s = constants;
      for (int v = 0; v < e.varying; ++v) {
        const double* at = origin[v] + running[v];
        s += load[v] == Load::broadcast    ? B(*at)
             : load[v] == Load::contiguous ? B::load_unaligned(at)
                                           : B::gather(at, index[v]);
      }
      visit(s);
      for (int b = e.elim_axes - 1; b >= 0; --b) {
        for (int v = 0; v < e.varying; ++v) running[v] += stride[v][b];
        if (++digit[b] < e.elim_extent[b]) break;
        for (int v = 0; v < e.varying; ++v) running[v] -= stride[v][b] * e.elim_extent[b];
        digit[b] = 0;
      }
    }
  };

  // The max pass keeps the terms of short reductions (most of MP IS's: E = K or a few K) so that
  // the sum pass reads them back instead of loading and gathering them again.
  constexpr std::int64_t kKeptTerms = 256;
  alignas(64) double kept[kKeptTerms * W];
  const bool keep = e.elim_size <= kKeptTerms;
  B max(-INFINITY);
  std::int64_t at = 0;
  sweep([&](const B& s) {
    max = xsimd::select(s > max, s, max);  // the element's NaN rule
    if (keep) s.store_aligned(kept + W * at++);
  });
  // The element skips the sum for a max of ±inf (all zero weight, or an overflowed sum).
  const auto finite = xsimd::isfinite(max);
  B sum(0.0);
  if (xsimd::any(finite)) {
    if (keep) {
      for (std::int64_t a = 0; a < e.elim_size; ++a)
        sum += xsimd::exp(B::load_aligned(kept + W * a) - max);
    } else {
      sweep([&](const B& s) { sum += xsimd::exp(s - max); });
    }
  }
  sum = xsimd::select(finite, sum, B(0.0));

  alignas(64) double max_of[W], sum_of[W];
  max.store_aligned(max_of);
  sum.store_aligned(sum_of);
  for (int l = 0; l < lanes; ++l)
    step.out[step.out_offset(first + l)] =
        sum_of[l] > 0.0 ? max_of[l] + myriad::log(sum_of[l]) : max_of[l];
}

/// The kernel of instruction set Arch.
template <class Arch>
LogSumProductLaneKernel log_sum_product_lane_kernel() {
  return lane_kernel_of<double, Arch>(&log_sum_product_lane_group<Arch>);
}

}  // namespace detail
}  // namespace myriad
