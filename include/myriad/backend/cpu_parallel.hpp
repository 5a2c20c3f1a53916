#pragma once
// The CPU "parallel policy" of the element-wise engines (MP IS): arrays in host memory and
// for_each as an OpenMP loop. Its CUDA twin (kernels/cuda_parallel.cuh) has the same members,
// with device arrays and a grid-stride kernel, so an engine written against the policy runs the
// same per-element functors on either backend (DESIGN.md rule 1).
//
//   Policy::Array<T>            owning, movable array of n values where the policy computes
//   policy.allocate<T>(n)       (uninitialised)
//   policy.for_each(n, f)       f(i) for i in [0, n), any order, in parallel
//   policy.count_if(n, f)       number of i with f(i) true
//   policy.upload / download    host ↔ policy memory
//   policy.synchronize()        wait for the policy's work (a no-op on the CPU)
//   policy.memory()             bytes held now and at most, over the policy's arrays
//
// Its log-sum-product steps (MP IS's contractions) run in SIMD lanes of output elements
// (detail/log_sum_product_lane_kernel.hpp) unless the policy is made with simd_lanes = false.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

/// Bytes held by a policy's arrays: now and the peak since construction.
struct MemoryTracker {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  void allocate(std::int64_t bytes) {
    current += bytes;
    if (current > peak) peak = current;
  }
  void release(std::int64_t bytes) { current -= bytes; }
};

/// An owning host array whose bytes are counted by a MemoryTracker.
template <class T>
class HostArray {
 public:
  HostArray() = default;
  HostArray(std::int64_t n, std::shared_ptr<MemoryTracker> tracker)
      : values_(static_cast<std::size_t>(n)), tracker_(std::move(tracker)) {
    if (tracker_) tracker_->allocate(bytes());
  }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  HostArray(HostArray&& o) noexcept
      : values_(std::move(o.values_)), tracker_(std::move(o.tracker_)) {
    o.values_.clear();
  }
  HostArray& operator=(HostArray&& o) noexcept {
    if (this != &o) {
      release();
      values_ = std::move(o.values_);
      tracker_ = std::move(o.tracker_);
      o.values_.clear();
    }
    return *this;
  }
  ~HostArray() { release(); }

  T* data() { return values_.data(); }
  const T* data() const { return values_.data(); }
  std::int64_t size() const { return static_cast<std::int64_t>(values_.size()); }
  bool empty() const { return values_.empty(); }

 private:
  std::int64_t bytes() const { return static_cast<std::int64_t>(values_.size() * sizeof(T)); }
  void release() {
    if (tracker_) tracker_->release(bytes());
    values_.clear();
    tracker_.reset();
  }
  std::vector<T> values_;
  std::shared_ptr<MemoryTracker> tracker_;
};

class CpuParallel {
 public:
  template <class T>
  using Array = HostArray<T>;

  /// simd_lanes: run log-sum-product steps in SIMD lanes where the library has them.
  explicit CpuParallel(bool simd_lanes = true)
      : tracker_(std::make_shared<MemoryTracker>()), simd_lanes_(simd_lanes) {}

  bool simd_lanes() const { return simd_lanes_; }

  template <class T>
  Array<T> allocate(std::int64_t n) const {
    MYRIAD_EXPECTS(n >= 0, "allocate: negative size ", n);
    return Array<T>(n, tracker_);
  }

  /// Below this much work (elements × work per element, in units of one cheap element) a loop
  /// stays serial: a parallel region's fork and barrier cost microseconds, and far more when a
  /// thread of the team is descheduled on a busy machine.
  static constexpr std::int64_t kParallelWork = std::int64_t{1} << 15;

  /// f(i) for i in [0, n); `work` is the cost of one element relative to a cheap one (e.g. the
  /// number of terms a contraction element sums), used only to decide whether to go parallel.
  template <class F>
  void for_each(std::int64_t n, const F& f, std::int64_t work = 1) const {
#pragma omp parallel for schedule(static) if (n > 1 && n * work >= kParallelWork)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }

  template <class F>
  std::int64_t count_if(std::int64_t n, const F& f) const {
    std::int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count) if (n >= kParallelWork)
    for (std::int64_t i = 0; i < n; ++i) count += f(i) ? 1 : 0;
    return count;
  }

  template <class T>
  void upload(Array<T>& destination, const T* source, std::int64_t n) const {
    if (n > 0) std::memcpy(destination.data(), source, static_cast<std::size_t>(n) * sizeof(T));
  }
  template <class T>
  void download(T* destination, const Array<T>& source, std::int64_t n) const {
    if (n > 0) std::memcpy(destination, source.data(), static_cast<std::size_t>(n) * sizeof(T));
  }
  template <class T>
  std::vector<T> download(const Array<T>& source) const {
    std::vector<T> out(static_cast<std::size_t>(source.size()));
    download(out.data(), source, source.size());
    return out;
  }
  void synchronize() const {}

  const MemoryTracker& memory() const { return *tracker_; }
  MemoryTracker& memory() { return *tracker_; }

 private:
  std::shared_ptr<MemoryTracker> tracker_;
  bool simd_lanes_ = true;
};

/// The CPU policy's log-sum-product steps (src/backend/cpu_parallel.cpp): in SIMD lanes of output
/// elements when policy.simd_lanes() and the library has lanes, the generic element otherwise.
/// Declared with the policy, so that every translation unit running an engine on CpuParallel
/// calls it rather than the generic template.
void run_log_sum_product(const CpuParallel& parallel, const LogSumProductStep& step);

}  // namespace myriad
