#pragma once
// OpenMP reduction of IterationStats for the CPU backends' loops over chains: every counter is an
// integer (acceptance in 2^-32 fixed point), so the totals do not depend on the thread count.

#include "myriad/backend/hmc_backend.hpp"

#pragma omp declare reduction(merge_stats              \
                              : myriad::IterationStats \
                              : omp_out += omp_in)     \
    initializer(omp_priv = myriad::IterationStats{})
