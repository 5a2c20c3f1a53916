#pragma once
// cuda_detail::DeviceScope — the CUDA device of an object made current for a call, and the
// caller's restored after it.
//
// A backend allocates its arrays and creates its streams on the device that is current when it
// is constructed. A program that drives several GPUs from one thread switches the current device
// between calls (cudaSetDevice); a kernel launched into another device's stream fails with
// "invalid resource handle". So every public member function of a CUDA backend that touches the
// device opens a DeviceScope on the backend's device first, as cuBLAS and cuSOLVER handles do
// with theirs. Cost: one cudaGetDevice (a thread-local read) per call, plus a cudaSetDevice
// there and back only when the caller's device differs.

#include <cuda_runtime_api.h>

#include "cuda_try.cuh"

namespace myriad::cuda_detail {

class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    MYRIAD_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device_) MYRIAD_CUDA_TRY(cudaSetDevice(device_));
  }
  ~DeviceScope() {
    // A destructor must not throw; a failure to switch back leaves the backend's device current.
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

}  // namespace myriad::cuda_detail
