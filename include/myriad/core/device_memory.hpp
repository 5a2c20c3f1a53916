#pragma once
// Owning device memory for host code that does not include CUDA headers. Model data (e.g. the
// design matrix of `logistic`) is uploaded once into a DeviceArray and models hold views of it.
// The functions are implemented in src/core/device_memory.cpp; in a build without CUDA they throw
// myriad::unavailable_error.

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace myriad {

/// cudaMalloc; throws myriad::cuda_error on failure, unavailable_error without CUDA.
void* device_allocate(std::size_t bytes);
/// cudaFree; never throws.
void device_free(void* pointer) noexcept;
/// Keeps the current device's default memory pool from returning freed stream-ordered
/// allocations to the driver while the returned handle (or a copy of it) lives
/// (kernels/memory_pool_hold.cuh). An MP IS engine holds the pool for its own lifetime; hold it
/// across several engines in a row (the batches of one run, a benchmark's iterations) so that
/// each does not start from an empty pool and pay for fresh device memory. Throws cuda_error on
/// failure, unavailable_error without CUDA.
std::shared_ptr<void> hold_device_memory_pool();
/// Synchronous host→device and device→host copies: the data is in place when they return.
void copy_to_device(void* device_destination, const void* host_source, std::size_t bytes);
void copy_to_host(void* host_destination, const void* device_source, std::size_t bytes);

/// n values at a device address (e.g. a model view's data), copied into a host vector.
template <class T>
std::vector<T> download(const T* device_source, std::size_t n) {
  std::vector<T> host(n);
  copy_to_host(host.data(), device_source, n * sizeof(T));
  return host;
}

/// The host's owning array, named as DeviceArray is, for state written once over either
/// (HmcEnsembleArrays<HostVector, T> on the CPU, <DeviceArray, T> on a GPU).
template <class T>
using HostVector = std::vector<T>;

/// A typed, movable, owning device allocation.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t size)
      : data_(static_cast<T*>(device_allocate(size * sizeof(T)))), size_(size) {}
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      device_free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~DeviceArray() { device_free(data_); }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  void upload(const std::vector<T>& host) {
    copy_to_device(data_, host.data(), (host.size() < size_ ? host.size() : size_) * sizeof(T));
  }
  std::vector<T> download() const { return myriad::download(data_, size_); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace myriad
