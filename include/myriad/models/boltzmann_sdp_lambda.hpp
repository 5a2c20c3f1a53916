#pragma once
// The SDP relaxations of the built-in Boltzmann machines (thesis App. E; thesis-methods.md
// §9.6): for the random system of (units, seed) (BoltzmannRelaxationData::random_parameters),
// the diagonal Λ that minimises λ_max(W + Λ) subject to W + Λ ⪰ 0, whose optimum is
// rank-deficient, so the relaxation has D < D_B coordinates. Solved offline by
// scripts/boltzmann-sdp-lambda (cvxpy with the Clarabel interior-point solver, PyPI), whose
// output is shipped: data/boltzmann-sdp-lambda.json (with the solver's report) and the table
// compiled into the library (src/models/boltzmann_sdp_lambda.cpp, generated from it).

#include <cstdint>
#include <vector>

namespace myriad::models {

/// How a Boltzmann machine is relaxed: Λ = cI (D = D_B), or the SDP's Λ (D < D_B).
enum class BoltzmannLambda { identity, sdp };

/// The shipped SDP Λ of the system (units, seed), D_B values; null where none is shipped.
const std::vector<double>* boltzmann_sdp_lambda(int units, std::uint64_t seed);

/// The (units, seed) pairs with a shipped SDP Λ.
struct BoltzmannSystem {
  int units;
  std::uint64_t seed;
};
std::vector<BoltzmannSystem> boltzmann_sdp_systems();

}  // namespace myriad::models
