#pragma once
// The OpenMP thread count for the scope of a benchmark: the `cpu1` rows that give the one-core
// baselines (one_core_baseline.hpp) run the CPU backends on one thread.

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace myriad::bench {

/// Sets the OpenMP thread count to `threads` (> 0; 0 leaves it) until the scope ends.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads) {
#if defined(_OPENMP)
    previous_ = omp_get_max_threads();
    if (threads > 0) omp_set_num_threads(threads);
#else
    (void)threads;
#endif
  }
  ~ThreadLimit() {
#if defined(_OPENMP)
    omp_set_num_threads(previous_);
#endif
  }

 private:
  int previous_ = 1;
};

}  // namespace myriad::bench
