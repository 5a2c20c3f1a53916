#pragma once
// One output element of a log-space sum-product, U[o] = LSE_E Σ_j T_j (mpis.md §3.2–§3.4), over
// strided inputs: the inner loop of every massively-parallel-importance-sampling contraction,
// its backward pass (§5) and its index sampler (§6). Host and device code: the CPU runs it in
// an OpenMP loop over output elements, CUDA one output element per thread, so the CPU tests
// exercise the GPU arithmetic (DESIGN.md rule 1).
//
// The broadcast sum is never materialised: each output element makes a max pass and then a
// shifted-sum pass over the eliminated assignments, so no unshifted exp is taken and no eps is
// added (exact for any offset; mpis.md §3.4). −inf is a zero weight; an element whose terms are
// all −inf is −inf.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

/// Most tensors merged by one step, and most axes (kept or eliminated) of one step. A step of
/// the paper's models merges at most 5 tensors over at most 7 K-dims, 4 plate dims and the run.
inline constexpr int kMaxStepInputs = 8;
inline constexpr int kMaxStepAxes = 14;

/// The strided geometry of U = LSE_E Σ_j T_j: where each input lives and how each moves along
/// the kept (output) axes and the eliminated axes. An input's stride along an axis it does not
/// carry is 0 (it broadcasts). Trivially copyable: a kernel parameter.
struct LogSumProductElement {
  int inputs = 0;
  int out_axes = 0;
  int elim_axes = 0;
  std::int64_t elim_size = 1;  ///< Π elim_extent
  const double* data[kMaxStepInputs] = {};
  std::int64_t out_extent[kMaxStepAxes] = {};
  std::int64_t elim_extent[kMaxStepAxes] = {};
  std::int64_t out_stride[kMaxStepInputs][kMaxStepAxes] = {};
  std::int64_t elim_stride[kMaxStepInputs][kMaxStepAxes] = {};

  /// Each input's offset at output element o (row-major over the kept axes, last fastest).
  MYRIAD_HD void base_offsets(std::int64_t o, std::int64_t* base) const {
    for (int j = 0; j < inputs; ++j) base[j] = 0;
    for (int a = out_axes - 1; a >= 0; --a) {
      const std::int64_t i = o % out_extent[a];
      o /= out_extent[a];
      for (int j = 0; j < inputs; ++j) base[j] += i * out_stride[j][a];
    }
  }

  /// Calls visit(e, s) with s = Σ_j T_j at every eliminated assignment e (row-major, last axis
  /// fastest) for inputs positioned at `base`; an odometer moves each input's offset.
  template <class Visit>
  MYRIAD_HD void sweep(const std::int64_t* base, Visit&& visit) const {
    std::int64_t offset[kMaxStepInputs];
    std::int64_t digit[kMaxStepAxes];
    for (int j = 0; j < inputs; ++j) offset[j] = base[j];
    for (int b = 0; b < elim_axes; ++b) digit[b] = 0;
    for (std::int64_t e = 0; e < elim_size; ++e) {
      double s = 0.0;
      for (int j = 0; j < inputs; ++j) s += data[j][offset[j]];
      visit(e, s);
      for (int b = elim_axes - 1; b >= 0; --b) {
        for (int j = 0; j < inputs; ++j) offset[j] += elim_stride[j][b];
        if (++digit[b] < elim_extent[b]) break;
        for (int j = 0; j < inputs; ++j) offset[j] -= elim_stride[j][b] * elim_extent[b];
        digit[b] = 0;
      }
    }
  }

  /// max_e s(e) and Σ_e exp(s(e) − max) at `base` (two passes; sum is 0 when max is ±inf).
  MYRIAD_HD void max_and_sum(const std::int64_t* base, double& max, double& sum) const {
    max = -INFINITY;
    sweep(base, [&](std::int64_t, double s) { max = s > max ? s : max; });
    sum = 0.0;
    if (max == -INFINITY || max == INFINITY) return;  // all zero weight, or an overflowed sum
    sweep(base, [&](std::int64_t, double s) { sum += myriad::exp(s - max); });
  }

  /// U[o] = LSE_E Σ_j T_j at output element o.
  MYRIAD_HD double operator()(std::int64_t o) const {
    std::int64_t base[kMaxStepInputs];
    base_offsets(o, base);
    double max, sum;
    max_and_sum(base, max, sum);
    return sum > 0.0 ? max + myriad::log(sum) : max;
  }
};

/// Writes U into a contiguous row-major output, one element per call: the functor a Parallel
/// policy runs over the output's elements.
struct LogSumProductInto {
  LogSumProductElement element;
  double* out;
  MYRIAD_HD void operator()(std::int64_t o) const { out[o] = element(o); }
};

}  // namespace myriad
