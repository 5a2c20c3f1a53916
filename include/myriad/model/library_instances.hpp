#pragma once
// Which models the library instantiates a CUDA backend for. Code compiled by a host compiler can
// run a model on a GPU only through an instance the library holds
// (kernels/builtin_instances.cmake; in builds without CUDA the factories are inline and throw
// unavailable_error, so every model links); code compiled by nvcc instantiates its own for any
// model (run/sample.hpp and its siblings). Each built-in model's own header specialises these traits
// next to the model's definition, so that every translation unit that can name the model sees
// the same value (one definition per program). Dependency-free, so that any layer may include it.

#include <type_traits>

namespace myriad {

/// make_cuda_hmc_backend<Model, T> is in the library (backend/hmc_backend.hpp).
template <class Model>
struct has_cuda_backend : std::false_type {};

/// make_cuda_chmc_backend<Generator, double> is in the library (backend/chmc_backend.hpp).
template <class Generator>
struct has_cuda_chmc_backend : std::false_type {};

/// make_cuda_ais_backend<Target, T> is in the library (backend/ais_backend.hpp).
template <class Target>
struct has_cuda_ais_backend : std::false_type {};

/// make_cuda_mpis_backend for Model is in the library (backend/mpis_backend.hpp).
template <class Model>
struct has_cuda_mpis_backend : std::false_type {};

}  // namespace myriad
