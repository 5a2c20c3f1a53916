// The CUDA HMC backend for the test models (tests/common/hmc_test_models.hpp), instantiated here
// because tests/cuda/test_cuda_hmc.cpp is compiled by the host compiler and reaches CUDA only
// through make_cuda_hmc_backend, as user code with its own model would. Built only with CUDA.

#include <cstdint>
#include <memory>

#include "common/hmc_test_models.hpp"
#include "myriad/kernels/cuda_hmc_backend.cuh"

namespace myriad {

template std::unique_ptr<HmcBackend<float>>
make_cuda_hmc_backend<testing::CoupledSkewNormals, float>(const testing::CoupledSkewNormals&,
                                                          std::int64_t);
template std::unique_ptr<HmcBackend<double>>
make_cuda_hmc_backend<testing::CoupledSkewNormals, double>(const testing::CoupledSkewNormals&,
                                                           std::int64_t);

}  // namespace myriad
