#pragma once
// Settings and results of massively parallel importance sampling (myriad::mpis, `myriad mpis`):
// the contract between the C++ API, the CLI and the output writers.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "myriad/backend/device.hpp"
#include "myriad/backend/mpis_backend.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_z.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

/// The estimator: MP IS over all K^n index combinations, or the global importance-sampling
/// baseline with K joint samples (mpis.md §1, §8).
enum class MpisMethod { massively_parallel, global };

inline constexpr EnumName<MpisMethod> kMpisMethodNames[] = {
    {MpisMethod::massively_parallel, "mpis"},
    {MpisMethod::global, "global"},
    {MpisMethod::massively_parallel, "massively_parallel"}};

inline std::string to_string(MpisMethod method) { return enum_name(kMpisMethodNames, method); }

/// Configuration of myriad::mpis; validated by validate().
struct MpisConfig {
  std::int64_t k = 10;       ///< particles per latent instance (MP IS) or joint samples (global)
  int runs = 10;             ///< independent estimates, for error bars
  std::int64_t samples = 0;  ///< exact posterior draws per run (mpis.md §6); 0 for none
  std::uint64_t seed = 1;
  Device device = Device::automatic;
  MpisMethod method = MpisMethod::massively_parallel;
  bool moments = true;            ///< backward pass: marginal weights and posterior moments
  bool keep_weights = false;      ///< keep every particle and its marginal weight in the result
  int runs_per_batch = 0;         ///< runs computed together; 0: as many as the budget allows
  double memory_budget = 0;       ///< bytes for one batch; 0: 80% of the device's available memory
  std::int64_t global_chunk = 0;  ///< global IS: joint samples per launch; 0: automatic
  ContractionPath contraction = ContractionPath::automatic;  ///< CUDA only
  /// CPU only: contraction steps in SIMD lanes of output elements (false: one element at a
  /// time, the reference the lanes are tested against).
  bool cpu_simd_lanes = true;
  /// Split this top-level plate into chunks of chunk_size elements (mpis.md §3.3) to bound
  /// memory; empty: automatically, only when one run would not fit the budget. chunk_size 0:
  /// the largest that fits.
  std::string chunk_plate;
  std::int64_t chunk_size = 0;
  std::function<void(const char* phase, std::int64_t done, std::int64_t total)> progress;

  /// Throws myriad::invalid_argument naming the first bad value.
  void validate() const;
};

/// Everything a run produced.
struct MpisResult {
  std::string device;
  std::string method;
  std::int64_t k = 0;
  int runs = 0;
  std::int64_t samples = 0;

  /// log P̂ of each run: E[P̂] = P(x), so E[log P̂] ≤ log P(x) (an ELBO-style lower bound).
  std::vector<double> log_marginal;
  double log_marginal_mean = 0;
  /// Standard error of the mean over runs, sd (divisor R − 1) / √R; NaN for one run.
  double log_marginal_se = std::numeric_limits<double>::quiet_NaN();
  /// log P(x) when the model knows it, else NaN.
  double exact_log_marginal = std::numeric_limits<double>::quiet_NaN();
  /// Runs whose every weight was zero (log P̂ = −inf): they have no moments or draws.
  int failed_runs = 0;
  /// Log-factor entries (or global log weights) that came out NaN or +inf and count as zero.
  std::int64_t nonfinite_entries = 0;

  /// One name per quantity: every component of every latent instance, e.g. "mu", "z[3]",
  /// "alpha[1,2]", "w[0][4]" (an event component after the plate indices).
  std::vector<std::string> names;
  /// Posterior summary per quantity pooled over runs: mean of the runs' posterior means, sd of
  /// the equal-weight mixture of the runs' posteriors, mcse_mean the sd over runs of the run
  /// means / √R (R ≥ 2; else sd / √ESS), q5/q50/q95 the mean over runs of each run's weighted
  /// quantile, ess the sum over runs of the marginal weights' Kish ESS. Empty without moments.
  std::vector<WeightedMoments> summary;
  std::vector<double> run_means;   ///< [run][quantity] posterior means
  std::vector<ExactMoment> exact;  ///< the exact posterior where the model knows it
  std::vector<double> draws;       ///< [run][sample][quantity]; NaN in a failed run
  /// With keep_weights: particle values and normalised marginal weights, [run][quantity][K].
  std::vector<double> particles;
  std::vector<double> weights;

