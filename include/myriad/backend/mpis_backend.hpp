#pragma once
// The backend interface of massively parallel importance sampling: what the host scheduler
// (src/run/run_mpis.cpp) asks of one batch of runs. Both implementations are the same engine
// (estimate/mpis_engine.hpp) on a different parallel policy: CpuParallel here, CudaParallel in
// kernels/cuda_mpis_backend.cuh.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/detail/log_sum_product_lane_types.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/mpis_engine.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// One batch of runs (plan.runs of them, the first numbered first_run) on one backend.
class MpisBackend {
 public:
  virtual ~MpisBackend() = default;
  /// Particles, log-factors and the contraction (MpisEngine::forward).
  virtual void forward() = 0;
  virtual std::vector<double> log_marginal() = 0;
  virtual void backward() = 0;
  virtual std::vector<double> log_marginal_weights(int latent) = 0;
  virtual std::vector<double> particles(int latent) = 0;
  virtual void sample_indices(std::int64_t draws) = 0;
  virtual std::vector<std::int32_t> sampled_indices(int latent) = 0;
  virtual std::vector<double> global_log_weights(std::int64_t first, std::int64_t count) = 0;
  virtual std::int64_t nonfinite_entries() const = 0;
  virtual std::int64_t peak_bytes() const = 0;
  virtual std::string device() const = 0;
};

/// MpisBackend over an MpisEngine on any parallel policy.
template <class Model, class Parallel>
class MpisEngineBackend final : public MpisBackend {
 public:
  MpisEngineBackend(const Model& model, const PlatedStructure& structure, const MpisPlan& plan,
                    Parallel parallel, const MpisEngineOptions& options, std::string device)
      : engine_(model, structure, plan, std::move(parallel), options), device_(std::move(device)) {}
  void forward() override { engine_.forward(); }
  std::vector<double> log_marginal() override { return engine_.log_marginal(); }
  void backward() override { engine_.backward(); }
  std::vector<double> log_marginal_weights(int g) override {
    return engine_.log_marginal_weights(g);
  }
  std::vector<double> particles(int g) override { return engine_.particles(g); }
  void sample_indices(std::int64_t draws) override { engine_.sample_indices(draws); }
  std::vector<std::int32_t> sampled_indices(int g) override { return engine_.sampled_indices(g); }
  std::vector<double> global_log_weights(std::int64_t first, std::int64_t count) override {
    return engine_.global_log_weights(first, count);
  }
  std::int64_t nonfinite_entries() const override { return engine_.nonfinite_entries(); }
  std::int64_t peak_bytes() const override { return engine_.memory().peak; }
  std::string device() const override { return device_; }

 private:
  MpisEngine<Model, Parallel> engine_;
  std::string device_;
};

/// The CPU's description and, where contractions run in SIMD lanes, their instruction set and
/// width.
inline std::string cpu_mpis_device_name(bool simd_lanes) {
  std::string name = describe_device(Device::cpu);
  const LogSumProductLaneKernel lanes =
      simd_lanes ? library_log_sum_product_lane_kernel() : LogSumProductLaneKernel{};
  if (lanes.width > 0)
    name += std::string(", contractions in ") + lanes.isa + " lanes of " +
            std::to_string(lanes.width) + " output elements";
  return name;
}

/// The CPU backend; simd_lanes: contraction steps in SIMD lanes of output elements where the
/// library has them (backend/cpu_parallel.hpp).
template <class Model>
std::unique_ptr<MpisBackend> make_cpu_mpis_backend(const Model& model,
                                                   const PlatedStructure& structure,
                                                   const MpisPlan& plan,
                                                   const MpisEngineOptions& options,
                                                   bool simd_lanes = true) {
  return std::make_unique<MpisEngineBackend<Model, CpuParallel>>(
      model, structure, plan, CpuParallel{simd_lanes}, options, cpu_mpis_device_name(simd_lanes));
}

/// The CUDA backend: defined in kernels/cuda_mpis_backend.cuh; the library instantiates it for
/// its built-in models (kernels/builtin_instances.cmake). In a build without CUDA it is this
/// inline definition, which throws myriad::unavailable_error.
#if defined(MYRIAD_HAS_CUDA)
template <class Model>
std::unique_ptr<MpisBackend> make_cuda_mpis_backend(const Model& model,
                                                    const PlatedStructure& structure,
                                                    const MpisPlan& plan,
                                                    const MpisEngineOptions& options);
#else
template <class Model>
std::unique_ptr<MpisBackend> make_cuda_mpis_backend(const Model&, const PlatedStructure&,
                                                    const MpisPlan&, const MpisEngineOptions&) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
