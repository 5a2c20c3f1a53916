// The per-lane random numbers of detail/lane_random.hpp, at the baseline instruction set.

#include "myriad/detail/lane_random.hpp"

namespace myriad {
namespace {

template <class T>
void uniforms(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
              Purpose purpose, std::uint32_t index, T* out) {
  for (int l = 0; l < width; ++l)
    out[l] = RandomStream(seed, static_cast<std::uint64_t>(first + l))
                 .uniform<T>(iteration, purpose, index);
}

}  // namespace

void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, double* out) {
  uniforms(seed, first, width, iteration, purpose, index, out);
}
void uniform_lanes(std::uint64_t seed, std::int64_t first, int width, std::uint32_t iteration,
                   Purpose purpose, std::uint32_t index, float* out) {
  uniforms(seed, first, width, iteration, purpose, index, out);
}

}  // namespace myriad
