#pragma once
// The built-in annealing targets (estimate/annealing_target.hpp), and the declaration that the
// library instantiates their CUDA AIS backends (kernels/builtin_ais_*.cu), so host-compiled code
// may run them on a GPU.

#include <type_traits>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/mcrbm.hpp"
#include "myriad/models/product_of_experts.hpp"

namespace myriad {

template <class T>
struct has_cuda_ais_backend<models::Gaussian<T>> : std::true_type {};
template <class T>
struct has_cuda_ais_backend<models::ProductOfExperts<T>> : std::true_type {};
template <class T>
struct has_cuda_ais_backend<models::Mcrbm<T>> : std::true_type {};
template <class T>
struct has_cuda_ais_backend<models::LinearGenerative<T>> : std::true_type {};
template <class T>
struct has_cuda_ais_backend<models::BoltzmannRelaxation<T>> : std::true_type {};

}  // namespace myriad
