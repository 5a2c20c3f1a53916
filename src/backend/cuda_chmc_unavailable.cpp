// make_cuda_chmc_backend in builds without CUDA: the built-in generators' instantiations exist
// (so that host code, the scheduler and the CLI link the same way in every build) and throw
// myriad::unavailable_error. With CUDA, kernels/builtin_chmc_*.cu define them instead; the list
// is the one models/builtin_generators.hpp declares with has_cuda_chmc_backend.

#if !defined(MYRIAD_HAS_CUDA)

#include <cstdint>
#include <memory>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_generators.hpp"

namespace myriad {

template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cuda_chmc_backend(const Generator&, std::int64_t,
                                                       ChmcCudaOptions) {
  throw unavailable_error(
      "myriad was built without CUDA: constrained HMC cannot run on a GPU; use --device cpu or "
      "auto");
}

#define MYRIAD_INSTANTIATE_UNAVAILABLE(Generator)                                           \
  template std::unique_ptr<ChmcBackend<double>> make_cuda_chmc_backend<Generator, double>(  \
      const Generator&, std::int64_t, ChmcCudaOptions);                                    \
  template std::unique_ptr<ChmcBackend<double>>                                             \
  make_cuda_chmc_backend<models::Noisy<Generator>, double>(const models::Noisy<Generator>&, \
                                                           std::int64_t, ChmcCudaOptions);

MYRIAD_INSTANTIATE_UNAVAILABLE(models::Sphere)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::LinearGaussian)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Gld)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::LotkaVolterra)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::LotkaVolterraSummaries)
#undef MYRIAD_INSTANTIATE_UNAVAILABLE

}  // namespace myriad

#endif  // !MYRIAD_HAS_CUDA
