#pragma once
// Which models the library instantiates a CUDA backend for. Code compiled by a host compiler can
// run a model on a GPU only through an instance the library holds
// (kernels/builtin_instances.cmake; in builds without CUDA the factories are inline and throw
// unavailable_error, so every model links); code compiled by nvcc instantiates its own for any
// model (run/sample.hpp and its siblings).
//
// A built-in model says so in its own definition, one line:
//
//   static constexpr unsigned library_backends = library_backend::chmc;
//
// so every translation unit that can name the model sees the same answer (one definition per
// program: a trait specialised in some other header would be false wherever that header is not
// included). A model without the member, e.g. any model of a user's, has none. Dependency-free,
// so that any layer may include it.

#include <type_traits>

namespace myriad {

/// The samplers whose CUDA backend the library instantiates for a model: bits of its
/// `library_backends` member.
namespace library_backend {
inline constexpr unsigned hmc = 1u << 0;   ///< make_cuda_hmc_backend (backend/hmc_backend.hpp)
inline constexpr unsigned chmc = 1u << 1;  ///< make_cuda_chmc_backend (backend/chmc_backend.hpp)
inline constexpr unsigned ais = 1u << 2;   ///< make_cuda_ais_backend (backend/ais_backend.hpp)
inline constexpr unsigned mpis = 1u << 3;  ///< make_cuda_mpis_backend (backend/mpis_backend.hpp)
/// make_cuda_auxiliary_backend (backend/auxiliary_backend.hpp): slice, pseudo-marginal, APM.
inline constexpr unsigned auxiliary = 1u << 7;
/// make_cuda_tempering_backend (backend/tempering_backend.hpp): Gibbs CT, CT-HMC, simulated
/// tempering of an annealing target, double precision.
inline constexpr unsigned tempering = 1u << 8;
/// Not CUDA: the CPU lane kernels, one per instruction set, dispatched at run time
/// (library_lane_kernel, detail/lane_kernel_choice.hpp), of HMC, of Hamiltonian AIS and of
/// constrained HMC.
inline constexpr unsigned cpu_hmc_lanes = 1u << 4;
inline constexpr unsigned cpu_ais_lanes = 1u << 5;
inline constexpr unsigned cpu_chmc_lanes = 1u << 6;

/// CUDA HMC for a model in double precision only (the posteriordb ports: the library
/// instantiates their kernels in double, the precision their references were drawn in).
template <class T>
inline constexpr unsigned hmc_in_double = std::is_same_v<T, double> ? hmc : 0u;
}  // namespace library_backend

/// Model::library_backends, or none where the model does not declare it.
template <class Model, class = void>
struct library_backends_of : std::integral_constant<unsigned, 0u> {};
template <class Model>
struct library_backends_of<Model, std::void_t<decltype(Model::library_backends)>>
    : std::integral_constant<unsigned, Model::library_backends> {};

/// The library holds the CUDA backend `backend` (a library_backend bit) for Model.
template <class Model, unsigned backend>
struct library_holds : std::bool_constant<(library_backends_of<Model>::value & backend) != 0> {};

/// make_cuda_hmc_backend<Model, T> is in the library.
template <class Model>
using has_cuda_backend = library_holds<Model, library_backend::hmc>;
/// make_cuda_chmc_backend<Generator, double> is in the library.
template <class Generator>
using has_cuda_chmc_backend = library_holds<Generator, library_backend::chmc>;
/// make_cuda_ais_backend<Target, T> is in the library.
template <class Target>
using has_cuda_ais_backend = library_holds<Target, library_backend::ais>;
/// make_cuda_mpis_backend for Model is in the library.
template <class Model>
using has_cuda_mpis_backend = library_holds<Model, library_backend::mpis>;

}  // namespace myriad
