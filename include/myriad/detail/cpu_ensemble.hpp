#pragma once
// What the CPU backends of the many-chain samplers (HMC, constrained HMC, ABC-MCMC) answer
// alike: ChainEnsemble's questions (backend/chain_ensemble.hpp), from the model they hold and
// their chain count.

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/model/concept.hpp"

namespace myriad {

/// "cpu (N OpenMP threads)", or "cpu (1 thread)" in a build without OpenMP.
inline std::string cpu_device_name() {
#if defined(_OPENMP)
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
#else
  return "cpu (1 thread)";
#endif
}

/// The base of a CPU backend implementing `Interface` (a ChainEnsemble) for Model.
template <class Model, class Interface>
class CpuEnsemble : public Interface {
 public:
  std::int64_t chains() const final { return chains_; }
  int num_quantities() const final { return recorded_quantity_count(model_); }
  std::vector<std::string> quantity_names() const final { return recorded_quantity_names(model_); }
  std::string device_name() const override { return cpu_device_name(); }

 protected:
  CpuEnsemble(const Model& model, std::int64_t chains) : model_(model), chains_(chains) {}

  Model model_;
  std::int64_t chains_;
};

}  // namespace myriad
