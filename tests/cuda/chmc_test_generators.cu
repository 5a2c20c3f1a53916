// The CUDA constrained-HMC backend for the test generators (tests/common/test_generators.hpp),
// instantiated here because tests/cuda/test_cuda_chmc.cpp is compiled by the host compiler and
// reaches CUDA only through make_cuda_chmc_backend, as user code with its own generator would
// (kernels/cuda_chmc_backend.cuh). Built only with CUDA.

#include <cstdint>
#include <memory>

#include "common/test_generators.hpp"
#include "myriad/kernels/cuda_chmc_backend.cuh"

namespace myriad {

template std::unique_ptr<ChmcBackend<double>>
make_cuda_chmc_backend<test_generators::TestSphere, double>(const test_generators::TestSphere&,
                                                            std::int64_t, ChmcCudaOptions);
template std::unique_ptr<ChmcBackend<double>>
make_cuda_chmc_backend<test_generators::TestCurved, double>(const test_generators::TestCurved&,
                                                            std::int64_t, ChmcCudaOptions);

}  // namespace myriad
