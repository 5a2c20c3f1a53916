// The CUDA backend of the built-in model `eight_schools`, float and double. One nvcc job per model
// (kernels/builtin_hmc_*.cu) so that a two-core machine compiles them in parallel and editing
// one model recompiles only its kernels; src/backend/cuda_unavailable.cpp instantiates the same
// list in builds without CUDA.

#include <cstdint>
#include <memory>

#include "cuda_hmc_backend.cuh"
#include "myriad/models/eight_schools.hpp"

namespace myriad {

template std::unique_ptr<HmcBackend<float>>
make_cuda_hmc_backend<models::EightSchools<float>, float>(const models::EightSchools<float>&,
                                                          std::int64_t);
template std::unique_ptr<HmcBackend<double>>
make_cuda_hmc_backend<models::EightSchools<double>, double>(const models::EightSchools<double>&,
                                                            std::int64_t);

}  // namespace myriad
