// make_cuda_ais_backend in builds without CUDA: the built-in targets' instantiations exist (so
// that the scheduler and the CLI link the same way in every build) and throw
// myriad::unavailable_error. With CUDA, kernels/builtin_ais_*.cu define them instead.

#if !defined(MYRIAD_HAS_CUDA)

#include <memory>

#include "myriad/backend/ais_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_targets.hpp"

namespace myriad {

template <class Target, class T>
std::unique_ptr<AisBackend<T>> make_cuda_ais_backend(const Target&, AisLayout<T>) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}

#define MYRIAD_INSTANTIATE_UNAVAILABLE(Target)                                              \
  template std::unique_ptr<AisBackend<float>> make_cuda_ais_backend<Target<float>, float>(  \
      const Target<float>&, AisLayout<float>);                                              \
  template std::unique_ptr<AisBackend<double>> make_cuda_ais_backend<Target<double>, double>( \
      const Target<double>&, AisLayout<double>);

MYRIAD_INSTANTIATE_UNAVAILABLE(models::Gaussian)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::ProductOfExperts)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Mcrbm)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::LinearGenerative)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::BoltzmannRelaxation)
#undef MYRIAD_INSTANTIATE_UNAVAILABLE

}  // namespace myriad

#endif  // !MYRIAD_HAS_CUDA
