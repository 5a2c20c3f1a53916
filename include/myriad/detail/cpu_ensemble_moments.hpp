#pragma once
// The moments and covariance of mcmc/ensemble_moments.hpp on the host: two passes (mean, then
// deviations) accumulated in double, one OpenMP thread per dimension (per row of the
// covariance). The CUDA backend's reductions (kernels/hmc_kernels.cuh,
// kernels/ensemble_covariance.cuh) divide and sum in the same way, in another order.

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/mcmc/ensemble_moments.hpp"

namespace myriad {

/// The two passes on the host, one OpenMP thread per dimension.
template <class T>
void ensemble_moments_cpu(const EnsembleView<const T>& positions, EnsembleMoments& out) {
  const int dim = positions.dim;
  const std::int64_t chains = positions.chains;
  out.mean.assign(dim, 0.0);
  out.m2.assign(dim, 0.0);
  out.count = chains;
#pragma omp parallel for schedule(static)
  for (int d = 0; d < dim; ++d) {
    double sum = 0;
    for (std::int64_t c = 0; c < chains; ++c) sum += positions(d, c);
    const double mean = sum / static_cast<double>(chains);
    double m2 = 0;
    for (std::int64_t c = 0; c < chains; ++c) {
      const double dev = positions(d, c) - mean;
      m2 += dev * dev;
    }
    out.mean[d] = mean;
    out.m2[d] = m2;
  }
}

/// The mean and centred cross-products of EnsembleCovariance on the host: the mean as above,
/// then each entry i ≥ j summed over the chains in order (the same sums on any thread count),
/// one OpenMP task per row i.
template <class T>
void ensemble_covariance_cpu(const EnsembleView<const T>& positions, EnsembleCovariance& out) {
  const int dim = positions.dim;
  const std::int64_t chains = positions.chains;
  out.mean.assign(dim, 0.0);
  out.scatter.assign(static_cast<std::size_t>(dim) * dim, 0.0);
  out.count = chains;
#pragma omp parallel for schedule(static)
  for (int d = 0; d < dim; ++d) {
    double sum = 0;
    for (std::int64_t c = 0; c < chains; ++c) sum += positions(d, c);
    out.mean[d] = sum / static_cast<double>(chains);
  }
  // Row i costs i + 1 entries: dynamic scheduling balances the triangle.
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < dim; ++i) {
    for (int j = 0; j <= i; ++j) {
      double sum = 0;
      for (std::int64_t c = 0; c < chains; ++c)
        sum += (positions(i, c) - out.mean[i]) * (positions(j, c) - out.mean[j]);
      out.scatter[static_cast<std::size_t>(i) * dim + j] = sum;
      out.scatter[static_cast<std::size_t>(j) * dim + i] = sum;
    }
  }
}

}  // namespace myriad
