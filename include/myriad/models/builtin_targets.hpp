#pragma once
// The built-in annealing targets (estimate/annealing_target.hpp), and the declaration that the
// library instantiates their CUDA AIS backends (kernels/builtin_ais_*.cu), so host-compiled code
// may run them on a GPU.

#include <type_traits>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/models/gaussian.hpp"

namespace myriad {

template <class T>
struct has_cuda_ais_backend<models::Gaussian<T>> : std::true_type {};

}  // namespace myriad
