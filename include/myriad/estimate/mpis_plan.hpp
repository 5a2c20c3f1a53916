#pragma once
// The contraction plan of massively parallel importance sampling (mpis.md §3): a plated model's
// structure compiled into index variables, log-factor tensors and the sequence of operations
// that turns them into log P_MP for each independent run. The plan is host metadata only; the
// engine (estimate/mpis_engine.hpp) allocates and fills the tensors on a backend.
//
// Variables (axes of the tensors):
//   0            the run (independent estimates batched together; never summed)
//   1 … P        one per plate, extent its size (batch dims of every contraction)
//   P+1 …        one K-dim per latent group (extent K), plus for the chain latent of a
//                timeseries plate a "lag" K-dim just before it (its value at t − 1)
// Every tensor's axes are in ascending variable order (run, plates outermost first, then
// K-dims), row-major, last axis fastest, so eliminated K-dims are innermost.
//
// Tensors: first one log-factor per latent group, ℓ_g over (run, g's plates, its parents'
// K-dims, its lag, its own K-dim) (mpis.md §3.1), then one per observed group, λ_o over (run,
// the plates of its deepest parent, its parents' K-dims) with any deeper data-only plates summed
// in, then the outputs of the operations.
//
// Operations, in execution order (LOGPQ of mpis.md §3.2, children before parents):
//   eliminate   U = LSE_E(Σ inputs) over E ⊆ the plate's own K-dims, order chosen to minimise
//               the largest clique (§3.3); with E empty, merges what is left
//   plate_sum   sums a finished plate's result over its plate dim (§3.5)
//   chain       a timeseries plate's result M[…, t, lag, k] reduced by a tree of log-matrix
//               products over t and closed at both ends (§3.6)

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/estimate/log_contract.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

enum class MpisOpKind { eliminate, plate_sum, chain };

/// One operation of the plan.
struct MpisOp {
  MpisOpKind kind = MpisOpKind::eliminate;
  int plate = kRootPlate;      ///< where it runs (its tensors carry this plate's path)
  std::vector<int> inputs;     ///< tensor ids, each consumed here
  std::vector<int> eliminate;  ///< eliminate: K-dims summed out; plate_sum: the plate var;
                               ///< chain: {plate var, lag, chain}
  int output = -1;             ///< tensor id
  int clique = 0;              ///< K-dims in the step's index space (eliminate; chain: 3)
};

/// A tensor of the plan: its variables (ascending) and extents.
struct MpisTensor {
  std::vector<int> vars;
  std::vector<std::int64_t> extents;
  int plate = kRootPlate;  ///< the plate whose contraction consumes it
  std::int64_t size() const;
};

struct MpisPlan {
  static constexpr int kRunVar = 0;
  std::int64_t k = 0;
  int runs = 0;

  std::vector<int> plate_var;   ///< per plate
  std::vector<int> latent_var;  ///< per latent: its K-dim
  std::vector<int> lag_var;     ///< per latent: its lag K-dim (chain latents), else −1
  std::vector<std::int64_t> var_extent;
  std::vector<int> var_plate;   ///< home plate of each variable (a plate var: the plate)
  std::vector<int> var_latent;  ///< the latent a K-dim or lag belongs to, else −1

  std::vector<MpisTensor> tensors;
  std::vector<int> latent_factor;    ///< tensor id of ℓ_g
  std::vector<int> observed_factor;  ///< tensor id of λ_o
  std::vector<int> observed_home;    ///< plate λ_o lives in (its deepest parent's plate)
  std::vector<MpisOp> ops;
  int result = -1;  ///< tensor over (run): log P_MP of each run

  int max_clique = 0;  ///< largest number of K-dims in one step (mpis.md §3.3)

  bool is_k_var(int var) const { return var > static_cast<int>(plate_var.size()); }
  /// Σ over operations of (output elements × eliminated assignments): LSE terms of the forward
  /// pass.
  double forward_terms() const;
  /// Bytes of every tensor the forward pass keeps for the backward pass and index sampling
  /// (factors, messages, the chain levels), in double.
  double forward_bytes() const;
  /// Elements of the levels above a timeseries chain's input (operation `op`, a chain): level
  /// l + 1 holds ⌈steps_l / 2⌉ of the input's per-step matrices, down to one (so a little
  /// more than the input when a level's step count is odd).
  double chain_level_elements(const MpisOp& op) const;
};

/// Splitting a large plate into chunks to bound memory (mpis.md §3.3, the reference code's
/// `Split`): the subtree of `plate` (its factors and operations) is computed for `size` of its
/// elements at a time and its plate sum accumulated, since the plate's product over elements
/// is a sum of logs. The plate must be a child of the root and not a timeseries; size 0 means
/// no chunking.
struct MpisChunking {
  int plate = kRootPlate;
  std::int64_t size = 0;
  bool active() const { return size > 0; }
};

/// Throws myriad::invalid_argument unless `chunking` is inactive or valid for `structure`.
void validate_chunking(const PlatedStructure& structure, const MpisChunking& chunking);

/// Whether tensor `id` of `plan` carries the chunked plate's dim (lives in the chunked subtree).
bool in_chunk(const MpisPlan& plan, const MpisChunking& chunking, int id);

/// Elements of the largest tensor an engine allocates for `plan` (a chunked subtree's tensors
/// hold one window), to check against kMaxLogTensorSize.
double largest_tensor_elements(const MpisPlan& plan, const MpisChunking& chunking,
                               const PlatedStructure& structure);

/// Compiles `structure` for K particles per latent instance and `runs` independent runs.
/// Throws myriad::invalid_argument for K < 1, runs < 1, an invalid structure, a step beyond
/// the contraction kernel's limits (kMaxStepInputs, kMaxStepAxes), or a tensor too large for
/// 64-bit indices.
MpisPlan plan_mpis(const PlatedStructure& structure, std::int64_t k, int runs,
                   EliminationOrderConfig order_config = {});

/// A readable description of the plan's operations (one line each: kind, plate, eliminated
/// variables by latent name, clique), for logs and run.json.
std::vector<std::string> describe_plan(const MpisPlan& plan, const PlatedStructure& structure);

}  // namespace myriad
