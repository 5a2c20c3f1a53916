#pragma once
// The backend interface for many-chain constrained HMC: like HmcBackend (backend/hmc_backend.hpp)
// but with the constrained transition's settings and per-chain scratch for the Jacobian and Gram
// factors. Implementations: CPU (backend/cpu_chmc_backend.hpp) and CUDA
// (kernels/cuda_chmc_backend.cuh), both calling the per-chain ChmcMachine.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/chain_ensemble.hpp"
#include "myriad/backend/gram_factorization.hpp"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/backend/team_mapping.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/mcmc/step_back_off.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// Ensemble-wide settings of a run of constrained-HMC iterations.
template <class T>
struct ChmcSettings {
  std::uint64_t seed = 1;
  ChmcStep<T> step;   ///< δt, N_g, tolerances; step.steps is drawn per iteration
  int min_steps = 4;  ///< N_s is uniform on {min_steps, …, max_steps}, shared by all chains
  int max_steps = 8;
  /// Warm-up only: chain c runs at δt · 2^−h_c, its own back-off (mcmc/step_back_off.hpp),
  /// updated after each of its transitions. Off: every chain runs at δt and h_c is left alone.
  bool step_back_off = false;
};

/// N_s for an iteration: uniform on {lo, …, hi} from the ensemble stream, the same for every
/// chain (constrained-hmc.md §7: valid because N_s does not depend on the state).
MYRIAD_HD inline int uniform_trajectory_steps(std::uint64_t seed, std::uint32_t iteration, int lo,
                                              int hi) {
  if (hi <= lo) return lo;
  const RandomStream ensemble(seed, kEnsembleStream);
  const double u = ensemble.uniform<double>(iteration, Purpose::trajectory, 0);
  const int steps = lo + static_cast<int>(u * (hi - lo + 1));
  return steps > hi ? hi : steps;
}

/// Every chain's state between iterations, for a checkpoint: the backend's per-chain arrays as it
/// holds them — positions u, ∇φ, φ, the step back-offs and the workspaces that keep each chain's
/// Jacobian and Gram factor at its current point — as bytes. Unlike HMC's state it is not
/// re-evaluated on restoring (a Gram factor computed again, by another code path or tier, could
/// differ in its last bits), so it is restored only into a backend of the same kind, generator,
/// chain count and chain mapping: restore_chain_state checks every array's size.
struct ChmcChainState {
  std::vector<std::vector<unsigned char>> arrays;
};

/// The bytes of an array, for ChmcChainState.
template <class Value>
std::vector<unsigned char> state_bytes(const std::vector<Value>& values) {
  const auto* first = reinterpret_cast<const unsigned char*>(values.data());
  return std::vector<unsigned char>(first, first + values.size() * sizeof(Value));
}

/// Puts back an array that state_bytes took, into `values` of the same size (invalid_argument
/// otherwise, naming `what`).
template <class Value>
void restore_state_bytes(std::vector<Value>& values, const std::vector<unsigned char>& bytes,
                         const char* what) {
  MYRIAD_EXPECTS(bytes.size() == values.size() * sizeof(Value), "restore_chain_state: ", what,
                 " has ", bytes.size(), " bytes, the backend holds ", values.size() * sizeof(Value),
                 " (another backend, generator or chain count)");
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
}

/// Many-chain constrained HMC on one device.
template <class T>
class ChmcBackend : public ChainEnsemble {
 public:
  /// N: the generator's inputs u.
  virtual int input_dim() const = 0;

  /// Places every chain on the manifold (the generator's initialize(), up to max_tries
  /// attempts). Chains c with equal c / chains_per_init share their initial point. Returns the
  /// number of chains left without one.
  virtual std::int64_t initialize(std::uint64_t seed, int max_tries,
                                  std::int64_t chains_per_init) = 0;

  /// Runs iterations first_iteration … first_iteration + num_iterations − 1, delivering recorded
  /// quantities to the sink (if any) in chunks as HmcBackend::run does.
  virtual IterationStats run(const ChmcSettings<T>& settings, std::uint32_t first_iteration,
                             int num_iterations, DrawSink<T>* sink, std::int64_t first_draw,
                             int chunk_iterations) = 0;

  /// Current positions u as a [dim][chain] host array.
  virtual std::vector<T> positions() const = 0;

