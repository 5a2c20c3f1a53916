#pragma once
// Structure-of-arrays ensemble state (DESIGN.md, rule 3). An ensemble of `chains` vectors of
// length `dim` is stored [dim][chain] with the chain index fastest, so that one thread per chain
// reads consecutive addresses across a warp. Kernels and per-chain functions receive trivially
// copyable views; owning buffers live on the host (core/device_memory.hpp).

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

/// An ensemble of `chains` vectors of length `dim`: element d of chain c lives at
/// data[d * stride + c * chain_stride]. The GPU layout is [dim][chain] (chain_stride = 1,
/// stride ≥ chains: coalesced across a warp); the CPU backend uses [chain][dim] (stride = 1,
/// chain_stride = dim: one chain's vector in consecutive cache lines). Per-chain code sees
/// only ChainVector and works with either.
template <class T>
struct EnsembleView {
  T* data = nullptr;
  std::int64_t chains = 0;
  int dim = 0;
  std::int64_t stride = 0;        ///< distance between consecutive dimensions of one chain
  std::int64_t chain_stride = 1;  ///< distance between the same dimension of adjacent chains

  MYRIAD_HD T& operator()(int d, std::int64_t chain) const {
    return data[static_cast<std::int64_t>(d) * stride + chain * chain_stride];
  }
  MYRIAD_HD ChainVector<T> chain(std::int64_t c) const {
    return {data + c * chain_stride, stride, dim};
  }
};

/// to[i] = from[i] for i < to.size.
template <class T>
MYRIAD_HD void copy_vector(const ChainVector<T>& to, const ChainVector<T>& from) {
  for (int i = 0; i < to.size; ++i) to[i] = from[i];
}

/// A plain contiguous vector view (host scratch, per-thread arrays, tests).
template <class T>
struct DenseVector {
  T* data;
  int size;
  MYRIAD_HD T& operator[](int i) const { return data[i]; }
};

}  // namespace myriad
