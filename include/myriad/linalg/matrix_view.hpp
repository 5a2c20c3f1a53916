#pragma once
// Views of per-chain matrices and per-chain scratch. A chain's workspace is a run of elements
// whose element e lives at base[e · stride]: stride 1 on the CPU ([chain][element] layout) and
// stride = padded chain count on the GPU ([element][chain], coalesced across a warp). Matrices
// carved out of it are row-major in the element index.

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"

namespace myriad {

/// A rows × cols matrix: element (i, j) at data[i · row_stride + j · col_stride].
template <class T>
struct MatrixView {
  T* data;
  int rows;
  int cols;
  std::int64_t row_stride;
  std::int64_t col_stride;

  MYRIAD_HD T& operator()(int i, int j) const {
    return data[static_cast<std::int64_t>(i) * row_stride + static_cast<std::int64_t>(j) * col_stride];
  }
  MYRIAD_HD ChainVector<T> row(int i) const {
    return {data + static_cast<std::int64_t>(i) * row_stride, col_stride, cols};
  }
  MYRIAD_HD ChainVector<T> column(int j) const {
    return {data + static_cast<std::int64_t>(j) * col_stride, row_stride, rows};
  }
  /// The same matrix, read-only.
  MYRIAD_HD MatrixView<const T> as_const() const {
    return {data, rows, cols, row_stride, col_stride};
  }
  /// Its transpose, as a view of the same storage.
  MYRIAD_HD MatrixView transposed() const { return {data, cols, rows, col_stride, row_stride}; }
};

/// A contiguous row-major matrix (host scratch, tests).
template <class T>
MYRIAD_HD MatrixView<T> dense_matrix(T* data, int rows, int cols) {
  return {data, rows, cols, cols, 1};
}

/// One chain's scratch: element e at base[e · stride].
template <class T>
struct ChainWorkspace {
  T* base;
  std::int64_t stride;

  MYRIAD_HD ChainVector<T> vector(std::int64_t offset, int n) const {
    return {base + offset * stride, stride, n};
  }
  MYRIAD_HD MatrixView<T> matrix(std::int64_t offset, int rows, int cols) const {
    return {base + offset * stride, rows, cols, static_cast<std::int64_t>(cols) * stride, stride};
  }
  MYRIAD_HD T& operator[](std::int64_t e) const { return base[e * stride]; }
};

}  // namespace myriad
