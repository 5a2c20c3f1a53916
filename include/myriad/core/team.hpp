#pragma once
// A team: the lanes that cooperate on one particle or chain (DESIGN.md, rule 6(b): a warp or
// tile per chain). Per-particle code written against the Team concept runs unchanged with one
// lane (SerialTeam: the CPU backend and the thread-per-particle kernels) and with a warp
// (kernels/warp_team.cuh: the warp-per-particle kernels), so a model that is costly per
// evaluation but has few particles (the HAIS paper's protocol: 200 particles) can use 32× the
// lanes of thread-per-particle without a second copy of the algorithm.
//
// The Team concept (every member callable from MYRIAD_HD code, every lane calling it):
//
//   static constexpr bool kSerial;   true only for SerialTeam (one lane)
//   int rank() const;                this lane, 0 … size() − 1
//   int size() const;                lanes in the team
//   void sync() const;               barrier with memory ordering: what a lane wrote before it
//                                    is visible to every lane after it
//   T sum(T x) const;                Σ over lanes of x, the same bits in every lane
//   bool all(bool x) const;          x in every lane
//   T broadcast(T x, int from) const;  lane `from`'s x, in every lane
//
// Conventions of team code. Element i of a per-particle vector belongs to lane i mod size(), so
// loops run `for (int i = team.rank(); i < n; i += team.size())` and a lane reads back only what
// it wrote itself; data crossing lanes (a random fill in pairs, a model's cooperative gradient)
// is followed by team.sync() before another lane reads it. Scalars that steer control flow
// (an energy, an accept decision) come out of sum/all/broadcast, so every lane takes the same
// branch and the team never diverges around a collective. With one lane every loop is the plain
// loop in the plain order, so SerialTeam code is bit-identical to code written without teams.

#include <cstdint>
#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"

namespace myriad {

/// The one-lane team: every collective is the identity.
struct SerialTeam {
  static constexpr bool kSerial = true;
  MYRIAD_HD int rank() const { return 0; }
  MYRIAD_HD int size() const { return 1; }
  MYRIAD_HD void sync() const {}
  template <class T>
  MYRIAD_HD T sum(T x) const {
    return x;
  }
  /// A bool, or a mask of chains in SIMD lanes (core/lanes.hpp), which one lane holds whole.
  template <class Mask>
  MYRIAD_HD Mask all(Mask x) const {
    return x;
  }
  template <class T>
  MYRIAD_HD T broadcast(T x, int /*from*/) const {
    return x;
  }
};

/// out[i] = rng.normal(iteration, purpose, i) for i < n, filled by the whole team in Philox pairs
/// (RandomStream::fill_normal). A pair's two elements belong to other lanes than its writer, so
/// the fill is fenced by team barriers on both sides: no lane still reads the old values when it
/// starts, and every lane sees the new ones when it returns.
template <class T, class Team, class Rng, class Vec>
MYRIAD_HD void fill_normal(const Team& team, const Rng& rng, std::uint32_t iteration,
                           Purpose purpose, Vec& out, int n) {
  team.sync();
  rng.template fill_normal<T>(iteration, purpose, out, n, team.rank(), team.size());
  team.sync();
}

/// f() on lane 0 alone, for one-lane code inside team code (a generator's own function, a
/// structured factorisation): fenced by barriers on both sides, so that f sees what every lane
/// wrote and every lane sees what f wrote. Returns f()'s value in every lane (an arithmetic type
/// or bool; nothing for void). With one lane it is f().
template <class Team, class F>
MYRIAD_HD auto on_lane_zero(const Team& team, F&& f) {
  using Value = decltype(f());
  if constexpr (Team::kSerial) {
    (void)team;
    return f();
  } else if constexpr (std::is_void<Value>::value) {
    team.sync();
    if (team.rank() == 0) f();
    team.sync();
  } else {
    // Broadcast as int for bool: warp shuffles have no bool overload.
    using Wire = std::conditional_t<std::is_same<Value, bool>::value, int, Value>;
    team.sync();
    Wire value = Wire(0);
    if (team.rank() == 0) value = static_cast<Wire>(f());
    team.sync();
    return static_cast<Value>(team.broadcast(value, 0));
  }
}

}  // namespace myriad
