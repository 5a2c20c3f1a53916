#pragma once
// The built-in generator models, and the declaration that the library instantiates their CUDA
// constrained-HMC backends (kernels/builtin_chmc_*.cu; in builds without CUDA,
// src/backend/cuda_chmc_unavailable.cpp, whose instantiations throw unavailable_error), so that
// host-compiled code may run them on a GPU through myriad::sample_constrained.
//
// Include this header before any use of sample_constrained, choose_constrained_device or
// make_chmc_backend (run/sample_constrained.hpp) with a built-in generator, in every
// translation unit that makes one: has_cuda_chmc_backend must have one value per generator in
// the whole program (the one definition rule). Generators with data (linear_gaussian, gld,
// lotka_volterra) run on CUDA only with their problem's device_model(), whose views point to
// device memory.

#include <type_traits>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"

namespace myriad {

namespace detail {
/// True for the five built-in generators themselves (not their noisy variants).
template <class Generator>
struct is_plain_builtin_generator
    : std::bool_constant<std::is_same<Generator, models::Sphere>::value ||
                         std::is_same<Generator, models::LinearGaussian>::value ||
                         std::is_same<Generator, models::Gld>::value ||
                         std::is_same<Generator, models::LotkaVolterra>::value ||
                         std::is_same<Generator, models::LotkaVolterraSummaries>::value> {};
}  // namespace detail

// The library instantiates the CUDA backends of the five built-in generators and of their noisy
// variants Noisy<G> (constrained-hmc.md §9; the CLI's noise=ε).
template <>
struct has_cuda_chmc_backend<models::Sphere> : std::true_type {};
template <>
struct has_cuda_chmc_backend<models::LinearGaussian> : std::true_type {};
template <>
struct has_cuda_chmc_backend<models::Gld> : std::true_type {};
template <>
struct has_cuda_chmc_backend<models::LotkaVolterra> : std::true_type {};
template <>
struct has_cuda_chmc_backend<models::LotkaVolterraSummaries> : std::true_type {};
template <class Inner>
struct has_cuda_chmc_backend<models::Noisy<Inner>> : detail::is_plain_builtin_generator<Inner> {};

}  // namespace myriad
