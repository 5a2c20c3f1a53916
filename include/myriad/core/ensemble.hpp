#pragma once
// Structure-of-arrays ensemble state (DESIGN.md, rule 3). An ensemble of `chains` vectors of
// length `dim` is stored [dim][chain] with the chain index fastest, so that one thread per chain
// reads consecutive addresses across a warp. Kernels and per-chain functions receive trivially
// copyable views; owning buffers live on the host (backend/memory.hpp).

#include <cstdint>

#include "myriad/core/hd.hpp"

namespace myriad {

/// One chain's vector inside an SoA ensemble: element i lives at data[i * stride].
template <class T>
struct ChainVector {
  T* data;
  std::int64_t stride;
  int size;

  MYRIAD_HD T& operator[](int i) const { return data[static_cast<std::int64_t>(i) * stride]; }
};

/// A [dim][chain] array of values.
template <class T>
struct EnsembleView {
  T* data = nullptr;
  std::int64_t chains = 0;
  int dim = 0;
  std::int64_t stride = 0;  ///< distance between consecutive dimensions (>= chains)

  MYRIAD_HD T& operator()(int d, std::int64_t chain) const {
    return data[static_cast<std::int64_t>(d) * stride + chain];
  }
  MYRIAD_HD ChainVector<T> chain(std::int64_t c) const { return {data + c, stride, dim}; }
  MYRIAD_HD std::int64_t size() const { return static_cast<std::int64_t>(dim) * stride; }
};

/// A plain contiguous vector view (host scratch, per-thread arrays, tests).
template <class T>
struct DenseVector {
  T* data;
  int size;
  MYRIAD_HD T& operator[](int i) const { return data[i]; }
};

}  // namespace myriad
