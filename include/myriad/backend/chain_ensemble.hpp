#pragma once
// What every many-chain backend (HMC, constrained HMC, ABC-MCMC; CPU and CUDA) says about its
// ensemble, whatever it samples: the run schedules (src/run/) and the reports read these.

#include <cstdint>
#include <string>
#include <vector>

namespace myriad {

class ChainEnsemble {
 public:
  virtual ~ChainEnsemble() = default;

  virtual std::int64_t chains() const = 0;
  /// Quantities recorded per draw, and their names ("x[0]", "tau", …).
  virtual int num_quantities() const = 0;
  virtual std::vector<std::string> quantity_names() const = 0;
  /// e.g. "cpu (2 OpenMP threads)" or "NVIDIA H100 80GB HBM3 (sm_90)".
  virtual std::string device_name() const = 0;
};

}  // namespace myriad
