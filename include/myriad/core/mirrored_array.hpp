#pragma once
// A problem's data on the host with a device copy made on first use. Built-in problems (the
// *Data and *Problem classes of models/) own their arrays this way and hand out trivially
// copyable model views: host_model() points at the host copies for the CPU backends,
// device_model() at the device copies for the CUDA backends, so a CPU-only run never touches a
// device and a GPU run uploads each array once.

#include <cstddef>
#include <utility>
#include <vector>

#include "myriad/core/device_memory.hpp"

namespace myriad {

template <class T>
class MirroredArray {
 public:
  MirroredArray() = default;
  explicit MirroredArray(std::vector<T> host) : host_(std::move(host)) {}
  MirroredArray(const MirroredArray&) = delete;
  MirroredArray& operator=(const MirroredArray&) = delete;
  MirroredArray(MirroredArray&&) noexcept = default;
  MirroredArray& operator=(MirroredArray&&) noexcept = default;

  /// Replaces the values; a device copy of the old ones is dropped.
  MirroredArray& operator=(std::vector<T> host) {
    host_ = std::move(host);
    device_ = DeviceArray<T>();
    return *this;
  }

  const std::vector<T>& host() const { return host_; }
  const T* host_data() const { return host_.data(); }
  std::size_t size() const { return host_.size(); }
  const T& operator[](std::size_t i) const { return host_[i]; }

  /// The device copy, uploaded on the first call; null for an empty array. Throws
  /// myriad::unavailable_error in a build without CUDA, myriad::cuda_error if the upload fails
  /// (and then holds no device copy, so a later call tries again).
  const T* device_data() {
    if (device_.size() != host_.size()) device_ = DeviceArray<T>(host_);
    return device_.data();
  }

 private:
  std::vector<T> host_;
  DeviceArray<T> device_;
};

}  // namespace myriad
