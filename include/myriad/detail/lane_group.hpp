#pragma once
// The state of one group of W chains (or particles) in SIMD lanes as a lane kernel reads it:
// `vectors` vectors of [dim][W] values, then `scalars` rows of W values, 64-byte aligned so that
// each [W] row is one batch (detail/simd_lanes.hpp). The CPU backends load a group from their
// [chain][dim] arrays, call the kernel, and store it back; lane(v, l) is lane l of vector v as
// one chain's vector, for the per-chain bookkeeping the backends do in scalar code.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/lanes.hpp"

namespace myriad {

/// Throws unless (width, has_entry) is what a lane-kernel factory returns: width 0 and no entry
/// point (one chain at a time), or 1 … kMaxLaneWidth lanes and an entry point.
inline void check_lane_kernel(int width, bool has_entry) {
  MYRIAD_EXPECTS(width >= 0 && width <= kMaxLaneWidth && (width == 0) != has_entry,
                 "lane kernel of width ", width, " is not one a kernel factory returns");
}

template <class T>
class LaneGroup {
 public:
  LaneGroup(int dim, int width, int vectors, int scalars)
      : dim_(dim),
        width_(width),
        vectors_(vectors),
        data_(static_cast<T*>(
            ::operator new[](sizeof(T) * static_cast<std::size_t>(vectors * dim + scalars) *
                                 static_cast<std::size_t>(width),
                             std::align_val_t{64}))) {}

  T* data() { return data_.get(); }
  int width() const { return width_; }

  /// Lane l of vector v as one chain's vector (element d at data[(v · dim + d) · W + l]).
  ChainVector<T> lane(int v, int l) {
    return {data_.get() + static_cast<std::int64_t>(v) * dim_ * width_ + l, width_, dim_};
  }

  /// Lane l of scalar row k.
  T& scalar(int k, int l) {
    return data_.get()[(static_cast<std::int64_t>(vectors_) * dim_ + k) * width_ + l];
  }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };

  int dim_, width_, vectors_;
  std::unique_ptr<T[], Free> data_;
};

}  // namespace myriad
