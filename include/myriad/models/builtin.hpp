#pragma once
// The built-in density models, and the declaration that the library instantiates their CUDA
// backends (kernels/builtin_hmc*.cu), so host-compiled code may run them on a GPU.

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/logistic.hpp"

namespace myriad {

template <class T>
struct has_cuda_backend<models::Gaussian<T>> : std::true_type {};
template <class T>
struct has_cuda_backend<models::Logistic<T>> : std::true_type {};
template <class T>
struct has_cuda_backend<models::EightSchools<T>> : std::true_type {};
template <class T>
struct has_cuda_backend<models::Funnel<T>> : std::true_type {};

}  // namespace myriad