  /// Each chain's step back-off h_c (ChmcSettings::step_back_off): zero after initialize().
  virtual std::vector<std::uint8_t> step_halvings() const = 0;

  /// Every chain's state (checkpoints), and putting it back into this backend.
  virtual ChmcChainState chain_state() const = 0;
  virtual void restore_chain_state(const ChmcChainState& state) = 0;

  /// −φ(u) at every chain's current point (length chains): the log density on the manifold up
  /// to a constant. The warm-up compares two readings to find chains that have not moved.
  virtual std::vector<T> log_densities() const = 0;

  /// Chain c takes chain source[c]'s point and step back-off and re-evaluates its Jacobian, Gram
  /// factor, φ and ∇φ there, for every c with source[c] ≠ c (a warm-up restart of a stranded
  /// chain). No source may itself move: source[source[c]] == source[c]. Returns the number of
  /// restarted chains whose evaluation failed (none, unless the generator is not deterministic).
  virtual std::int64_t copy_chains(const std::vector<std::int64_t>& source) = 0;
};

/// How the CUDA backend maps chains onto threads (kernels/chmc_kernels.cuh). `automatic` picks
/// warp for a dense Gram matrix (no structure declared) with M ≥ kWarpPerChainMinOutputs, where
/// the O(M²N) Gram and Cholesky and the O(MN) products dominate a chain's work and 32 lanes share
/// them; thread otherwise (structured Grams are O(MK) and run on one lane either way).
using ChmcChainMapping = TeamMapping;

/// The smallest M for which `automatic` gives a chain a warp (DESIGN.md rule 6(b)'s "D ~16–128"
/// tier), as measured on an H100 (bench/results/gpu-2026-11-26-h100.md, BM_chmc_mapping at 4096
/// chains, chain-iterations per second of warp-chain over thread-chain): 0.52× at M = 9
/// (lotka_volterra_summaries), 1.7× at 16, 3.8× at 32 (linear_gaussian); at M = 64 and 128 one
/// thread per chain is slower still (no thread row finished in a minute).
constexpr int kWarpPerChainMinOutputs = 16;

/// The mapping `automatic` resolves to for a generator's Gram structure and output dimension M
/// (thread and warp are returned as asked).
inline ChmcChainMapping resolve_chmc_chain_mapping(ChmcChainMapping requested,
                                                   GramStructure structure, int outputs) {
  if (requested != ChmcChainMapping::automatic) return requested;
  return structure == GramStructure::dense && outputs >= kWarpPerChainMinOutputs
             ? ChmcChainMapping::warp
             : ChmcChainMapping::thread;
}

/// How the CUDA backend runs its chains: the chain mapping and where the Gram matrices are
/// factored (backend/gram_factorization.hpp). Converts from a mapping alone.
struct ChmcCudaOptions {
  ChmcChainMapping chain_mapping = ChmcChainMapping::automatic;
  GramFactorization gram_factorization = GramFactorization::automatic;

  ChmcCudaOptions(ChmcChainMapping mapping = ChmcChainMapping::automatic,  // NOLINT: implicit
                  GramFactorization factorization = GramFactorization::automatic)
      : chain_mapping(mapping), gram_factorization(factorization) {}
};

/// The CUDA backend for a generator (defined in kernels/cuda_chmc_backend.cuh; instantiated for
/// the built-in generators in the library, and by user code compiled with nvcc for its own).
/// The generator must be trivially copyable and hold device-visible data. Throws
/// myriad::unavailable_error without CUDA or a device, myriad::invalid_argument for options the
/// generator cannot take or when the ensemble's state and scratch do not fit in free device
/// memory. In a build without CUDA it is this inline definition, which throws.
#if defined(MYRIAD_HAS_CUDA)
template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cuda_chmc_backend(const Generator& generator,
                                                       std::int64_t chains,
                                                       ChmcCudaOptions options = {});
#else
template <class Generator, class T>
std::unique_ptr<ChmcBackend<T>> make_cuda_chmc_backend(const Generator&, std::int64_t,
                                                       ChmcCudaOptions = {}) {
  throw unavailable_error("myriad was built without CUDA; use --device cpu or auto");
}
#endif

}  // namespace myriad
