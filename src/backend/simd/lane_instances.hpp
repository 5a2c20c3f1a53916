#pragma once
// The built-in models whose CPU lane kernels the library compiles once per instruction set
// (lane_kernels_<isa>.cpp) and dispatches at run time (lane_kernels_dispatch.cpp): HMC's for the
// models that declare library_backend::cpu_hmc_lanes, Hamiltonian AIS's for the targets that
// declare library_backend::cpu_ais_lanes, constrained HMC's (chmc_lane_kernels_<isa>.cpp) for
// the generators that declare library_backend::cpu_chmc_lanes (model/library_instances.hpp).

#include "myriad/models/banana.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/logistic.hpp"
#include "myriad/models/lotka_volterra.hpp"
#include "myriad/models/lotka_volterra_summaries.hpp"
#include "myriad/models/mcrbm.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/product_of_experts.hpp"
#include "myriad/models/radon.hpp"
#include "myriad/models/sphere.hpp"

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
  X(models::Funnel<double>, double)       \
  X(models::Radon<float>, float)          \
  X(models::Radon<double>, double)

#define MYRIAD_FOR_EACH_AIS_LANE_TARGET(X)       \
  X(models::Gaussian<float>, float)              \
  X(models::Gaussian<double>, double)            \
  X(models::ProductOfExperts<float>, float)      \
  X(models::ProductOfExperts<double>, double)    \
  X(models::BoltzmannRelaxation<float>, float)   \
  X(models::BoltzmannRelaxation<double>, double) \
  X(models::LinearGenerative<float>, float)      \
  X(models::LinearGenerative<double>, double)    \
  X(models::Mcrbm<float>, float)                 \
  X(models::Mcrbm<double>, double)               \
  X(models::Radon<float>, float)                 \
  X(models::Radon<double>, double)

#define MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(X)             \
  X(models::Sphere, double)                                \
  X(models::LinearGaussian, double)                        \
  X(models::LotkaVolterra, double)                         \
  X(models::LotkaVolterraSummaries, double)                \
  X(models::Gld, double)                                   \
  X(models::Noisy<models::Sphere>, double)                 \
  X(models::Noisy<models::LinearGaussian>, double)         \
  X(models::Noisy<models::LotkaVolterra>, double)          \
  X(models::Noisy<models::LotkaVolterraSummaries>, double) \
  X(models::Noisy<models::Gld>, double)

// Each instruction set's translation unit defines its kernels with these.
#define MYRIAD_LANE_KERNEL_INSTANCE(Model, T) \
  template HmcLaneKernel<Model, T> hmc_lane_kernel<Model, T, MYRIAD_LANE_ARCH>();
#define MYRIAD_AIS_LANE_KERNEL_INSTANCE(Target, T) \
  template AisLaneKernel<Target, T> ais_lane_kernel<Target, T, MYRIAD_LANE_ARCH>();
#define MYRIAD_CHMC_LANE_KERNEL_INSTANCE(Generator, T) \
  template ChmcLaneKernel<Generator, T> chmc_lane_kernel<Generator, T, MYRIAD_LANE_ARCH>();
