#pragma once
// The CUDA backend of massively parallel importance sampling (backend/mpis_backend.hpp): the
// engine of estimate/mpis_engine.hpp on the CUDA parallel policy, so every particle, log-factor
// entry, message entry and index draw is one thread running the same functor as the CPU.
//
// The library instantiates make_cuda_mpis_backend for its built-in plated models
// (kernels/builtin_instances.cmake). For a model of your own, include this header (or
// myriad/run/mpis.hpp) in a .cu file compiled by nvcc and call myriad::mpis there, or
// instantiate
//
//   template std::unique_ptr<myriad::MpisBackend> myriad::make_cuda_mpis_backend<MyModel>(
//       const MyModel&, const myriad::PlatedStructure&, const myriad::MpisPlan&,
//       const myriad::MpisEngineOptions&);
//
// Device memory: as the plan estimates (MpisPlan::forward_bytes, twice with the backward pass),
// plus particles, log Q and permutations; MpisResult::peak_bytes reports what was held.

#include <memory>
#include <type_traits>

#include "cuda_contraction.cuh"
#include "cuda_parallel.cuh"
#include "myriad/backend/device.hpp"
#include "myriad/backend/mpis_backend.hpp"

namespace myriad {

template <class Model>
std::unique_ptr<MpisBackend> make_cuda_mpis_backend(const Model& model,
                                                    const PlatedStructure& structure,
                                                    const MpisPlan& plan,
                                                    const MpisEngineOptions& options) {
  static_assert(std::is_trivially_copyable<Model>::value,
                "a plated model is passed to kernels by value and must be trivially copyable");
  return std::make_unique<MpisEngineBackend<Model, CudaParallel>>(
      model, structure, plan, CudaParallel(options.contraction), options,
      describe_device(Device::cuda));
}

}  // namespace myriad
