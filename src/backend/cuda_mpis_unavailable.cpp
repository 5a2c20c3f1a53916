// make_cuda_mpis_backend in builds without CUDA: the built-in plated models' instantiations
// exist (so that the scheduler and the CLI link the same way in every build) and throw
// myriad::unavailable_error. With CUDA, kernels/builtin_mpis_*.cu define them instead.

#if !defined(MYRIAD_HAS_CUDA)

#include <memory>

#include "myriad/backend/mpis_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/builtin_plated.hpp"

namespace myriad {

template <class Model>
std::unique_ptr<MpisBackend> make_cuda_mpis_backend(const Model&, const PlatedStructure&,
                                                    const MpisPlan&, const MpisEngineOptions&) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}

#define MYRIAD_INSTANTIATE_UNAVAILABLE(Model)                          \
  template std::unique_ptr<MpisBackend> make_cuda_mpis_backend<Model>( \
      const Model&, const PlatedStructure&, const MpisPlan&, const MpisEngineOptions&);

MYRIAD_INSTANTIATE_UNAVAILABLE(models::HierarchicalGaussian)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::GaussianChain)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::BusBreakdown)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Chimpanzees)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::MovieLens)
MYRIAD_INSTANTIATE_UNAVAILABLE(models::Occupancy)
#undef MYRIAD_INSTANTIATE_UNAVAILABLE

}  // namespace myriad

#endif  // !MYRIAD_HAS_CUDA
