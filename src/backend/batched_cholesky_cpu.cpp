// The CPU twin of the batched Cholesky tiers (linalg/batched_cholesky.hpp): OpenMP over the
// batch, each matrix factored or solved by the per-chain routines of linalg/cholesky.hpp and
// linalg/triangular.hpp on a column-major view. (The CUDA entry points are
// kernels/batched_cholesky.cu's, or the header's inline throwing definitions without CUDA.)

#include <cstdint>

#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::linalg {

namespace {

void check_batch_arguments(const void* data, int n, std::int64_t batch, const char* name) {
  MYRIAD_EXPECTS(n >= 1, name, ": the matrix size n must be at least 1, got ", n);
  MYRIAD_EXPECTS(batch >= 0, name, ": the batch size must not be negative, got ", batch);
  MYRIAD_EXPECTS(batch == 0 || data != nullptr, name, ": null data for a batch of ", batch);
}

}  // namespace

template <class T>
void batched_cholesky_cpu(T* matrices, int n, std::int64_t batch, int* info) {
  check_batch_arguments(matrices, n, batch, "batched_cholesky_cpu");
  MYRIAD_EXPECTS(batch == 0 || info != nullptr, "batched_cholesky_cpu: null info array");
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < batch; ++b) {
    info[b] = cholesky_in_place_info(batch_matrix(matrices, n, b));
  }
}

template <class T>
void batched_cholesky_solve_cpu(const T* factors, int n, std::int64_t batch, T* rhs,
                                CholeskySolve which) {
  check_batch_arguments(factors, n, batch, "batched_cholesky_solve_cpu");
  MYRIAD_EXPECTS(batch == 0 || rhs != nullptr, "batched_cholesky_solve_cpu: null right-hand sides");
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < batch; ++b) {
    const MatrixView<const T> l = batch_matrix(factors, n, b);
    T* x = rhs + b * n;
    if (which != CholeskySolve::backward) solve_lower(l, x);
    if (which != CholeskySolve::forward) solve_lower_transpose(l, x);
  }
}

template void batched_cholesky_cpu<float>(float*, int, std::int64_t, int*);
template void batched_cholesky_cpu<double>(double*, int, std::int64_t, int*);
template void batched_cholesky_solve_cpu<float>(const float*, int, std::int64_t, float*,
                                                CholeskySolve);
template void batched_cholesky_solve_cpu<double>(const double*, int, std::int64_t, double*,
                                                 CholeskySolve);

}  // namespace myriad::linalg
