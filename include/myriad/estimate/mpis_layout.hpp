#pragma once
// Where the arrays of the massively parallel importance-sampling engine (estimate/mpis_engine.hpp)
// are, under plate chunking (mpis.md §3.3, the reference code's `Split`): the subtree of a
// top-level plate is computed a window of its elements at a time, so a tensor that carries the
// chunked plate's dim holds the current window, and a window's instances of the plates under it
// are numbered from the window's first. Host metadata only.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

/// An array where a parallel policy computes (the interface: backend/cpu_parallel.hpp).
template <class Parallel, class T>
using PolicyArray = typename Parallel::template Array<T>;

/// The windows of a chunked plate: which operations form its subtree and which window is current.
class MpisWindows {
 public:
  /// No chunking.
  MpisWindows() = default;

  /// Throws myriad::invalid_argument unless `chunking` is inactive or valid for `s` and its plate
  /// has something to contract.
  MpisWindows(const PlatedStructure& s, const MpisPlan& plan, MpisChunking chunking)
      : chunking_(chunking) {
    validate_chunking(s, chunking_);
    if (!chunking_.active()) return;
    // The operations of the chunked plate's subtree are contiguous in the plan (post-order):
    // [first_op, sum_op], the last one the plate's own sum.
    const int plate = chunking_.plate;
    plate_size_ = s.plate_decl(plate).size;
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      const bool inside = s.encloses(plate, plan.ops[i].plate);
      if (inside && first_op_ < 0) first_op_ = static_cast<int>(i);
      if (plan.ops[i].plate == plate && (plan.ops[i].kind == MpisOpKind::plate_sum))
        sum_op_ = static_cast<int>(i);
    }
    MYRIAD_EXPECTS(first_op_ >= 0 && sum_op_ >= first_op_, "MP IS: the plate to chunk ('",
                   s.plate_decl(plate).name, "') has nothing to contract");
    for (int i = first_op_; i <= sum_op_; ++i)
      MYRIAD_EXPECTS(s.encloses(plate, plan.ops[static_cast<std::size_t>(i)].plate),
                     "MP IS: internal error: the chunked subtree's operations are not contiguous");
  }

  bool active() const { return chunking_.active(); }
  const MpisChunking& chunking() const { return chunking_; }
  int first_op() const { return first_op_; }  ///< first operation of the chunked subtree
  int sum_op() const { return sum_op_; }      ///< the chunked plate's sum
  std::int64_t count() const { return (plate_size_ + chunking_.size - 1) / chunking_.size; }

  /// Makes window w current: elements [offset(), offset() + size()) of the chunked plate.
  void select(std::int64_t w) {
    offset_ = w * chunking_.size;
    size_ = std::min(chunking_.size, plate_size_ - offset_);
  }
  std::int64_t offset() const { return offset_; }
  std::int64_t size() const { return size_; }

 private:
  MpisChunking chunking_;
  std::int64_t plate_size_ = 0;
  int first_op_ = -1;
  int sum_op_ = -1;
  std::int64_t offset_ = 0;
  std::int64_t size_ = 0;
};

/// The shapes of a plan's arrays while `windows` has its current window: what every part of the
/// engine reads to size and index them. A view of the engine's structure, plan and windows.
struct MpisLayout {
  const PlatedStructure& structure;
  const MpisPlan& plan;
  const MpisWindows& windows;

  std::int64_t runs() const { return plan.runs; }

  /// Whether tensor `id` lives in the chunked subtree (carries the chunked plate's dim).
  bool in_window(int id) const { return in_chunk(plan, windows.chunking(), id); }

  /// The chunked plate's variable, or −1 without chunking.
  int window_var() const {
    return windows.active() ? plan.plate_var[windows.chunking().plate] : -1;
  }

  /// Extents of tensor `id` now: the chunked plate's dim holds the current window.
  std::vector<std::int64_t> extents_of(int id) const {
    std::vector<std::int64_t> extents = plan.tensors[id].extents;
    if (in_window(id)) {
      const auto& vars = plan.tensors[id].vars;
      const auto a = std::find(vars.begin(), vars.end(), window_var()) - vars.begin();
      extents[static_cast<std::size_t>(a)] = windows.size();
    }
    return extents;
  }

  /// The global number of the current window's first instance of `plate`'s path (0 outside
  /// the chunked subtree): the chunked plate is outermost, so instances of a window are
  /// contiguous.
  std::int64_t window_base(int plate) const {
    if (!encloses_window(plate)) return 0;
    return windows.offset() * per_element(plate);
  }

  /// Instances of `plate`'s path in the current window.
  std::int64_t window_instances(int plate) const {
    if (!encloses_window(plate)) return structure.instances(plate);
    return windows.size() * per_element(plate);
  }

 private:
  bool encloses_window(int plate) const {
    return windows.active() && structure.encloses(windows.chunking().plate, plate);
  }
  /// Instances of `plate`'s path per element of the chunked plate.
  std::int64_t per_element(int plate) const {
    return structure.instances(plate) / structure.plate_decl(windows.chunking().plate).size;
  }
};

}  // namespace myriad
