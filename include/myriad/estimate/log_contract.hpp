#pragma once
// Log-space sum-product over log-factor tensors: the contraction that turns the K^n index
// combinations of the massively parallel importance-sampling estimator into log P_MP
// (mpis.md §2.2, §3). Host reference implementation; CUDA kernels and the plated-model layer
// build on these steps and are checked against them.

#include <cstdint>
#include <vector>

#include "myriad/estimate/log_sum_product_element.hpp"
#include "myriad/estimate/log_tensor.hpp"

namespace myriad {

/// The geometry of one step U = LSE_E(Σ_j T_j) over strided views: the per-element functor
/// (estimate/log_sum_product_element.hpp) and the output's variables and extents. The output is
/// contiguous row-major over out_vars.
struct LogSumProductPlan {
  LogSumProductElement element;
  std::vector<int> out_vars;
  std::vector<std::int64_t> out_extents;
  std::int64_t out_size = 1;
};

/// Plans U = LSE_E(Σ_j T_j) over `inputs` (data pointers may be device addresses: only the
/// geometry is read). The output variables are D \ E in order of first appearance in the
/// inputs, or `out_vars` when given (which must hold exactly D \ E). Throws
/// myriad::invalid_argument for no inputs, a variable whose extents disagree between inputs,
/// a variable to eliminate that no input carries or that is listed twice, an out_vars that is
/// not D \ E, more than kMaxStepInputs inputs or kMaxStepAxes axes, and index spaces beyond
/// kMaxLogTensorSize.
LogSumProductPlan plan_log_sum_product(const std::vector<LogTensorView>& inputs,
                                       const std::vector<int>& eliminate,
                                       const std::vector<int>* out_vars = nullptr);

/// U = LSE_E(Σ_j T_j) (mpis.md §3.2): the broadcast sum of the inputs over the union D of
/// their variables, log-sum-exp'd over the variables in `eliminate`. The result is over D \ E,
/// in order of first appearance in the inputs.
///
/// The broadcast sum is never materialised (mpis.md §3.3–§3.4): each output element takes a
/// max pass and then a shifted sum pass over the eliminated assignments, so memory is inputs +
/// output and no unshifted exp is taken (exact for any offset, no eps). −inf entries are zero
/// weights; an output element whose terms are all −inf is −inf. With `eliminate` empty the
/// result is the plain broadcast sum.
///
/// Throws myriad::invalid_argument for no inputs, a variable whose extents disagree between
/// inputs, a variable to eliminate that no input carries or that is listed twice, NaN or +inf
/// entries, and index spaces beyond kMaxLogTensorSize.
/// With `out_vars`, the result's axes are in that order (see plan_log_sum_product).
LogTensor log_sum_product(const std::vector<const LogTensor*>& inputs,
                          const std::vector<int>& eliminate,
                          const std::vector<int>* out_vars = nullptr);
LogTensor log_sum_product(const std::vector<LogTensor>& inputs, const std::vector<int>& eliminate,
                          const std::vector<int>* out_vars = nullptr);

/// One step of an elimination order (mpis.md §3.2): merge the live tensors `inputs` and sum
/// out `eliminate`. Tensor ids: 0..m−1 are the m given tensors, m + t is the output of step t.
struct EliminationStep {
  std::vector<int> eliminate;    ///< variables summed out here (E_t), ascending
  std::vector<int> inputs;       ///< tensor ids merged here, ascending; each is consumed
  std::vector<int> output_vars;  ///< scope of the step's output, D_t \ E_t, ascending
  int clique = 0;                ///< |D_t|, the number of variables of the step's index space
};

struct EliminationOrder {
  std::vector<EliminationStep> steps;
  /// Largest |D_t| over the steps: the step cost is Π_{v∈D_t} extent(v) (mpis.md §3.3). 0 with
  /// no steps.
  int max_clique = 0;
  /// True when the order came from exhaustive search and so minimises max_clique.
  bool exhaustive = false;
};

struct EliminationOrderConfig {
  /// Search every order when at most this many variables are to be eliminated; otherwise pick
  /// greedily the variable whose elimination step has the smallest clique.
  int exhaustive_max_vars = 8;
};

/// An order in which to eliminate the variables `eliminate` from tensors with the given scopes
/// (variable ids), minimising the largest induced clique (mpis.md §3.3). Eliminating v merges
/// every live tensor that carries v; the step also sums out every other variable of
/// `eliminate` that no remaining tensor carries (§3.2: "E = dims that appear in no remaining
/// tensor"). If more than one tensor is left at the end, a last step with empty `eliminate`
/// merges them, so the steps always leave exactly one tensor (none are needed for one tensor
/// and nothing to eliminate). Clique sizes count variables: pass only the K-dims when plate
/// dims are batch dims that should not count. Ties break towards the smaller output scope, then
/// the smaller variable id, so the result is deterministic.
///
/// Throws for no scopes, a variable of `eliminate` that no scope carries or that is listed
/// twice, and duplicate variables within a scope.
EliminationOrder choose_elimination_order(const std::vector<std::vector<int>>& scopes,
                                          const std::vector<int>& eliminate,
                                          EliminationOrderConfig config = {});

/// Runs `order` on `tensors` (whose scopes it was chosen for) and returns every step's output,
/// in step order: the messages that a backward pass (mpis.md §5) or index sampling (§6) needs.
/// The last message is the contraction's result; with no steps the result is tensors[0].
std::vector<LogTensor> run_elimination(const std::vector<LogTensor>& tensors,
                                       const EliminationOrder& order);

/// Sums out (LSE) every variable not in `keep` by choose_elimination_order, returning a tensor
/// over the variables of `keep` that some tensor carries, in `keep`'s order (those that none
/// carries are absent from the result). For a flat (plate-free) model log P_MP =
/// contract_all(factors, {}) (mpis.md §2.2–§3.2), a scalar.
LogTensor contract_all(const std::vector<LogTensor>& tensors, const std::vector<int>& keep,
                       EliminationOrderConfig config = {});

}  // namespace myriad
