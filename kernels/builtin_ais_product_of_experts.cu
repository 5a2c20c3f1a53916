// The CUDA AIS backend of the built-in targets poe_laplace and poe_student_t, float and double (one nvcc
// job per target, as kernels/builtin_ais_gaussian.cu explains).

#include <memory>

#include "cuda_ais_backend.cuh"
#include "myriad/models/builtin_targets.hpp"

namespace myriad {

template std::unique_ptr<AisBackend<float>>
make_cuda_ais_backend<models::ProductOfExperts<float>, float>(const models::ProductOfExperts<float>&,
                                                  AisLayout<float>);
template std::unique_ptr<AisBackend<double>>
make_cuda_ais_backend<models::ProductOfExperts<double>, double>(const models::ProductOfExperts<double>&,
                                                    AisLayout<double>);

}  // namespace myriad
