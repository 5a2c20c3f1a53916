#pragma once
// Which device a run uses, for every sampler alike. Code compiled by nvcc instantiates the CUDA
// backend for any model itself; host-compiled code reaches one only through an instance the
// library holds (model/library_instances.hpp). `automatic` picks CUDA only when a device is
// present and the model can run there; `cuda` where it cannot is an error, never a silent
// fallback.

#include <string>

#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// True when this translation unit can build the CUDA backend `backend` (a library_backend bit)
/// for Model.
template <class Model, unsigned backend>
constexpr bool cuda_reachable() {
#if defined(__CUDACC__)
  return true;
#else
  return library_holds<Model, backend>::value;
#endif
}

/// The device a run of Model by `backend` will use. `sampler` names the kind of backend and
/// `entry_point` the myriad:: call to compile with nvcc, for the error.
template <class Model, unsigned backend>
Device choose_device_for(Device requested, const char* sampler, const char* entry_point) {
  if (requested == Device::automatic && !cuda_reachable<Model, backend>()) return Device::cpu;
  const Device device = resolve_device(requested);
  if (device == Device::cuda && !cuda_reachable<Model, backend>()) {
    throw unavailable_error(std::string("this model has no CUDA ") + sampler +
                            "backend here: compile the code that calls myriad::" + entry_point +
                            " with nvcc (or use --device cpu)");
  }
  return device;
}

}  // namespace myriad
