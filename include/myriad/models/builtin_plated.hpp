#pragma once
// The built-in plated models of MP IS (`myriad mpis`) and the trait that says the library
// instantiates their CUDA backends (kernels/builtin_mpis_*.cu).

#include <type_traits>

#include "myriad/backend/mpis_backend.hpp"
#include "myriad/models/bus_breakdown.hpp"
#include "myriad/models/chimpanzees.hpp"
#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"
#include "myriad/models/movielens.hpp"
#include "myriad/models/occupancy.hpp"

namespace myriad {

template <>
struct has_cuda_mpis_backend<models::HierarchicalGaussian> : std::true_type {};
template <>
struct has_cuda_mpis_backend<models::GaussianChain> : std::true_type {};
template <>
struct has_cuda_mpis_backend<models::BusBreakdown> : std::true_type {};
template <>
struct has_cuda_mpis_backend<models::Chimpanzees> : std::true_type {};
template <>
struct has_cuda_mpis_backend<models::MovieLens> : std::true_type {};
template <>
struct has_cuda_mpis_backend<models::Occupancy> : std::true_type {};

}  // namespace myriad
