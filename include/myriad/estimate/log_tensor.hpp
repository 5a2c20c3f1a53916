#pragma once
// A dense log-space tensor over named index variables: the log-factor tensors ℓ_i, λ_x of the
// massively parallel importance-sampling estimator and the messages of its contraction
// (mpis.md §3.1–§3.2). Each axis is an index variable, named by a non-negative int id (one per
// latent instance's K-dim, or a plate dim) with its extent (K, or the plate size). Values are
// log weights in double; −inf is a zero weight. Storage is row-major: the last variable is
// fastest.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad {

/// Largest number of elements a LogTensor may hold (2^32 doubles = 32 GiB): a guard against a
/// mistaken extent product, checked before anything is allocated.
inline constexpr std::int64_t kMaxLogTensorSize = std::int64_t{1} << 32;

/// Product of extents, or throws when it exceeds kMaxLogTensorSize (`what` names the caller).
inline std::int64_t checked_index_space_size(const std::vector<std::int64_t>& extents,
                                             const char* what) {
  std::int64_t size = 1;
  for (std::int64_t extent : extents) {
    MYRIAD_EXPECTS(extent >= 1, what, ": every extent must be at least 1, got ", extent);
    MYRIAD_EXPECTS(size <= kMaxLogTensorSize / extent, what, ": index space too large (more than ",
                   kMaxLogTensorSize, " elements)");
    size *= extent;
  }
  return size;
}

/// Axis of variable `var` among a tensor's variables (one per axis, in axis order), or −1 when
/// the tensor does not carry it.
inline int axis_of_variable(const std::vector<int>& vars, int var) {
  for (int a = 0; a < static_cast<int>(vars.size()); ++a)
    if (vars[a] == var) return a;
  return -1;
}

/// A non-owning strided view of log values over named variables, as LogTensor's axes: the host
/// metadata of a tensor whose values may live on the host or on a device (only `data` is read
/// there, never on the host by the functions that take views). Strides are in elements; a
/// stride of 0 repeats a value along an axis.
struct LogTensorView {
  const double* data = nullptr;
  std::vector<int> vars;
  std::vector<std::int64_t> extents;
  std::vector<std::int64_t> strides;

  int rank() const { return static_cast<int>(vars.size()); }
  /// Axis of `var`, or −1.
  int axis_of(int var) const { return axis_of_variable(vars, var); }
  bool has_var(int var) const { return axis_of(var) >= 0; }
  /// Stride of `var`, 0 when the view does not carry it (it broadcasts).
  std::int64_t stride_of(int var) const {
    const int a = axis_of(var);
    return a < 0 ? 0 : strides[a];
  }
  /// Extent of `var`; throws when the view does not carry it.
  std::int64_t extent_of(int var) const {
    const int a = axis_of(var);
    MYRIAD_EXPECTS(a >= 0, "LogTensorView: no variable ", var);
    return extents[a];
  }
  /// Elements start, start + step, …, start + (count − 1)·step of `var`.
  LogTensorView slice(int var, std::int64_t start, std::int64_t step, std::int64_t count) const {
    const int a = axis_of(var);
    MYRIAD_EXPECTS(a >= 0, "LogTensorView::slice: no variable ", var);
    MYRIAD_EXPECTS(count >= 1 && start >= 0 && step >= 1 && start + (count - 1) * step < extents[a],
                   "LogTensorView::slice: elements ", start, " + ", step, "·i, i < ", count,
                   " of variable ", var, " are outside [0, ", extents[a], ")");
    LogTensorView out = *this;
    out.data = data + start * strides[a];
    out.extents[a] = count;
    out.strides[a] = strides[a] * step;
    return out;
  }
  /// The same values with variable `from` called `to` (which it must not carry already).
  LogTensorView renamed(int from, int to) const {
    const int a = axis_of(from);
    MYRIAD_EXPECTS(a >= 0, "LogTensorView::renamed: no variable ", from);
    MYRIAD_EXPECTS(from == to || !has_var(to), "LogTensorView::renamed: variable ", to,
                   " is there already");
    LogTensorView out = *this;
    out.vars[a] = to;
    return out;
  }
};

/// Row-major strides of a contiguous tensor with these extents (last axis fastest).
inline std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& extents) {
  std::vector<std::int64_t> strides(extents.size());
  std::int64_t stride = 1;
  for (std::size_t a = extents.size(); a-- > 0;) {
    strides[a] = stride;
    stride *= extents[a];
  }
  return strides;
}

class LogTensor {
 public:
  /// A scalar (rank 0) log value 0, i.e. weight 1.
  LogTensor() : values_(1, 0.0) {}

  /// A tensor over `vars` with the given extents, every entry `fill`.
  LogTensor(std::vector<int> vars, std::vector<std::int64_t> extents, double fill = 0.0)
      : vars_(std::move(vars)), extents_(std::move(extents)) {
    values_.assign(static_cast<std::size_t>(validate_shape()), fill);
  }

  /// A tensor over `vars` with the given extents and row-major log values.
  LogTensor(std::vector<int> vars, std::vector<std::int64_t> extents, std::vector<double> values)
      : vars_(std::move(vars)), extents_(std::move(extents)), values_(std::move(values)) {
    const std::int64_t size = validate_shape();
    MYRIAD_EXPECTS(static_cast<std::int64_t>(values_.size()) == size, "LogTensor: extents give ",
                   size, " elements but ", values_.size(), " values were given");
  }

