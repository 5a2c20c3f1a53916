// The CUDA MP IS backend of the built-in plated model `hierarchical_gaussian`. One nvcc job per
// model (kernels/builtin_mpis_*.cu); src/backend/cuda_mpis_unavailable.cpp instantiates the same
// list in builds without CUDA.

#include <memory>

#include "cuda_mpis_backend.cuh"
#include "myriad/models/builtin_plated.hpp"

namespace myriad {

template std::unique_ptr<MpisBackend> make_cuda_mpis_backend<models::HierarchicalGaussian>(
    const models::HierarchicalGaussian&, const PlatedStructure&, const MpisPlan&,
    const MpisEngineOptions&);

}  // namespace myriad
