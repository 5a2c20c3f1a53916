// Device selection (backend/device.hpp). Plain host C++: the CUDA runtime is queried through
// its C API, and only in builds with CUDA (the myriad target then links CUDA::cudart).

#include "myriad/backend/device.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "myriad/core/error.hpp"
#include "myriad/detail/cpu_ensemble.hpp"

#if defined(MYRIAD_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace myriad {

bool cuda_device_available() {
#if defined(MYRIAD_HAS_CUDA)
  // Asked once per process: the answer does not change, and the first runtime call (driver and
  // context set-up) is slow. Any failure (no driver, driver older than the runtime,
  // CUDA_VISIBLE_DEVICES hiding every device) means "no device", never an exception.
  static const bool available = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear the error so that it does not surface at a later call
      return false;
    }
    return count > 0;
  }();
  return available;
#else
  return false;
#endif
}

Device resolve_device(Device requested) {
  switch (requested) {
    case Device::cpu:
      return Device::cpu;
    case Device::automatic:
      return cuda_device_available() ? Device::cuda : Device::cpu;
    case Device::cuda:
#if !defined(MYRIAD_HAS_CUDA)
      throw unavailable_error("--device cuda was requested but myriad was built without CUDA");
#else
      if (!cuda_device_available()) {
        throw unavailable_error("--device cuda was requested but no CUDA device is available");
      }
      return Device::cuda;
#endif
  }
  throw invalid_argument("unknown device value " + std::to_string(static_cast<int>(requested)));
}

int cpu_threads() { return std::max(1, omp_get_max_threads()); }

std::string describe_device(Device device) {
  const Device resolved = resolve_device(device);
  if (resolved == Device::cpu) {
    return cpu_device_name();
  }
#if defined(MYRIAD_HAS_CUDA)
  int index = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&index) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, index) != cudaSuccess) {
    cudaGetLastError();
    return "cuda (device properties unavailable)";
  }
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(properties.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return "cuda: " + std::string(properties.name) + " (sm_" + std::to_string(properties.major) +
         std::to_string(properties.minor) + ", " + std::to_string(properties.multiProcessorCount) +
         " SMs, " + memory + ")";
#else
  return "cuda";  // unreachable: resolve_device throws in a build without CUDA
#endif
}

std::int64_t available_memory_bytes(Device device) {
  const Device resolved = resolve_device(device);
  if (resolved == Device::cpu) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
  }
#if defined(MYRIAD_HAS_CUDA)
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<std::int64_t>(free_bytes);
#else
  return 0;  // unreachable: resolve_device throws in a build without CUDA
#endif
}

}  // namespace myriad
