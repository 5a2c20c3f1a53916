#pragma once
// Where a run executes. `automatic` picks CUDA when a device is present, else the CPU;
// asking for `cuda` without a device (or in a build without CUDA) is an error, never a silent
// fallback.

#include <cstdint>
#include <string>

#include "myriad/core/enum_names.hpp"

namespace myriad {

enum class Device { automatic, cpu, cuda };

inline constexpr EnumName<Device> kDeviceNames[] = {
    {Device::automatic, "auto"}, {Device::cpu, "cpu"}, {Device::cuda, "cuda"}};

inline std::string to_string(Device device) { return enum_name(kDeviceNames, device); }

/// True when this build has the CUDA backend and at least one CUDA device is usable.
bool cuda_device_available();

/// Resolves `automatic` and checks availability; throws myriad::unavailable_error when CUDA is
/// demanded but absent, naming the reason (no device, or a build without CUDA).
Device resolve_device(Device requested);

/// Memory a run may use on the device now: the host's available physical memory for the CPU,
/// cudaMemGetInfo's free bytes for CUDA; 0 when it cannot be told.
std::int64_t available_memory_bytes(Device device);

/// The CPU backend's threads (OpenMP's current maximum: OMP_NUM_THREADS or the cores).
int cpu_threads();

/// A human-readable description, e.g. "cpu (2 OpenMP threads)" or "cuda: NVIDIA H100 (sm_90)".
std::string describe_device(Device device);

}  // namespace myriad
