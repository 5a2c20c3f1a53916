#pragma once
// The built-in models whose HMC lane kernels the library compiles once per instruction set
// (hmc_lanes_<isa>.cpp) and dispatches at run time (hmc_lanes_dispatch.cpp). Each declares
// library_backend::cpu_lanes in its library_backends (model/library_instances.hpp).

#include "myriad/models/banana.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/logistic.hpp"

#define MYRIAD_FOR_EACH_LANE_MODEL(X)     \
  X(models::Gaussian<float>, float)       \
  X(models::Gaussian<double>, double)     \
  X(models::Logistic<float>, float)       \
  X(models::Logistic<double>, double)     \
  X(models::EightSchools<float>, float)   \
  X(models::EightSchools<double>, double) \
  X(models::Banana<float>, float)         \
  X(models::Banana<double>, double)       \
  X(models::Funnel<float>, float)         \
  X(models::Funnel<double>, double)

// Each instruction set's translation unit defines its kernels with this.
#define MYRIAD_LANE_KERNEL_INSTANCE(Model, T) \
  template HmcLaneKernel<Model, T> hmc_lane_kernel<Model, T, MYRIAD_LANE_ARCH>();
