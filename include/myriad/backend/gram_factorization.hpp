#pragma once
// Where the CUDA constrained-HMC backend factors the Gram matrices G = J Jᵀ of its transitions
// (DESIGN.md rule 6; kernels/cuda_chmc_backend.cuh):
//
//   chain    inside the fused kernel, by the chain's own thread or warp (tiers (a) and (b): the
//            per-chain Cholesky of linalg/cholesky.hpp or linalg/team_ops.hpp). One launch runs
//            a whole chunk of iterations.
//   registers, thread, tile, library
//            batched across all chains between the phases of a transition: the transition is
//            split at its 1 + N_s · N_g factorisations (ChmcMachine::begin_transition /
//            resume_transition), each chain forms its Gram matrix in a column-major batch, and
//            linalg::batched_cholesky_cuda factors the batch on that tier (registers: a thread
//            per matrix holding it in registers, M ≤ 12; thread and tile: shared memory;
//            library: cuSOLVER potrfBatched) before the next phase's launch. Dense Grams only:
//            a structured Gram (diagonal or triangular + low rank) has its own O(MK) algorithm.
//
// `automatic` picks library for a dense Gram whose chain a warp serves, and chain otherwise (the
// measurement under resolve_gram_factorization). The CPU backend always factors in the chain.

#include <string>

#include "myriad/backend/team_mapping.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

enum class GramFactorization : int { automatic, chain, registers, thread, tile, library };

inline constexpr EnumName<GramFactorization> kGramFactorizationNames[] = {
    {GramFactorization::automatic, "auto"},      {GramFactorization::chain, "chain"},
    {GramFactorization::registers, "registers"}, {GramFactorization::thread, "thread"},
    {GramFactorization::tile, "tile"},           {GramFactorization::library, "library"}};

inline const char* to_string(GramFactorization f) { return enum_name(kGramFactorizationNames, f); }

/// Whether `f` factors across chains between launches (registers, thread, tile, library).
inline bool is_batched(GramFactorization f) {
  return f == GramFactorization::registers || f == GramFactorization::thread ||
         f == GramFactorization::tile || f == GramFactorization::library;
}

/// The batched Cholesky tier of a batched factorisation.
inline linalg::CholeskyTier cholesky_tier(GramFactorization f) {
  MYRIAD_EXPECTS(is_batched(f), "cholesky_tier: '", to_string(f), "' is not a batched tier");
  switch (f) {
    case GramFactorization::registers:
      return linalg::CholeskyTier::registers;
    case GramFactorization::thread:
      return linalg::CholeskyTier::thread;
    case GramFactorization::tile:
      return linalg::CholeskyTier::tile;
    default:
      return linalg::CholeskyTier::library;
  }
}

/// Throws myriad::invalid_argument when `requested` cannot serve a generator whose Gram has
/// `structure`: a batched tier needs a dense Gram. (The size limits of the registers and shared-
/// memory tiers are the device's, checked where the CUDA backend is made.)
inline void check_gram_factorization(GramFactorization requested, GramStructure structure) {
  MYRIAD_EXPECTS(!is_batched(requested) || structure == GramStructure::dense,
                 "the batched Gram factorisation '", to_string(requested),
                 "' needs a dense Gram matrix; this generator declares a structured one (use "
                 "chain)");
}

/// What `automatic` resolves to for a Gram structure and the chain mapping the backend resolved
/// (resolve_chmc_chain_mapping): library for a dense Gram whose chain a warp serves, chain
/// otherwise; other requests are returned as asked, once check_gram_factorization has accepted
/// them.
///
/// Measured on an H100 (bench/results/gpu-2026-11-26-h100.md, BM_chmc_mapping at 4096 chains,
/// chain-iterations per second, library over chain): with a warp per chain 1.12× (M = 9),
/// 1.24× (16), 0.99× (32), 1.04× (64) — the lanes left idle while one factors in the chain cost
/// more than the launches between phases; with a thread per chain 0.76× (9), 0.68× (16),
/// 0.79× (32): the thread's own factorisation overlaps its other work, the phases' launches and
/// Gram round trips do not.
inline GramFactorization resolve_gram_factorization(GramFactorization requested,
                                                    GramStructure structure,
                                                    TeamMapping chain_mapping) {
  if (requested == GramFactorization::automatic) {
    return structure == GramStructure::dense && chain_mapping == TeamMapping::warp
               ? GramFactorization::library
               : GramFactorization::chain;
  }
  check_gram_factorization(requested, structure);
  return requested;
}

}  // namespace myriad
