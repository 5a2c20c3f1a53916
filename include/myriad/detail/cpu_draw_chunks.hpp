#pragma once
// The CPU backends' run(): iterations in chunks, each chunk's recorded quantities handed to the
// DrawSink before the next chunk starts, so that host memory holds one chunk whatever the number
// of draws (the CUDA backends do the same through kernels/draw_chunks.cuh, copying one chunk
// while the next computes).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/mcmc/iteration_stats.hpp"

namespace myriad {

/// Runs num_iterations iterations, chunk_iterations at a time (all at once when ≤ 0):
/// run_chunk(done, n, recorded) runs the n iterations that follow the first `done` and returns
/// their statistics, writing quantity q of chain c after iteration i to
/// recorded[(i · quantities + q) · chains + c] when `recorded` is not null (there is a sink),
/// which then consumes them as draws first_draw + done … . `buffer` holds one chunk. Returns the
/// statistics of all chunks.
template <class T, class RunChunk>
IterationStats run_in_draw_chunks(int num_iterations, int chunk_iterations, int quantities,
                                  std::int64_t chains, DrawSink<T>* sink, std::int64_t first_draw,
                                  std::vector<T>& buffer, RunChunk&& run_chunk) {
  check_iteration_count(num_iterations);
  IterationStats total;
  if (chunk_iterations <= 0) chunk_iterations = std::max(num_iterations, 1);
  for (int done = 0; done < num_iterations; done += chunk_iterations) {
    const int n = std::min(chunk_iterations, num_iterations - done);
    if (sink) buffer.resize(static_cast<std::size_t>(n) * quantities * chains);
    total += run_chunk(done, n, sink ? buffer.data() : nullptr);
    if (sink) sink->consume(buffer.data(), first_draw + done, n);
  }
  return total;
}

}  // namespace myriad