  int index_variables = 0;              ///< n: latent instances, each with its own index
  int max_clique = 0;                   ///< largest K-dims of one contraction step
  std::vector<std::string> operations;  ///< the contraction plan, one line per operation
  double forward_terms = 0;             ///< LSE terms of one run's forward pass
  double estimated_bytes = 0;           ///< plan estimate for one batch of runs
  /// The memory budget in effect: config.memory_budget, else 80% of the device's available
  /// memory; infinite when neither is known.
  double memory_budget = 0;
  int runs_per_batch = 0;
  std::string chunk_plate;  ///< the plate computed in chunks, or empty
  std::int64_t chunk_size = 0;
  std::int64_t peak_bytes = 0;  ///< largest memory the engine held (measured)

  double seconds_estimate = 0;  ///< particles, factors, contraction (log P̂)
  double seconds_moments = 0;   ///< backward pass and summaries
  double seconds_sampling = 0;  ///< posterior index draws
  double seconds_total = 0;
};

/// Builds the backend of one batch: the batch's plan and engine options (seed, first run,
/// chunking, contraction path).
using MpisBackendFactory = std::function<std::unique_ptr<MpisBackend>(
    const MpisPlan& plan, const MpisEngineOptions& options)>;

/// The host scheduler (src/run/run_mpis.cpp): runs in batches under the memory budget, reads
/// and pools the results. `available_bytes` is the device's free memory (0: unknown).
MpisResult run_mpis(const PlatedStructure& structure, const MpisConfig& config,
                    const MpisBackendFactory& make_backend, std::int64_t available_bytes);

/// The plan estimate of one run's memory in bytes (what batching and the memory budget use):
/// the tensors the forward pass keeps (twice with the backward pass's outside tensors,
/// config.moments or keep_weights), particles, proposal densities, permutations, and the
/// indices of config.samples draws. `one_run` is plan_mpis(structure, config.k, 1). With
/// chunking, the chunked subtree's tensors count for one window, and its latents' marginal
/// weights (kept whole) are added.
double estimate_mpis_bytes(const MpisPlan& one_run, const PlatedStructure& structure,
                           const MpisConfig& config, const MpisChunking& chunking = {});

/// Runs per batch of the massively parallel method, from one run's plan estimate
/// (`per_run_bytes`) and the elements of its largest tensor (`largest_elements`, chunking
/// applied): config.runs_per_batch when set, else as many of config.runs as the budget holds.
/// Every tensor of a batch carries the run axis, so a batch is also held to
/// kMaxLogTensorSize / largest_elements runs; an explicit runs_per_batch beyond that is
/// myriad::invalid_argument. At least 1.
int mpis_runs_per_batch(const MpisConfig& config, double budget, double per_run_bytes,
                        double largest_elements);

/// The plate to compute in chunks and the chunk size for a run under `budget` bytes: as
/// config.chunk_plate asks (chunk_size 0: the largest that fits), or, when one whole run would
/// not fit, the top-level plate whose one-element windows need the least memory with the
/// largest chunk that fits; inactive when nothing needs chunking. The caller checks the fit.
MpisChunking choose_mpis_chunking(const MpisPlan& one_run, const PlatedStructure& structure,
                                  const MpisConfig& config, double budget);

/// The quantity names of a structure (MpisResult::names).
std::vector<std::string> mpis_quantity_names(const PlatedStructure& structure);

}  // namespace myriad
