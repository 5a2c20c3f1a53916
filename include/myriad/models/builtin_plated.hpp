#pragma once
// The built-in plated models of MP IS (`myriad mpis`). Each one's header declares the CUDA
// backend the library instantiates for it (model/library_instances.hpp).

#include "myriad/models/bus_breakdown.hpp"
#include "myriad/models/chimpanzees.hpp"
#include "myriad/models/gaussian_chain.hpp"
#include "myriad/models/hierarchical_gaussian.hpp"
#include "myriad/models/movielens.hpp"
#include "myriad/models/occupancy.hpp"
