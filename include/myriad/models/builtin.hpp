#pragma once
// The built-in density models of `myriad sample`. Each one's header declares the CUDA backend
// the library instantiates for it (model/library_instances.hpp), so host-compiled code may run
// it on a GPU.

#include "myriad/models/banana.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/logistic.hpp"
#include "myriad/models/radon.hpp"
