// The CUDA constrained-HMC backend of the built-in generator `lotka_volterra_summaries` and of its
// noisy variant (constrained-hmc.md §9), in double. One nvcc job per generator
// (kernels/builtin_chmc_*.cu) so that a two-core machine compiles them in parallel and editing one
// generator recompiles only its kernels; src/backend/cuda_chmc_unavailable.cpp instantiates the
// same list in builds without CUDA, and models/builtin_generators.hpp declares it
// (has_cuda_chmc_backend).

#include <cstdint>
#include <memory>

#include "cuda_chmc_backend.cuh"
#include "myriad/models/lotka_volterra_summaries.hpp"
#include "myriad/models/noisy_generator.hpp"

namespace myriad {

template std::unique_ptr<ChmcBackend<double>>
make_cuda_chmc_backend<models::LotkaVolterraSummaries, double>(
    const models::LotkaVolterraSummaries&, std::int64_t, ChmcCudaOptions);
template std::unique_ptr<ChmcBackend<double>>
make_cuda_chmc_backend<models::Noisy<models::LotkaVolterraSummaries>, double>(
    const models::Noisy<models::LotkaVolterraSummaries>&, std::int64_t, ChmcCudaOptions);

}  // namespace myriad
