#pragma once
// The built-in models whose CPU lane kernels the library compiles once per instruction set
// (lane_kernels_<isa>.cpp) and dispatches at run time (lane_kernels_dispatch.cpp), each list
// entry (lane family, model, precision): HMC's for the models that declare
// library_backend::cpu_hmc_lanes, Hamiltonian AIS's for the targets that declare
// library_backend::cpu_ais_lanes, constrained HMC's (chmc_lane_kernels_<isa>.cpp) for the
// generators that declare library_backend::cpu_chmc_lanes (model/library_instances.hpp).

#include "myriad/detail/lane_kernel_choice.hpp"
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

#define MYRIAD_FOR_EACH_LANE_MODEL(X)                    \
  X(HmcLaneFamily, models::Gaussian<float>, float)       \
  X(HmcLaneFamily, models::Gaussian<double>, double)     \
  X(HmcLaneFamily, models::Logistic<float>, float)       \
  X(HmcLaneFamily, models::Logistic<double>, double)     \
  X(HmcLaneFamily, models::EightSchools<float>, float)   \
  X(HmcLaneFamily, models::EightSchools<double>, double) \
  X(HmcLaneFamily, models::Banana<float>, float)         \
  X(HmcLaneFamily, models::Banana<double>, double)       \
  X(HmcLaneFamily, models::Funnel<float>, float)         \
  X(HmcLaneFamily, models::Funnel<double>, double)       \
  X(HmcLaneFamily, models::Radon<float>, float)          \
  X(HmcLaneFamily, models::Radon<double>, double)

#define MYRIAD_FOR_EACH_AIS_LANE_TARGET(X)                      \
  X(AisLaneFamily, models::Gaussian<float>, float)              \
  X(AisLaneFamily, models::Gaussian<double>, double)            \
  X(AisLaneFamily, models::ProductOfExperts<float>, float)      \
  X(AisLaneFamily, models::ProductOfExperts<double>, double)    \
  X(AisLaneFamily, models::BoltzmannRelaxation<float>, float)   \
  X(AisLaneFamily, models::BoltzmannRelaxation<double>, double) \
  X(AisLaneFamily, models::LinearGenerative<float>, float)      \
  X(AisLaneFamily, models::LinearGenerative<double>, double)    \
  X(AisLaneFamily, models::Mcrbm<float>, float)                 \
  X(AisLaneFamily, models::Mcrbm<double>, double)               \
  X(AisLaneFamily, models::Radon<float>, float)                 \
  X(AisLaneFamily, models::Radon<double>, double)

#define MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(X)                             \
  X(ChmcLaneFamily, models::Sphere, double)                                \
  X(ChmcLaneFamily, models::LinearGaussian, double)                        \
  X(ChmcLaneFamily, models::LotkaVolterra, double)                         \
  X(ChmcLaneFamily, models::LotkaVolterraSummaries, double)                \
  X(ChmcLaneFamily, models::Gld, double)                                   \
  X(ChmcLaneFamily, models::Noisy<models::Sphere>, double)                 \
  X(ChmcLaneFamily, models::Noisy<models::LinearGaussian>, double)         \
  X(ChmcLaneFamily, models::Noisy<models::LotkaVolterra>, double)          \
  X(ChmcLaneFamily, models::Noisy<models::LotkaVolterraSummaries>, double) \
  X(ChmcLaneFamily, models::Noisy<models::Gld>, double)

// Each instruction set's translation unit defines its kernels with this (compiled_lane_kernel,
// detail/lane_kernel_choice.hpp).
#define MYRIAD_LANE_KERNEL_INSTANCE(Family, Model, T) \
  template lane_kernel_t<Family, Model, T>            \
  compiled_lane_kernel<Family, Model, T, MYRIAD_LANE_ARCH>();
