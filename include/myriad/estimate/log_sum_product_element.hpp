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
  /// The inputs that vary over the eliminated assignments; the others (stride 0 along every
  /// eliminated axis) add the same value to every term and are summed once per element.
  int varying = 0;
  int varying_input[kMaxStepInputs] = {};
  int constants = 0;
  int constant_input[kMaxStepInputs] = {};
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
    sweep_range(base, 0, elim_size, visit);
  }

  /// sweep() over the eliminated assignments e in [first, last) only.
  template <class Visit>
  MYRIAD_HD void sweep_range(const std::int64_t* base, std::int64_t first, std::int64_t last,
                             Visit&& visit) const {
    std::int64_t offset[kMaxStepInputs];
    std::int64_t digit[kMaxStepAxes];
    // Inputs constant over E, summed once (a −inf among them makes every term −inf).
    double constant = 0.0;
    for (int c = 0; c < constants; ++c)
      constant += data[constant_input[c]][base[constant_input[c]]];
    for (int v = 0; v < varying; ++v) offset[v] = base[varying_input[v]];
    // The odometer's reading at `first`.
    std::int64_t rest = first;
    for (int b = elim_axes - 1; b >= 0; --b) {
      digit[b] = rest % elim_extent[b];
      rest /= elim_extent[b];
      for (int v = 0; v < varying; ++v) offset[v] += digit[b] * elim_stride[varying_input[v]][b];
    }
    for (std::int64_t e = first; e < last; ++e) {
      double s = constant;
      for (int v = 0; v < varying; ++v) s += data[varying_input[v]][offset[v]];
      visit(e, s);
      for (int b = elim_axes - 1; b >= 0; --b) {
        for (int v = 0; v < varying; ++v) offset[v] += elim_stride[varying_input[v]][b];
        if (++digit[b] < elim_extent[b]) break;
        for (int v = 0; v < varying; ++v)
          offset[v] -= elim_stride[varying_input[v]][b] * elim_extent[b];
        digit[b] = 0;
      }
    }
  }

  /// max_e s(e) and Σ_e exp(s(e) − max) at `base` (two passes; sum is 0 when max is ±inf).
  MYRIAD_HD void max_and_sum(const std::int64_t* base, double& max, double& sum) const {
    max_and_sum_range(base, 0, elim_size, max, sum);
  }

  /// max_and_sum over the eliminated assignments in [first, last) only (a split reduction's part).
  MYRIAD_HD void max_and_sum_range(const std::int64_t* base, std::int64_t first, std::int64_t last,
                                   double& max, double& sum) const {
    max = -INFINITY;
    sweep_range(base, first, last, [&](std::int64_t, double s) { max = s > max ? s : max; });
    sum = 0.0;
    if (max == -INFINITY || max == INFINITY) return;  // all zero weight, or an overflowed sum
    sweep_range(base, first, last, [&](std::int64_t, double s) { sum += myriad::exp(s - max); });
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

/// One step as a parallel policy runs it: U[o] for o in [0, out_size), row-major over the
/// element's kept axes, written at out + Σ_a coord_a · out_stride[a] (a slice of a larger tensor
/// or a contiguous output). Policies run it through run_log_sum_product(policy, step), which a
/// policy may specialise (the CUDA policy sends GEMM-shaped steps to dedicated kernels).
struct LogSumProductStep {
  LogSumProductElement element;
  double* out = nullptr;
  std::int64_t out_stride[kMaxStepAxes] = {};
  std::int64_t out_size = 0;
  MYRIAD_HD void operator()(std::int64_t o) const { out[out_offset(o)] = element(o); }

  /// Where output element o goes: Σ_a coord_a · out_stride[a].
  MYRIAD_HD std::int64_t out_offset(std::int64_t o) const {
    std::int64_t offset = 0, rest = o;
    for (int a = element.out_axes - 1; a >= 0; --a) {
      offset += (rest % element.out_extent[a]) * out_stride[a];
      rest /= element.out_extent[a];
    }
    return offset;
  }
};

/// Runs a step on a parallel policy: the generic path, one output element per index. A policy
/// may provide a non-template overload (kernels/cuda_contraction.cuh does) that overload
/// resolution prefers.
template <class Parallel>
void run_log_sum_product(const Parallel& parallel, const LogSumProductStep& step) {
  parallel.for_each(step.out_size, step, 2 * step.element.elim_size);
}

}  // namespace myriad
