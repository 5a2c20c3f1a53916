// The CUDA AIS backend of the built-in target `gaussian`, float and double. One nvcc job per
// target (kernels/builtin_ais_*.cu), as for the HMC backends; src/backend/cuda_ais_unavailable.cpp
// instantiates the same list in builds without CUDA.

#include <memory>

#include "cuda_ais_backend.cuh"
#include "myriad/models/builtin_targets.hpp"

namespace myriad {

template std::unique_ptr<AisBackend<float>> make_cuda_ais_backend<models::Gaussian<float>, float>(
    const models::Gaussian<float>&, AisLayout<float>);
template std::unique_ptr<AisBackend<double>>
make_cuda_ais_backend<models::Gaussian<double>, double>(const models::Gaussian<double>&,
                                                        AisLayout<double>);

}  // namespace myriad
