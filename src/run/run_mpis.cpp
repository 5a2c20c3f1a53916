// The host scheduler of massively parallel importance sampling: independent runs in batches
// that fit the memory budget, each batch one backend (CPU or CUDA engine); log P̂ per run,
// posterior moments pooled over runs, exact posterior draws; and the global importance-sampling
// baseline streamed over chunks of joint samples (mpis.md §1, §2, §5, §6).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/log_semiring_gemm.hpp"
#include "myriad/estimate/log_sum_product_split.hpp"
#include "myriad/estimate/log_tensor.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/run/mpis_config.hpp"

namespace myriad {

void MpisConfig::validate() const {
  MYRIAD_EXPECTS(k >= 1, "MP IS: K must be at least 1, got ", k);
  MYRIAD_EXPECTS(k <= 0x7FFFFFFF, "MP IS: K must fit in 31 bits, got ", k);
  MYRIAD_EXPECTS(runs >= 1, "MP IS: runs must be at least 1, got ", runs);
  MYRIAD_EXPECTS(samples >= 0, "MP IS: samples must not be negative, got ", samples);
  MYRIAD_EXPECTS(runs_per_batch >= 0, "MP IS: runs_per_batch must not be negative, got ",
                 runs_per_batch);
  MYRIAD_EXPECTS(memory_budget >= 0 && std::isfinite(memory_budget),
                 "MP IS: memory_budget must be a non-negative number of bytes, got ",
                 memory_budget);
  MYRIAD_EXPECTS(global_chunk >= 0, "MP IS: global_chunk must not be negative, got ", global_chunk);
}

std::vector<std::string> mpis_quantity_names(const PlatedStructure& s) {
  std::vector<std::string> names;
  for (int g = 0; g < s.latent_count(); ++g) {
    const LatentDecl& decl = s.latent_decl(g);
    const std::vector<int> path = s.path(decl.plate);
    for (std::int64_t i = 0; i < s.instances(decl.plate); ++i) {
      std::vector<std::int64_t> index(path.size());
      std::int64_t rest = i;
      for (std::size_t d = path.size(); d-- > 0;) {
        index[d] = rest % s.plate_decl(path[d]).size;
        rest /= s.plate_decl(path[d]).size;
      }
      std::string name = decl.name;
      if (!path.empty()) {
        name += "[";
        for (std::size_t d = 0; d < index.size(); ++d)
          name += (d ? "," : "") + std::to_string(index[d]);
        name += "]";
      }
      for (int c = 0; c < decl.event_size; ++c)
        names.push_back(decl.event_size == 1 ? name : name + "[" + std::to_string(c) + "]");
    }
  }
  return names;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Where each latent's quantities start, and the instance count of each latent.
struct QuantityLayout {
  std::vector<std::int64_t> offset;
  std::vector<std::int64_t> instances;
  std::vector<int> event;
  std::int64_t total = 0;
  explicit QuantityLayout(const PlatedStructure& s) {
    for (int g = 0; g < s.latent_count(); ++g) {
      offset.push_back(total);
      instances.push_back(s.instances(s.latent_decl(g).plate));
      event.push_back(s.latent_decl(g).event_size);
      total += instances.back() * event.back();
    }
  }
};

}  // namespace

double estimate_mpis_bytes(const MpisPlan& one_run, const PlatedStructure& s,
                           const MpisConfig& config, const MpisChunking& chunking) {
  const bool backward = config.moments || config.keep_weights;
  double tensor_bytes = one_run.forward_bytes();
  if (chunking.active()) {
    // The chunked subtree's tensors (and their chain levels) hold one window at a time.
    const double share =
        1.0 - static_cast<double>(std::min(chunking.size, s.plate_decl(chunking.plate).size)) /
                  static_cast<double>(s.plate_decl(chunking.plate).size);
    for (std::size_t id = 0; id < one_run.tensors.size(); ++id)
      if (in_chunk(one_run, chunking, static_cast<int>(id)))
        tensor_bytes -= 8.0 * share * static_cast<double>(one_run.tensors[id].size());
    for (const MpisOp& op : one_run.ops)
      if (op.kind == MpisOpKind::chain && in_chunk(one_run, chunking, op.inputs[0]))
        tensor_bytes -= 8.0 * share * one_run.chain_level_elements(op);
    for (int g = 0; backward && g < s.latent_count(); ++g)
      if (in_chunk(one_run, chunking, one_run.latent_factor[g]))
        tensor_bytes += 8.0 * static_cast<double>(s.instances(s.latent_decl(g).plate)) * config.k;
  }
  double bytes = tensor_bytes * (backward ? 2.0 : 1.0);
  for (int g = 0; g < s.latent_count(); ++g) {
    const LatentDecl& decl = s.latent_decl(g);
    const double particles = static_cast<double>(s.instances(decl.plate)) * config.k;
    bytes += particles * (8.0 * decl.event_size + 8.0 + 4.0 * decl.proposal_parents.size());
  }
  for (std::size_t v = 0; v < one_run.var_extent.size(); ++v)
    if (one_run.is_k_var(static_cast<int>(v)))
      bytes += 4.0 * config.samples * s.instances(one_run.var_plate[v]);
  return bytes;
}

int mpis_runs_per_batch(const MpisConfig& config, double budget, double per_run_bytes,
                        double largest_elements) {
  const double limit = static_cast<double>(kMaxLogTensorSize);
  const double runs_within_limit = std::floor(limit / std::max(largest_elements, 1.0));
  if (config.runs_per_batch > 0) {
    const int batch = std::min(config.runs_per_batch, config.runs);
    MYRIAD_EXPECTS(batch <= runs_within_limit, "MP IS at K = ", config.k, ": ", batch,
                   " runs per batch would give a tensor of ", largest_elements * batch,
                   " elements, more than the limit of ", kMaxLogTensorSize, ": at most ",
                   runs_within_limit, " runs per batch");
    return batch;
  }
  const double fit =
      std::min({static_cast<double>(config.runs), std::floor(budget / std::max(per_run_bytes, 1.0)),
                runs_within_limit});
  return static_cast<int>(std::max(1.0, fit));
}

namespace {

/// Pooled posterior summaries over runs (MpisResult::summary). The spread of the run means is
/// taken in two passes over MpisResult::run_means, not as Σx² − R·mean², which cancels when a
/// posterior mean is large against its Monte Carlo spread.
struct Pool {
  std::vector<double> sum_variance, sum_q5, sum_q50, sum_q95, sum_ess, first_mcse;
  int runs = 0;
  explicit Pool(std::int64_t quantities)
      : sum_variance(quantities),
        sum_q5(quantities),
        sum_q50(quantities),
        sum_q95(quantities),
        sum_ess(quantities),
        first_mcse(quantities, kNaN) {}
  void add(std::int64_t q, const WeightedMoments& m) {
    sum_variance[q] += std::isnan(m.sd) ? 0.0 : m.sd * m.sd;
    sum_q5[q] += m.q5;
    sum_q50[q] += m.q50;
    sum_q95[q] += m.q95;
    sum_ess[q] += m.ess;
    if (runs == 0) first_mcse[q] = m.mcse_mean;
  }
  /// `run_means` is [run][quantity], NaN in failed runs (which add() never saw).
  std::vector<WeightedMoments> summaries(const std::vector<double>& run_means) const {
    const std::size_t quantities = sum_variance.size();
    const std::size_t all_runs = quantities ? run_means.size() / quantities : 0;
    std::vector<WeightedMoments> out;
    const double r = runs;
    for (std::size_t q = 0; q < quantities; ++q) {
      double mean = 0, spread = 0;
      for (std::size_t run = 0; run < all_runs; ++run)
        if (!std::isnan(run_means[run * quantities + q])) mean += run_means[run * quantities + q];
      mean /= r;
      for (std::size_t run = 0; run < all_runs; ++run) {
        const double x = run_means[run * quantities + q];
        if (!std::isnan(x)) spread += (x - mean) * (x - mean);
      }
      WeightedMoments m;
      m.mean = runs ? mean : kNaN;
      // The equal-weight mixture of the runs' posteriors: mean within-run variance plus the
      // variance of the run means.
      m.sd = runs ? std::sqrt(sum_variance[q] / r + spread / r) : kNaN;
      m.mcse_mean = runs > 1 ? std::sqrt(spread / (r - 1)) / std::sqrt(r) : first_mcse[q];
      m.q5 = runs ? sum_q5[q] / r : kNaN;
      m.q50 = runs ? sum_q50[q] / r : kNaN;
      m.q95 = runs ? sum_q95[q] / r : kNaN;
      m.ess = sum_ess[q];
      out.push_back(m);
    }
    return out;
  }
};

}  // namespace

MpisChunking choose_mpis_chunking(const MpisPlan& one_run, const PlatedStructure& s,
                                  const MpisConfig& config, double budget) {
  MpisChunking chunking;
  auto largest_fitting = [&](int plate) {
    const std::int64_t size = s.plate_decl(plate).size;
    std::int64_t lo = 1, hi = size;
    while (lo < hi) {  // memory grows with the chunk: bisect for the largest that fits
      const std::int64_t mid = (lo + hi + 1) / 2;
      const MpisChunking c{plate, mid};
      if (estimate_mpis_bytes(one_run, s, config, c) <= budget &&
          largest_tensor_elements(one_run, c, s) <= static_cast<double>(kMaxLogTensorSize))
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  };
  if (!config.chunk_plate.empty()) {
    for (int p = 0; p < s.plate_count(); ++p)
      if (s.plate_decl(p).name == config.chunk_plate) chunking.plate = p;
    MYRIAD_EXPECTS(chunking.plate >= 0, "MP IS: no plate named '", config.chunk_plate,
                   "' to chunk");
    chunking.size = config.chunk_size > 0 ? config.chunk_size : 1;
    validate_chunking(s, chunking);
    if (config.chunk_size == 0) chunking.size = largest_fitting(chunking.plate);
    return chunking;
  }
  MYRIAD_EXPECTS(config.chunk_size == 0, "MP IS: chunk_size needs chunk_plate");
  const auto fits = [&](const MpisChunking& c) {
    return estimate_mpis_bytes(one_run, s, config, c) <= budget &&
           largest_tensor_elements(one_run, c, s) <= static_cast<double>(kMaxLogTensorSize);
  };
  if (fits(chunking)) return chunking;
  double best = std::numeric_limits<double>::infinity();
  for (int p = 0; p < s.plate_count(); ++p) {
    const PlateDecl& decl = s.plate_decl(p);
    if (decl.parent != kRootPlate || decl.timeseries) continue;
    const double bytes = estimate_mpis_bytes(one_run, s, config, MpisChunking{p, 1});
    if (bytes < best) {
      best = bytes;
      chunking.plate = p;
    }
  }
  if (chunking.plate < 0) return chunking;  // nothing to chunk: the caller reports the budget
  chunking.size = 1;
  if (!fits(chunking)) return chunking;  // even chunks of one do not fit: reported
  chunking.size = largest_fitting(chunking.plate);
  return chunking;
}

namespace {

void report(const MpisConfig& config, const char* phase, std::int64_t done, std::int64_t total) {
  if (config.progress) config.progress(phase, done, total);
}

/// MP IS on one batch: log P̂, then moments and draws from the backend.
void run_mp_batch(MpisBackend& backend, const PlatedStructure& s, const MpisConfig& config,
                  const QuantityLayout& layout, int first, int batch, Pool& pool,
                  MpisResult& result) {
  auto start = Clock::now();
  backend.forward();
  const std::vector<double> log_p = backend.log_marginal();
  for (int r = 0; r < batch; ++r) result.log_marginal[first + r] = log_p[r];
  result.seconds_estimate += seconds_since(start);

  const std::int64_t k = config.k;
  if (config.moments || config.keep_weights) {
    start = Clock::now();
    backend.backward();
    std::vector<std::vector<WeightedMoments>> per_run(static_cast<std::size_t>(batch));
    for (auto& m : per_run) m.resize(static_cast<std::size_t>(layout.total));
    for (int g = 0; g < s.latent_count(); ++g) {
      const std::vector<double> z = backend.particles(g);
      const std::vector<double> log_w = backend.log_marginal_weights(g);
      const std::int64_t instances = layout.instances[g];
      const int event = layout.event[g];
      for (int r = 0; r < batch; ++r) {
        if (!std::isfinite(log_p[r])) continue;
        for (std::int64_t i = 0; i < instances; ++i) {
          const double* values = z.data() + ((r * instances + i) * k) * event;
          const double* weights = log_w.data() + (r * instances + i) * k;
          const std::vector<WeightedMoments> m = weighted_moments(values, k, event, weights);
          for (int c = 0; c < event; ++c) {
            const std::int64_t q = layout.offset[g] + i * event + c;
            per_run[r][q] = m[c];
            if (config.keep_weights) {
              const std::int64_t run = first + r;
              for (std::int64_t p = 0; p < k; ++p) {
                result.particles[(run * layout.total + q) * k + p] = values[p * event + c];
                result.weights[(run * layout.total + q) * k + p] = std::exp(weights[p]);
              }
            }
          }
        }
      }
    }
    for (int r = 0; r < batch; ++r) {
      if (!std::isfinite(log_p[r])) continue;
      for (std::int64_t q = 0; q < layout.total; ++q) {
        pool.add(q, per_run[r][q]);
        result.run_means[(first + r) * layout.total + q] = per_run[r][q].mean;
      }
      ++pool.runs;
    }
    result.seconds_moments += seconds_since(start);
  }

  if (config.samples > 0) {
    start = Clock::now();
    const std::int64_t n = config.samples;
    backend.sample_indices(n);
    for (int g = 0; g < s.latent_count(); ++g) {
      const std::vector<double> z = backend.particles(g);
      const std::vector<std::int32_t> index = backend.sampled_indices(g);
      const std::int64_t instances = layout.instances[g];
      const int event = layout.event[g];
      for (std::int64_t d = 0; d < n; ++d)
        for (int r = 0; r < batch; ++r)
          for (std::int64_t i = 0; i < instances; ++i) {
            const std::int32_t chosen = index[(d * batch + r) * instances + i];
            for (int c = 0; c < event; ++c) {
              const std::int64_t q = layout.offset[g] + i * event + c;
              result.draws[((first + r) * n + d) * layout.total + q] =
                  chosen < 0 ? kNaN : z[((r * instances + i) * k + chosen) * event + c];
            }
          }
    }
    result.seconds_sampling += seconds_since(start);
  }
}

/// Global importance sampling on one batch (mpis.md §1): K joint samples streamed in chunks;
/// log P̂ = LSE_k log r_k − log K; self-normalised moments accumulated relative to the running
/// maximum; draws by a second pass that regenerates the chosen joint samples (counter-based
/// Philox draws them identically).
void run_global_batch(MpisBackend& backend, const PlatedStructure& s, const MpisConfig& config,
                      const QuantityLayout& layout, std::int64_t chunk, int first, int batch,
                      Pool& pool, MpisResult& result) {
  const std::int64_t k = config.k, quantities = layout.total;
  const bool moments = config.moments;
  std::vector<double> max(static_cast<std::size_t>(batch), -INFINITY), s0(batch, 0.0),
      s0_sq(batch, 0.0);
  std::vector<double> s1(moments ? batch * quantities : 0, 0.0), s2(s1.size(), 0.0);
  std::vector<double> all_log_r(config.samples > 0 ? batch * k : 0);
  auto start = Clock::now();
  for (std::int64_t begin = 0; begin < k; begin += chunk) {
    const std::int64_t count = std::min(chunk, k - begin);
    const std::vector<double> log_r = backend.global_log_weights(begin, count);
    std::vector<std::vector<double>> z;
    if (moments)
      for (int g = 0; g < s.latent_count(); ++g) z.push_back(backend.particles(g));
    for (int r = 0; r < batch; ++r) {
      const double* lr = log_r.data() + r * count;
      if (!all_log_r.empty()) std::copy(lr, lr + count, all_log_r.begin() + r * k + begin);
      const double chunk_max = *std::max_element(lr, lr + count);
      if (chunk_max == -INFINITY) continue;
      if (chunk_max > max[r]) {  // rescale the running sums to the new maximum
        const double scale = max[r] == -INFINITY ? 0.0 : std::exp(max[r] - chunk_max);
        s0[r] *= scale;
        s0_sq[r] *= scale * scale;
        for (std::int64_t q = 0; moments && q < quantities; ++q) {
          s1[r * quantities + q] *= scale;
          s2[r * quantities + q] *= scale;
        }
        max[r] = chunk_max;
      }
      for (std::int64_t p = 0; p < count; ++p) {
        const double w = std::exp(lr[p] - max[r]);
        if (w == 0.0) continue;
        s0[r] += w;
        s0_sq[r] += w * w;
        for (int g = 0; moments && g < s.latent_count(); ++g) {
          const std::int64_t instances = layout.instances[g];
          const int event = layout.event[g];
          for (std::int64_t i = 0; i < instances; ++i)
            for (int c = 0; c < event; ++c) {
              const double x = z[g][((r * instances + i) * count + p) * event + c];
              const std::int64_t q = r * quantities + layout.offset[g] + i * event + c;
              s1[q] += w * x;
              s2[q] += w * x * x;
            }
        }
      }
    }
  }
  std::vector<double> log_p(static_cast<std::size_t>(batch));
  for (int r = 0; r < batch; ++r) {
    log_p[r] = max[r] == -INFINITY ? -INFINITY
                                   : max[r] + std::log(s0[r]) - std::log(static_cast<double>(k));
    result.log_marginal[first + r] = log_p[r];
  }
  result.seconds_estimate += seconds_since(start);

  if (moments) {
    for (int r = 0; r < batch; ++r) {
      if (!std::isfinite(log_p[r])) continue;
      const double ess = s0[r] * s0[r] / s0_sq[r];
      for (std::int64_t q = 0; q < quantities; ++q) {
        WeightedMoments m;
        m.mean = s1[r * quantities + q] / s0[r];
        // The reliability-weights variance of estimate/log_z.hpp's weighted_moments.
        const double plug_in = s2[r * quantities + q] / s0[r] - m.mean * m.mean;
        m.sd = ess > 1.0 ? std::sqrt(std::max(0.0, plug_in / (1.0 - 1.0 / ess))) : kNaN;
        m.mcse_mean = m.sd / std::sqrt(ess);
        m.q5 = m.q50 = m.q95 = kNaN;  // quantiles would need every sample kept
        m.ess = ess;
        pool.add(q, m);
        result.run_means[(first + r) * quantities + q] = m.mean;
      }
      ++pool.runs;
    }
  }

  if (config.samples > 0) {
    start = Clock::now();
    const std::int64_t n = config.samples;
    // Draw joint-sample numbers ∝ w by inverse CDF (Philox, one uniform per draw), then
    // regenerate the chunks that hold them.
    std::vector<std::vector<std::int64_t>> chosen(static_cast<std::size_t>(batch));
    for (int r = 0; r < batch; ++r) {
      if (!std::isfinite(log_p[r])) continue;
      const double* lr = all_log_r.data() + r * k;
      std::vector<double> cdf(static_cast<std::size_t>(k));
      double total = 0;
      for (std::int64_t p = 0; p < k; ++p) cdf[p] = total += std::exp(lr[p] - max[r]);
      const RandomStream stream(config.seed, static_cast<std::uint64_t>(first + r));
      for (std::int64_t d = 0; d < n; ++d) {
        const double u = stream.uniform<double>(0, static_cast<Purpose>(kMpisIndexPurpose - 1),
                                                static_cast<std::uint32_t>(d)) *
                         total;
        chosen[r].push_back(std::min<std::int64_t>(
            k - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
      }
    }
    for (std::int64_t begin = 0; begin < k; begin += chunk) {
      const std::int64_t count = std::min(chunk, k - begin);
      bool needed = false;
      for (const auto& c : chosen)
        for (std::int64_t p : c) needed = needed || (p >= begin && p < begin + count);
      if (!needed) continue;
      backend.global_log_weights(begin, count);
      for (int g = 0; g < s.latent_count(); ++g) {
        const std::vector<double> z = backend.particles(g);
        const std::int64_t instances = layout.instances[g];
        const int event = layout.event[g];
        for (int r = 0; r < batch; ++r)
          for (std::int64_t d = 0; d < static_cast<std::int64_t>(chosen[r].size()); ++d) {
            const std::int64_t p = chosen[r][d];
            if (p < begin || p >= begin + count) continue;
            for (std::int64_t i = 0; i < instances; ++i)
              for (int c = 0; c < event; ++c)
                result
                    .draws[((first + r) * n + d) * quantities + layout.offset[g] + i * event + c] =
                    z[((r * instances + i) * count + (p - begin)) * event + c];
          }
      }
    }
    result.seconds_sampling += seconds_since(start);
  }
}

}  // namespace

MpisResult run_mpis(const PlatedStructure& s, const MpisConfig& config,
                    const MpisBackendFactory& make_backend, std::int64_t available_bytes) {
  config.validate();
  s.validate();
  const auto start = Clock::now();
  const QuantityLayout layout(s);
  MpisResult result;
  result.method = to_string(config.method);
  result.k = config.k;
  result.runs = config.runs;
  result.samples = config.samples;
  result.names = mpis_quantity_names(s);
  for (int g = 0; g < s.latent_count(); ++g)
    result.index_variables += static_cast<int>(layout.instances[g]);
  result.log_marginal.assign(static_cast<std::size_t>(config.runs), kNaN);
  if (config.moments)
    result.run_means.assign(static_cast<std::size_t>(config.runs * layout.total), kNaN);
  if (config.samples > 0)
    result.draws.assign(static_cast<std::size_t>(config.runs * config.samples * layout.total),
                        kNaN);
  if (config.keep_weights) {
    MYRIAD_EXPECTS(config.method == MpisMethod::massively_parallel,
                   "MP IS: keep_weights needs the massively parallel method");
    result.particles.assign(static_cast<std::size_t>(config.runs * layout.total * config.k), kNaN);
    result.weights.assign(result.particles.size(), kNaN);
  }

  const double budget = config.memory_budget > 0 ? config.memory_budget
                        : available_bytes > 0    ? 0.8 * static_cast<double>(available_bytes)
                                                 : std::numeric_limits<double>::infinity();
  result.memory_budget = budget;
  const MpisPlan one_run = plan_mpis(s, config.method == MpisMethod::global ? 1 : config.k, 1);
  MpisChunking chunking;
  std::int64_t chunk = 0;
  int batch_runs = config.runs;
  if (config.method == MpisMethod::massively_parallel) {
    result.max_clique = one_run.max_clique;
    result.operations = describe_plan(one_run, s);
    result.forward_terms = one_run.forward_terms();
    // The cuBLAS path's scratch for a round of batches is held once, whatever the batch
    // (resolve_contraction_path keeps it within kMaxShiftScratchBytes), and on a GPU a split
    // reduction's (kSplitScratchBytes); the runs get the rest.
    const double scratch =
        (config.contraction == ContractionPath::cublas ? static_cast<double>(kMaxShiftScratchBytes)
                                                       : 0.0) +
        (config.device == Device::cuda ? static_cast<double>(kSplitScratchBytes) : 0.0);
    const double budget_for_runs = budget - scratch;
    chunking = choose_mpis_chunking(one_run, s, config, budget_for_runs);
    const double per_run = estimate_mpis_bytes(one_run, s, config, chunking);
    const double largest = largest_tensor_elements(one_run, chunking, s);
    MYRIAD_EXPECTS(largest <= static_cast<double>(kMaxLogTensorSize), "MP IS at K = ", config.k,
                   ": a tensor would hold ", largest, " elements, more than the limit of ",
                   kMaxLogTensorSize, chunking.active() ? " even with its plate in chunks" : "",
                   ": lower K", chunking.active() ? "" : " or chunk a plate (--chunk)");
    MYRIAD_EXPECTS(per_run <= budget_for_runs, "MP IS at K = ", config.k, " needs about ",
                   per_run / 1073741824.0, " GiB for one run (plan estimate",
                   chunking.active() ? ", with its largest plate in chunks of one" : "",
                   scratch > 0 ? ", besides the cuBLAS path's scratch" : "", "), more than the ",
                   budget / 1073741824.0, " GiB memory budget: lower K or raise the budget");
    batch_runs = mpis_runs_per_batch(config, budget_for_runs, per_run, largest);
    result.estimated_bytes = per_run * batch_runs + scratch;
    if (chunking.active()) {
      result.chunk_plate = s.plate_decl(chunking.plate).name;
      result.chunk_size = chunking.size;
    }
  } else {
    // Bytes per joint sample and run: every latent value, its proposal density and log r.
    double per_sample = 8.0;
    for (int g = 0; g < s.latent_count(); ++g)
      per_sample += 8.0 * layout.instances[g] * (layout.event[g] + 1);
    const double gib = 1073741824.0;
    MYRIAD_EXPECTS(per_sample <= budget, "global IS needs about ", per_sample / gib,
                   " GiB for one joint sample, more than the ", budget / gib,
                   " GiB memory budget: raise the budget");
    // All runs in one batch when one sample of each fits; otherwise as many runs as fit.
    batch_runs =
        config.runs_per_batch > 0
            ? std::min(config.runs_per_batch, config.runs)
            : static_cast<int>(std::min<double>(config.runs, std::floor(budget / per_sample)));
    const double per_batch_sample = per_sample * batch_runs;
    chunk = config.global_chunk > 0
                ? std::min(config.global_chunk, config.k)
                : static_cast<std::int64_t>(std::max<double>(
                      1.0, std::min<double>(config.k, std::min(budget, 2e9) / per_batch_sample)));
    MYRIAD_EXPECTS(per_batch_sample * chunk <= budget, "global IS with ", batch_runs,
                   " runs per batch and chunks of ", chunk, " samples needs about ",
                   per_batch_sample * chunk / gib, " GiB, more than the ", budget / gib,
                   " GiB memory budget: lower the chunk or the runs per batch");
    result.estimated_bytes = per_batch_sample * chunk;
  }
  result.runs_per_batch = batch_runs;

  Pool pool(layout.total);
  for (int first = 0; first < config.runs; first += batch_runs) {
    const int batch = std::min(batch_runs, config.runs - first);
    const MpisPlan plan = plan_mpis(s, config.method == MpisMethod::global ? 1 : config.k, batch);
    MpisEngineOptions options;
    options.seed = config.seed;
    options.first_run = first;
    options.chunking = chunking;
    options.contraction = config.contraction;
    const std::unique_ptr<MpisBackend> backend = make_backend(plan, options);
    result.device = backend->device();
    if (config.method == MpisMethod::massively_parallel)
      run_mp_batch(*backend, s, config, layout, first, batch, pool, result);
    else
      run_global_batch(*backend, s, config, layout, chunk, first, batch, pool, result);
    result.peak_bytes = std::max(result.peak_bytes, backend->peak_bytes());
    result.nonfinite_entries += backend->nonfinite_entries();
    report(config, "runs", first + batch, config.runs);
  }

  double sum = 0, sum_sq = 0;
  for (double v : result.log_marginal) {
    sum += v;
    if (!std::isfinite(v)) ++result.failed_runs;
  }
  result.log_marginal_mean = sum / config.runs;
  for (double v : result.log_marginal)
    sum_sq += (v - result.log_marginal_mean) * (v - result.log_marginal_mean);
  result.log_marginal_se = config.runs > 1 && std::isfinite(result.log_marginal_mean)
                               ? std::sqrt(sum_sq / (config.runs - 1) / config.runs)
                               : kNaN;
  if (config.moments) result.summary = pool.summaries(result.run_means);
  result.seconds_total = seconds_since(start);
  return result;
}

}  // namespace myriad