  static LogTensor scalar(double value) { return LogTensor({}, {}, std::vector<double>{value}); }

  /// A strided view of this tensor's values (valid while the tensor lives and keeps its size).
  LogTensorView view() const {
    return {values_.data(), vars_, extents_, row_major_strides(extents_)};
  }

  const std::vector<int>& vars() const { return vars_; }
  const std::vector<std::int64_t>& extents() const { return extents_; }
  int rank() const { return static_cast<int>(vars_.size()); }
  std::int64_t size() const { return static_cast<std::int64_t>(values_.size()); }
  const std::vector<double>& values() const { return values_; }
  double* data() { return values_.data(); }
  const double* data() const { return values_.data(); }

  /// Axis of variable `var`, or −1 when the tensor does not carry it.
  int axis_of(int var) const { return axis_of_variable(vars_, var); }
  bool has_var(int var) const { return axis_of(var) >= 0; }

  /// Row-major stride of variable `var` (elements), or 0 when the tensor does not carry it, so
  /// that a tensor broadcasts over variables it lacks.
  std::int64_t stride_of(int var) const {
    std::int64_t stride = 1;
    for (int a = rank() - 1; a >= 0; --a) {
      if (vars_[a] == var) return stride;
      stride *= extents_[a];
    }
    return 0;
  }

  /// Element at `index`, one entry per axis in vars() order.
  double& at(const std::vector<std::int64_t>& index) { return values_[offset_of(index)]; }
  double at(const std::vector<std::int64_t>& index) const { return values_[offset_of(index)]; }

  /// Element at a full assignment: `assignment[v]` is the index of variable v, for every v in
  /// vars() (entries of other variables are ignored, so one assignment serves all factors).
  double at_assignment(const std::vector<std::int64_t>& assignment) const {
    std::int64_t offset = 0;
    for (int a = 0; a < rank(); ++a) {
      const int var = vars_[a];
      MYRIAD_EXPECTS(var < static_cast<int>(assignment.size()),
                     "LogTensor::at_assignment: no index for variable ", var, " (assignment has ",
                     assignment.size(), " entries)");
      offset = offset * extents_[a] + checked_index(a, assignment[var]);
    }
    return values_[static_cast<std::size_t>(offset)];
  }

  /// The same values with the axes reordered to `order` (a permutation of vars()).
  LogTensor permuted(const std::vector<int>& order) const {
    MYRIAD_EXPECTS(order.size() == vars_.size(), "LogTensor::permuted: order has ", order.size(),
                   " variables, the tensor ", vars_.size());
    std::vector<std::int64_t> extents(order.size()), source_strides(order.size());
    for (std::size_t a = 0; a < order.size(); ++a) {
      const int axis = axis_of(order[a]);
      MYRIAD_EXPECTS(axis >= 0, "LogTensor::permuted: variable ", order[a],
                     " is not in the tensor");
      extents[a] = extents_[axis];
      source_strides[a] = stride_of(order[a]);
    }
    LogTensor out(order, extents);  // validates that `order` has no duplicates
    std::vector<std::int64_t> index(order.size(), 0);
    std::int64_t source = 0;
    for (std::int64_t i = 0; i < out.size(); ++i) {
      out.values_[static_cast<std::size_t>(i)] = values_[static_cast<std::size_t>(source)];
      for (int a = out.rank() - 1; a >= 0; --a) {  // odometer, last axis fastest
        source += source_strides[a];
        if (++index[a] < extents[a]) break;
        source -= source_strides[a] * extents[a];
        index[a] = 0;
      }
    }
    return out;
  }

 private:
  std::int64_t validate_shape() const {
    MYRIAD_EXPECTS(vars_.size() == extents_.size(), "LogTensor: ", vars_.size(), " variables but ",
                   extents_.size(), " extents");
    for (std::size_t a = 0; a < vars_.size(); ++a) {
      MYRIAD_EXPECTS(vars_[a] >= 0, "LogTensor: variable ids must be non-negative, got ", vars_[a]);
      for (std::size_t b = 0; b < a; ++b)
        MYRIAD_EXPECTS(vars_[a] != vars_[b], "LogTensor: variable ", vars_[a], " appears twice");
    }
    return checked_index_space_size(extents_, "LogTensor");
  }

  std::int64_t checked_index(int axis, std::int64_t i) const {
    MYRIAD_EXPECTS(i >= 0 && i < extents_[axis], "LogTensor: index ", i, " of variable ",
                   vars_[axis], " is outside [0, ", extents_[axis], ")");
    return i;
  }

  std::size_t offset_of(const std::vector<std::int64_t>& index) const {
    MYRIAD_EXPECTS(index.size() == vars_.size(), "LogTensor::at: ", index.size(),
                   " indices for a rank-", vars_.size(), " tensor");
    std::int64_t offset = 0;
    for (int a = 0; a < rank(); ++a) offset = offset * extents_[a] + checked_index(a, index[a]);
    return static_cast<std::size_t>(offset);
  }

  std::vector<int> vars_;
  std::vector<std::int64_t> extents_;
  std::vector<double> values_;
};

}  // namespace myriad
