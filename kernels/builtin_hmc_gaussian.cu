// The CUDA backend of the built-in model `gaussian`, float and double. One nvcc job per model
// (kernels/builtin_hmc_*.cu) so that a two-core machine compiles them in parallel and editing
// one model recompiles only its kernels; src/backend/cuda_unavailable.cpp instantiates the same
// list in builds without CUDA.

#include <cstdint>
#include <memory>

#include "cuda_hmc_backend.cuh"
#include "myriad/models/gaussian.hpp"

namespace myriad {

template std::unique_ptr<HmcBackend<float>> make_cuda_hmc_backend<models::Gaussian<float>, float>(
    const models::Gaussian<float>&, std::int64_t);
template std::unique_ptr<HmcBackend<double>>
make_cuda_hmc_backend<models::Gaussian<double>, double>(const models::Gaussian<double>&,
                                                        std::int64_t);

}  // namespace myriad
