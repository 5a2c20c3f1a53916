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
  /// (and then holds no device copy, so a later call tries again). Const: the device copy is a
  /// cache of the host values, made when first asked for.
  const T* device_data() const {
    if (device_.size() != host_.size()) device_ = DeviceArray<T>(host_);
    return device_.data();
  }

 private:
  std::vector<T> host_;
  mutable DeviceArray<T> device_;
};

/// Which copy of its MirroredArrays a data class's model view points at (MirroredViews).
struct HostCopy {
  template <class T>
  const T* operator()(const MirroredArray<T>& array) const {
    return array.host_data();
  }
};
struct DeviceCopy {
  template <class T>
  const T* operator()(const MirroredArray<T>& array) const {
    return array.device_data();
  }
};

/// host_model() and device_model() of a data class (Derived, by CRTP) whose
/// `viewing(copy)` builds its trivially copyable model view from copy(array) of each of its
/// MirroredArrays: one definition for every built-in problem.
template <class Derived>
class MirroredViews {
 public:
  /// A model viewing the host copies (the CPU backends); valid while the data lives.
  auto host_model() const { return self().viewing(HostCopy{}); }
  /// A model viewing the device copies, uploaded on the first call. Throws
  /// myriad::unavailable_error in a build without CUDA, myriad::cuda_error if an upload fails.
  /// Valid while the data lives.
  auto device_model() const { return self().viewing(DeviceCopy{}); }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace myriad
