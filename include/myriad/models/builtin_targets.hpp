#pragma once
// The built-in annealing targets of `myriad ais` (estimate/annealing_target.hpp). Each one's
// header declares the CUDA AIS backend the library instantiates for it
// (model/library_instances.hpp), so host-compiled code may run it on a GPU.

#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"
#include "myriad/models/mcrbm.hpp"
#include "myriad/models/product_of_experts.hpp"
#include "myriad/models/radon.hpp"
