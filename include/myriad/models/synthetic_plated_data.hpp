#pragma once
// What the owning data classes of the MP IS paper models share (bus_breakdown, chimpanzees,
// movielens, occupancy): host and device views (core/mirrored_array.hpp), the latent values
// their synthetic data were drawn from, and the keyed draws that make those data the same on
// every machine.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::models {

template <class Derived>
class SyntheticPlatedData : public MirroredViews<Derived> {
 public:
  /// The value latent g took when the data were drawn, [instance][event] with instances
  /// row-major over its plates (the engine's particle layout without run and k).
  const std::vector<double>& true_latent(int g) const {
    return true_latents_.at(static_cast<std::size_t>(g));
  }

 protected:
  /// The synthetic data's random numbers: each scalar or event vector is one sequential
  /// ParticleRandom draw of RandomStream(data_seed, 0) keyed by (purpose, group, element).
  struct KeyedDraws {
    RandomStream stream;
    ParticleRandom operator()(std::uint32_t purpose, std::uint32_t group,
                              std::int64_t element) const {
      return ParticleRandom(stream, purpose, group, static_cast<std::uint32_t>(element));
    }
  };
  static KeyedDraws keyed_draws(std::uint64_t data_seed) { return {RandomStream(data_seed, 0)}; }

  std::vector<std::vector<double>> true_latents_;
};

}  // namespace myriad::models
