#pragma once
// Structure-of-arrays ensemble state (DESIGN.md, rule 3). An ensemble of `chains` vectors of
// length `dim` is stored [dim][chain] with the chain index fastest, so that one thread per chain
// reads consecutive addresses across a warp. Kernels and per-chain functions receive trivially
// copyable views; owning buffers live on the host (core/device_memory.hpp).

#include <cstddef>
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

/// Where a backend keeps its ensemble arrays: chain-major ([chain][dim], each chain's row padded
/// to a multiple of dim_multiple: the CPU's, and a GPU's warp-per-chain mappings) or dim-major
/// with the chain count padded ([dim][padded chain]: a GPU's thread per chain). One description
/// lets the two backends of a sampler size and view the same arrays with one function (the
/// *EnsembleArrays of detail/*_bodies.hpp), so that only the layout differs between them.
struct EnsembleLayout {
  std::int64_t chains = 0;
  /// Dim-major: the distance between consecutive dimensions (chains rounded up); 0: chain-major.
  std::int64_t padded_chains = 0;
  /// Chain-major: each chain's row is its dimension rounded up to a multiple of this.
  int dim_multiple = 1;

  static EnsembleLayout chain_major(std::int64_t chains, int dim_multiple = 1) {
    return {chains, 0, dim_multiple};
  }
  /// [dim][chain] with the chain count rounded up to a multiple of `multiple` (32 on a GPU: every
  /// dimension's row starts a new 128-byte line).
  static EnsembleLayout dim_major(std::int64_t chains, std::int64_t multiple) {
    return {chains, (chains + multiple - 1) / multiple * multiple, 1};
  }

  bool is_chain_major() const { return padded_chains == 0; }
  /// Chain-major: the length of a chain's row of `dim` values.
  int row(int dim) const { return (dim + dim_multiple - 1) / dim_multiple * dim_multiple; }
  /// Values in an array of `dim` per chain.
  std::size_t values(int dim) const {
    if (is_chain_major())
      return static_cast<std::size_t>(row(dim)) * static_cast<std::size_t>(chains);
    return static_cast<std::size_t>(dim) * static_cast<std::size_t>(padded_chains);
  }
  /// Chains' worth of storage in a row of one dimension: the padded count when dim-major.
  std::int64_t columns() const { return is_chain_major() ? chains : padded_chains; }
  /// The per-chain length of an unpadded array of `values` values (scratch sized when used).
  int dim_of(std::size_t values) const {
    return static_cast<int>(values / static_cast<std::size_t>(columns()));
  }
  template <class T>
  EnsembleView<T> view(T* data, int dim) const {
    if (is_chain_major()) return {data, chains, dim, 1, row(dim)};
    return {data, chains, dim, padded_chains, 1};
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
