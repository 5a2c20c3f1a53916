// make_cuda_hmc_backend in builds without CUDA: the built-in models' instantiations exist (so
// that host code, the scheduler and the CLI link the same way in every build) and throw
// myriad::unavailable_error. With CUDA, kernels/builtin_hmc_*.cu define them instead.

#if !defined(MYRIAD_HAS_CUDA)

#include <cstdint>
#include <memory>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin.hpp"

namespace myriad {

template <class Model, class T>
std::unique_ptr<HmcBackend<T>> make_cuda_hmc_backend(const Model&, std::int64_t) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}

#define MYRIAD_INSTANTIATE_UNAVAILABLE(Model)                                                \
  template std::unique_ptr<HmcBackend<float>> make_cuda_hmc_backend<Model<float>, float>(    \
      const Model<float>&, std::int64_t);                                                    \
  template std::unique_ptr<HmcBackend<double>> make_cuda_hmc_backend<Model<double>, double>( \
      const Model<double>&, std::int64_t);

MYRIAD_INSTANTIATE_UNAVAILABLE(models::Gaussian)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Logistic)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::EightSchools)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Funnel)
#undef MYRIAD_INSTANTIATE_UNAVAILABLE

}  // namespace myriad

#endif  // !MYRIAD_HAS_CUDA
