#pragma once
// A planned log-sum-product step made runnable: the plan's element with an output to write,
// for the tests and benchmarks that run single steps (tests/unit/test_log_semiring_gemm.cpp,
// tests/cuda/test_log_semiring_gemm.cpp, bench/bm_log_semiring_gemm.cpp). The MP IS engine
// does the same inside run_log_sum_product_plan (estimate/mpis_contraction.hpp).

#include <cstddef>

#include "myriad/estimate/log_contract.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"
#include "myriad/estimate/log_tensor.hpp"

namespace myriad::testing {

/// `plan`'s step writing output element 0 at destination.data and each output variable through
/// destination's stride for it (a slice or a permutation of a larger tensor's view).
inline LogSumProductStep log_sum_product_step(const LogSumProductPlan& plan,
                                              const LogTensorView& destination) {
  LogSumProductStep step;
  step.element = plan.element;
  step.out = const_cast<double*>(destination.data);
  step.out_size = plan.out_size;
  for (std::size_t a = 0; a < plan.out_vars.size(); ++a)
    step.out_stride[a] = destination.stride_of(plan.out_vars[a]);
  return step;
}

/// `plan`'s step writing a contiguous (row-major) output over the plan's variables at `out`.
inline LogSumProductStep contiguous_log_sum_product_step(const LogSumProductPlan& plan,
                                                         double* out) {
  return log_sum_product_step(plan, LogTensorView{out, plan.out_vars, plan.out_extents,
                                                  row_major_strides(plan.out_extents)});
}

}  // namespace myriad::testing
