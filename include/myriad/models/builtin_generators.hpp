#pragma once
// The built-in generator models of constrained HMC. Each one's header declares the CUDA backend
// the library instantiates for it and for its noisy variant (model/library_instances.hpp;
// kernels/builtin_instances.cmake), so host-compiled code may run it on a GPU through
// myriad::sample_chmc. Generators with data (linear_gaussian, gld, lotka_volterra) run on
// CUDA only with their problem's device_model(), whose views point to device memory.

#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"
