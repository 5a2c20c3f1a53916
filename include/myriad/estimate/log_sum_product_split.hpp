#pragma once
// A log-sum-product step with its reduction split into parts (split-K), for steps whose outputs
// are too few to fill a GPU: a generic step's outputs are one thread each, so a step with a
// handful of outputs and a long reduction runs on a few threads for as long as the whole
// reduction takes (bench/results/gpu-2026-11-26-h200.md: one chimpanzees step of 178 ms on a
// single block). Here each output's E eliminated assignments are cut into P contiguous parts;
// one pass computes every (output, part)'s max and shifted sum (the element's own two passes
// over its part), and a second combines each output's parts:
//   M = max_p m_p,   S = Σ_p s_p · exp(m_p − M),   U = M + log S   (S > 0; else U = M),
// which is the element's U with the terms grouped by part. Parts whose max is −inf add nothing;
// an M of +inf gives U = +inf, and a NaN term makes its part's sum NaN and U = M, as in the
// element (a part of −inf and NaN terms only reports a NaN sum for that). Against the element: the
// same terms, summed in P groups each rescaled once, so the results differ only by rounding, within
// the bound of the tiled path's per-chunk rescaling (tests/unit/test_log_semiring_gemm.cpp).
//
// Host and device code over a parallel policy (backend/cpu_parallel.hpp, kernels/
// cuda_parallel.cuh): the CUDA policy uses it where choose_log_sum_product_split says so.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

/// How a step's reduction is split: `parts` parts of `part_terms` assignments (the last may be
/// shorter). parts = 1: not split.
struct LogSumProductSplit {
  std::int64_t parts = 1;
  std::int64_t part_terms = 0;
};

/// Fewest terms in one part: a part is one thread's work, and shorter parts would spend more on
/// the combine than they save.
inline constexpr std::int64_t kSplitMinPartTerms = 256;
/// Most (output, part) pairs: 16 bytes of scratch each, 4 MiB in all (kSplitScratchBytes), which
/// the MP IS memory plan sets aside on the GPU.
inline constexpr std::int64_t kSplitMaxPairs = std::int64_t{1} << 18;
inline constexpr std::int64_t kSplitScratchBytes = kSplitMaxPairs * 2 * sizeof(double);

/// The split of a step with `outputs` outputs and `terms` eliminated assignments on a device
/// with `thread_slots` resident threads: none when the outputs alone fill the device or a part
/// would hold fewer than kSplitMinPartTerms terms; else as many parts as bring the (output, part)
/// pairs to the device's thread slots, at most kSplitMaxPairs pairs.
MYRIAD_HD inline LogSumProductSplit choose_log_sum_product_split(std::int64_t outputs,
                                                                 std::int64_t terms,
                                                                 std::int64_t thread_slots) {
  LogSumProductSplit split;
  split.part_terms = terms;
  if (outputs <= 0 || outputs >= thread_slots || terms < 2 * kSplitMinPartTerms) return split;
  std::int64_t parts = (thread_slots + outputs - 1) / outputs;
  const std::int64_t by_length = terms / kSplitMinPartTerms;
  const std::int64_t by_scratch = kSplitMaxPairs / outputs;
  if (parts > by_length) parts = by_length;
  if (parts > by_scratch) parts = by_scratch;
  if (parts < 2) return split;
  split.part_terms = (terms + parts - 1) / parts;
  split.parts = (terms + split.part_terms - 1) / split.part_terms;  // no empty part
  return split;
}

/// Pass 1: pair i = o · parts + p → its part's max and shifted sum.
struct LogSumProductParts {
  LogSumProductElement element;
  LogSumProductSplit split;
  double* part_max;
  double* part_sum;

  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t o = i / split.parts, p = i % split.parts;
    std::int64_t base[kMaxStepInputs];
    element.base_offsets(o, base);
    const std::int64_t first = p * split.part_terms;
    const std::int64_t last =
        first + split.part_terms < element.elim_size ? first + split.part_terms : element.elim_size;
    double max, sum;
    element.max_and_sum_range(base, first, last, max, sum);
    // A part of −inf and NaN terms only: the element would meet its NaN in the sum pass of a
    // finite overall max, so the part's sum carries it to the combine.
    if (max == -INFINITY)
      element.sweep_range(base, first, last, [&](std::int64_t, double t) {
        if (t != t) sum = t;
      });
    part_max[i] = max;
    part_sum[i] = sum;
  }
};

/// Pass 2: output o from its parts, written where the step writes it.
struct LogSumProductCombine {
  LogSumProductStep step;
  std::int64_t parts;
  const double* part_max;
  const double* part_sum;

  MYRIAD_HD void operator()(std::int64_t o) const {
    const double* m = part_max + o * parts;
    const double* s = part_sum + o * parts;
    double max = -INFINITY;
    for (std::int64_t p = 0; p < parts; ++p) max = m[p] > max ? m[p] : max;
    double sum = 0.0;
    if (max != -INFINITY && max != INFINITY) {
      // A part with no finite term adds its sum as is: 0, or NaN from a NaN term.
      for (std::int64_t p = 0; p < parts; ++p)
        sum += m[p] == -INFINITY ? s[p] : s[p] * myriad::exp(m[p] - max);
    }
    step.out[step.out_offset(o)] = sum > 0.0 ? max + myriad::log(sum) : max;
  }
};

/// Runs `step` split as `split` says on `parallel` (two passes and 16 bytes of scratch per pair,
/// freed when the passes are done, in the policy's order).
template <class Parallel>
void run_log_sum_product_split(const Parallel& parallel, const LogSumProductStep& step,
                               const LogSumProductSplit& split) {
  const std::int64_t pairs = step.out_size * split.parts;
  auto part_max = parallel.template allocate<double>(pairs);
  auto part_sum = parallel.template allocate<double>(pairs);
  parallel.for_each(pairs,
                    LogSumProductParts{step.element, split, part_max.data(), part_sum.data()},
                    2 * split.part_terms);
  parallel.for_each(step.out_size,
                    LogSumProductCombine{step, split.parts, part_max.data(), part_sum.data()},
                    split.parts);
}

}  // namespace myriad
