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

// X(family, Model<float>, float) and X(family, Model<double>, double): a model template in both
// precisions.
#define MYRIAD_LANE_BOTH_PRECISIONS(X, Family, Model) \
  X(Family, Model<float>, float) X(Family, Model<double>, double)
// A generator and its noisy variant (model/noisy_generator.hpp), in double.
#define MYRIAD_LANE_WITH_NOISE(X, Generator) \
  X(ChmcLaneFamily, Generator, double) X(ChmcLaneFamily, models::Noisy<Generator>, double)

#define MYRIAD_FOR_EACH_LANE_MODEL(X)                                 \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::Gaussian)     \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::Logistic)     \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::EightSchools) \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::Banana)       \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::Funnel)       \
  MYRIAD_LANE_BOTH_PRECISIONS(X, HmcLaneFamily, models::Radon)

#define MYRIAD_FOR_EACH_AIS_LANE_TARGET(X)                                   \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::Gaussian)            \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::ProductOfExperts)    \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::BoltzmannRelaxation) \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::LinearGenerative)    \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::Mcrbm)               \
  MYRIAD_LANE_BOTH_PRECISIONS(X, AisLaneFamily, models::Radon)

#define MYRIAD_FOR_EACH_CHMC_LANE_GENERATOR(X)              \
  MYRIAD_LANE_WITH_NOISE(X, models::Sphere)                 \
  MYRIAD_LANE_WITH_NOISE(X, models::LinearGaussian)         \
  MYRIAD_LANE_WITH_NOISE(X, models::LotkaVolterra)          \
  MYRIAD_LANE_WITH_NOISE(X, models::LotkaVolterraSummaries) \
  MYRIAD_LANE_WITH_NOISE(X, models::Gld)

// Each instruction set's translation unit defines its kernels with this (compiled_lane_kernel,
// detail/lane_kernel_choice.hpp).
#define MYRIAD_LANE_KERNEL_INSTANCE(Family, Model, T) \
  template lane_kernel_t<Family, Model, T>            \
  compiled_lane_kernel<Family, Model, T, MYRIAD_LANE_ARCH>();
