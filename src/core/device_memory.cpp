#include "myriad/core/device_memory.hpp"

#include "myriad/core/error.hpp"

#if defined(MYRIAD_HAS_CUDA)
#include <cuda_runtime_api.h>

#include <string>

#include "memory_pool_hold.cuh"

namespace myriad {
namespace {
void check(cudaError_t status, const char* call, std::size_t bytes) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // as kernels/cuda_try.cuh: not the next launch check's error
    throw cuda_error(
        detail::concat(call, " (", bytes, " bytes) failed: ", cudaGetErrorString(status)));
  }
}
}  // namespace

void* device_allocate(std::size_t bytes) {
  void* pointer = nullptr;
  if (bytes == 0) return nullptr;
  check(cudaMalloc(&pointer, bytes), "cudaMalloc", bytes);
  return pointer;
}
void device_free(void* pointer) noexcept {
  if (pointer) cudaFree(pointer);
}
std::shared_ptr<void> hold_device_memory_pool() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", 0);
  return std::make_shared<cuda_detail::MemoryPoolHold>(device);
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device", bytes);
  // From pageable memory cudaMemcpy may return once the data is staged, before the DMA lands, and
  // the backends' kernels run on non-blocking streams that do not wait for the default stream.
  // Waiting here makes the copy complete, as memory.hpp promises.
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize after the copy to device", bytes);
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes)
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host", bytes);
}
}  // namespace myriad

#else

namespace myriad {
namespace {
[[noreturn]] void no_cuda() {
  throw unavailable_error("myriad was built without CUDA: device memory is unavailable");
}
}  // namespace
void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  no_cuda();
}
void device_free(void*) noexcept {}
std::shared_ptr<void> hold_device_memory_pool() { no_cuda(); }
void copy_to_device(void*, const void*, std::size_t bytes) {
  if (bytes) no_cuda();
}
void copy_to_host(void*, const void*, std::size_t bytes) {
  if (bytes) no_cuda();
}
}  // namespace myriad

#endif
