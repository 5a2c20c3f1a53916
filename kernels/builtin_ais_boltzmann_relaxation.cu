// The CUDA AIS backend of the built-in target boltzmann_relaxation, float and double (one nvcc
// job per target, as kernels/builtin_ais_gaussian.cu explains).

#include <memory>

#include "cuda_ais_backend.cuh"
#include "myriad/models/builtin_targets.hpp"

namespace myriad {

template std::unique_ptr<AisBackend<float>>
make_cuda_ais_backend<models::BoltzmannRelaxation<float>, float>(const models::BoltzmannRelaxation<float>&,
                                                  AisLayout<float>);
template std::unique_ptr<AisBackend<double>>
make_cuda_ais_backend<models::BoltzmannRelaxation<double>, double>(const models::BoltzmannRelaxation<double>&,
                                                    AisLayout<double>);

}  // namespace myriad
