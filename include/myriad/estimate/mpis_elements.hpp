#pragma once
// The per-element functors of massively parallel importance sampling (mpis.md §2–§6): each
// computes one element of one array (a particle, a permutation, a log-factor entry, a message
// entry, a posterior index draw) from trivially copyable views, in host and device code. The
// engine (estimate/mpis_engine.hpp) runs them through a parallel policy: an OpenMP loop on the
// CPU, a grid-stride kernel on CUDA (DESIGN.md rule 1).

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::mpis_elements {

/// The plate indices of `instance` of a plate path with these sizes (row-major, last plate
/// fastest): what a density sees as `at`.
MYRIAD_HD inline PlateIndex plate_index_of(std::int64_t instance, int depth,
                                           const std::int64_t* sizes) {
  PlateIndex at;
  at.depth = depth;
  for (int d = depth - 1; d >= 0; --d) {
    at.index[d] = instance % sizes[d];
    instance /= sizes[d];
  }
  return at;
}

/// A latent group's particles, [run][instance][particle][event], and its plate path.
struct GroupView {
  double* particles = nullptr;
  std::int64_t instances = 1;  ///< per run: Π plate_size
  std::int64_t k = 1;          ///< particles per instance (stored)
  int event_size = 1;
  int depth = 0;
  std::int64_t plate_size[kMaxPlateDepth] = {};

  MYRIAD_HD double* at(std::int64_t run, std::int64_t instance, std::int64_t particle) const {
    return particles + ((run * instances + instance) * k + particle) * event_size;
  }
  /// The plate indices of instance `instance` (row-major over the path, last plate fastest).
  MYRIAD_HD PlateIndex plate_index(std::int64_t instance) const {
    return plate_index_of(instance, depth, plate_size);
  }
};

/// How a child instance (of a latent or of an observation's home plate) finds the instance of a
/// parent: plate paths nest, so the parent's instance is the child's divided by the product of
/// the plate sizes the child has beyond the parent. A previous-step link reads the chain
/// latent's own instance one step back along its innermost (timeseries) plate.
struct ParentLink {
  GroupView parent;
  std::int64_t divisor = 1;
  bool previous_step = false;
  std::int64_t steps = 1;  ///< length of the timeseries (previous-step links)

  /// True when the link has no value for this instance (t = 0 of a previous-step link).
  MYRIAD_HD bool absent(std::int64_t instance) const {
    return previous_step && instance % steps == 0;
  }
  /// The parent's event vector at `particle` for child instance `instance`, or nullptr.
  MYRIAD_HD const double* value(std::int64_t run, std::int64_t instance,
                                std::int64_t particle) const {
    if (previous_step) return absent(instance) ? nullptr : parent.at(run, instance - 1, particle);
    return parent.at(run, instance / divisor, particle);
  }
};

/// The Philox streams of a batch of runs (DESIGN.md rule 2): run r of the batch draws from the
/// stream (seed, first_run + r), so its numbers do not depend on the batch it is in.
struct RunStreams {
  std::uint64_t seed = 0;
  std::int64_t first_run = 0;
  MYRIAD_HD RandomStream operator()(std::int64_t run) const {
    return RandomStream(seed, static_cast<std::uint64_t>(first_run + run));
  }
};

/// Uniforms of one purpose from a batch's run streams: Philox counter (element, purpose, draw).
struct RunUniforms {
  RunStreams streams{};
  std::uint32_t purpose = 0;
  MYRIAD_HD double operator()(std::int64_t run, std::int64_t element, std::int64_t draw) const {
    return streams(run).uniform<double>(static_cast<std::uint32_t>(element),
                                        static_cast<Purpose>(purpose),
                                        static_cast<std::uint32_t>(draw));
  }
};

/// Cost of one density evaluation relative to a cheap element: the `work` hint of a policy's
/// for_each (the CPU policy's parallel threshold; see CpuParallel::for_each).
inline constexpr std::int64_t kDensityWork = 16;

/// A uniformly random permutation of 0…K−1 per (run, instance) by Fisher–Yates with Philox
/// uniforms: the parent-particle choice of one proposal slot (the permutation sampler, mpis.md
/// §2.1): child particle k takes parent particle perm[k].
struct PermutationSampler {
  std::int32_t* perm = nullptr;  ///< [run][instance][K]
  std::int64_t instances = 1;
  std::int64_t k = 1;
  RunUniforms uniforms{};  ///< counter (instance, purpose, j)

  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t run = i / instances, instance = i % instances;
    std::int32_t* p = perm + i * k;
    for (std::int64_t j = 0; j < k; ++j) p[j] = static_cast<std::int32_t>(j);
    for (std::int64_t j = k - 1; j >= 1; --j) {
      const double u = uniforms(run, instance, j);
      std::int64_t r = static_cast<std::int64_t>(u * static_cast<double>(j + 1));
      if (r > j) r = j;
      const std::int32_t swap = p[j];
      p[j] = p[r];
      p[r] = swap;
    }
  }
};

/// The proposal parents of a latent group as its sampler and proposal density see them. With a
/// permutation per slot the proposal is the parent mixture (MP IS); without (nullptr) particle
/// k's parents are the parents' particle k (global importance sampling, mpis.md §1).
struct ProposalParents {
  int slots = 0;
  std::int64_t child_instances = 1;  ///< instances of the child group (the layout of perm)
  ParentLink link[kMaxGroupParents];
  const std::int32_t* perm[kMaxGroupParents] = {};  ///< [run][instance][K] per slot, or nullptr

  /// The proposal parents' values for child particle `particle` of instance `instance`.
  MYRIAD_HD ParentValues chosen(std::int64_t run, std::int64_t instance, std::int64_t particle,
                                std::int64_t k) const {
    ParentValues values;
    values.count = slots;
    for (int s = 0; s < slots; ++s) {
      const std::int64_t parent_particle =
          perm[s] ? perm[s][(run * child_instances + instance) * k + particle] : particle;
      values.value[s] = link[s].value(run, instance, parent_particle);
    }
    return values;
  }
};

/// Draws particle `particle` of every selected instance of a latent group from its proposal.
/// Index i runs over (run, instance, particle), or with step ≥ 0 over (run, outer instance,
/// particle) for the instances at step `step` of a timeseries (whose particles depend on the
/// previous step's, so steps go one launch at a time).
template <class Model>
struct ParticleSampler {
  Model model;
  int latent = 0;
  GroupView self;
  ProposalParents qa;
  std::int64_t step = -1;
  std::int64_t steps = 1;
  RunStreams streams{};
  std::int64_t particle_offset = 0;  ///< Philox particle number of stored particle 0

  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t per_run = step < 0 ? self.instances : self.instances / steps;
    const std::int64_t particle = i % self.k;
    const std::int64_t rest = i / self.k;
    const std::int64_t run = rest / per_run;
    const std::int64_t instance = step < 0 ? rest % per_run : (rest % per_run) * steps + step;
    const ParentValues parents = qa.chosen(run, instance, particle, self.k);
    ParticleRandom rng(streams(run),
                       kMpisProposalPurpose + 65536u * static_cast<std::uint32_t>(latent),
                       static_cast<std::uint32_t>(instance),
                       static_cast<std::uint32_t>(particle_offset + particle));
    model.sample_proposal(latent, self.at(run, instance, particle), parents,
                          self.plate_index(instance), rng);
  }
};

/// log Q_MP(z^k) of every particle (mpis.md §2.1): with permutations, the log-mean-exp of
/// log Q(z^k | qa) over every combination of the proposal parents' particles (a previous-step
/// slot at t = 0 has none and drops out); without, log Q(z^k | qa^k). Index i runs over (run,
/// instance, particle).
template <class Model>
struct ProposalLogDensity {
  Model model;
  int latent = 0;
  GroupView self;
  ProposalParents qa;
  double* out = nullptr;  ///< [run][instance][K]

  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t particle = i % self.k;
    const std::int64_t run = (i / self.k) / self.instances;
    const std::int64_t instance = (i / self.k) % self.instances;
    const double* z = self.at(run, instance, particle);
    const PlateIndex at = self.plate_index(instance);
    bool mixture = false;
    for (int s = 0; s < qa.slots; ++s) mixture = mixture || qa.perm[s] != nullptr;
    if (!mixture) {
      out[i] = model.log_proposal(latent, z, qa.chosen(run, instance, particle, self.k), at);
      return;
    }
    // Odometer over the parents' particles of the slots present at this instance.
    ParentValues values;
    values.count = qa.slots;
    std::int64_t digit[kMaxGroupParents] = {};
    int active = 0;
    for (int s = 0; s < qa.slots; ++s) {
      values.value[s] = qa.link[s].value(run, instance, 0);
      if (!qa.link[s].absent(instance)) ++active;
    }
    double max = -INFINITY, sum = 0.0;  // streaming log-sum-exp, rescaled on a new maximum
    for (;;) {
      const double term = model.log_proposal(latent, z, values, at);
      if (term > max) {
        sum = (max == -INFINITY ? 0.0 : sum * myriad::exp(max - term)) + 1.0;
        max = term;
      } else if (term > -INFINITY) {
        sum += myriad::exp(term - max);
      }
      int s = qa.slots - 1;
      for (; s >= 0; --s) {
        if (qa.link[s].absent(instance)) continue;
        if (++digit[s] < self.k) {
          values.value[s] = qa.link[s].value(run, instance, digit[s]);
          break;
        }
        digit[s] = 0;
        values.value[s] = qa.link[s].value(run, instance, 0);
      }
      if (s < 0) break;
    }
    // NaN or +inf terms make the result non-finite; the factor scrub counts it.
    out[i] = (max == -INFINITY || max != max || max == INFINITY ? max : max + myriad::log(sum)) -
             active * myriad::log(static_cast<double>(self.k));
  }
};

/// Roles of a log-factor's axes.
enum AxisRole : int { kAxisRun = -1, kAxisPlate = -2, kAxisSelf = -3, kAxisLag = -4 };

/// Axis geometry of a log-factor tensor: extents and what each axis indexes (≥ 0: a parent
/// slot's particle). A plate axis may hold a window of its plate (a chunk, mpis.md §3.3):
/// coordinate c is plate element offset + c of a plate of full_extent elements.
struct FactorAxes {
  int axes = 0;
  std::int64_t extent[kMaxStepAxes] = {};
  std::int64_t full_extent[kMaxStepAxes] = {};
  std::int64_t offset[kMaxStepAxes] = {};
  int role[kMaxStepAxes] = {};

  /// Decodes output element o into the run, the instance (row-major over the plate axes) and
  /// the particle index of each slot / own / lag axis.
  MYRIAD_HD void decode(std::int64_t o, std::int64_t& run, std::int64_t& instance,
                        std::int64_t* slot_particle, std::int64_t& self, std::int64_t& lag) const {
    std::int64_t coord[kMaxStepAxes];
    for (int a = axes - 1; a >= 0; --a) {
      coord[a] = o % extent[a];
      o /= extent[a];
    }
    run = 0;
    instance = 0;
    self = 0;
    lag = 0;
    for (int a = 0; a < axes; ++a) {
      switch (role[a]) {
        case kAxisRun:
          run = coord[a];
          break;
        case kAxisPlate:
          instance = instance * full_extent[a] + offset[a] + coord[a];
          break;
        case kAxisSelf:
          self = coord[a];
          break;
        case kAxisLag:
          lag = coord[a];
          break;
        default:
          slot_particle[role[a]] = coord[a];
          break;
      }
    }
  }
};

/// The parents of a group (a latent's, or an observation's from its home plate) as its
/// densities see them: declared order, kPreviousStep as a previous-step link.
struct GroupParents {
  int count = 0;
  ParentLink link[kMaxGroupParents];

  /// The parents' values at a log-factor element: slot s at particle slot_particle[s], a
  /// previous-step link at the lag's particle.
  MYRIAD_HD ParentValues at(std::int64_t run, std::int64_t instance,
                            const std::int64_t* slot_particle, std::int64_t lag_particle) const {
    ParentValues values;
    values.count = count;
    for (int s = 0; s < count; ++s)
      values.value[s] =
          link[s].value(run, instance, link[s].previous_step ? lag_particle : slot_particle[s]);
    return values;
  }
  /// Every parent at `particle`: joint sample `particle` of global importance sampling.
  MYRIAD_HD ParentValues joint(std::int64_t run, std::int64_t instance,
                               std::int64_t particle) const {
    ParentValues values;
    values.count = count;
    for (int s = 0; s < count; ++s) values.value[s] = link[s].value(run, instance, particle);
    return values;
  }
};

/// log P(z_g | parents) − log Q(z_g) of one particle of latent g: what its log-factor (MP IS) and
/// its term of a global importance weight share.
template <class Model>
struct LatentLogWeight {
  Model model;
  int latent = 0;
  GroupView self;
  GroupParents parents;
  const double* log_q = nullptr;  ///< [run][instance][K]

  MYRIAD_HD double operator()(std::int64_t run, std::int64_t instance, std::int64_t particle,
                              const ParentValues& values) const {
    return model.log_prior(latent, self.at(run, instance, particle), values,
                           self.plate_index(instance)) -
           log_q[(run * self.instances + instance) * self.k + particle];
  }
};

/// ℓ_g[run, plates, parents, lag, k] = log P(z_g^k | parents) − log Q_MP(z_g^k) − log K
/// (mpis.md §2.2–§2.3, §3.1).
template <class Model>
struct LatentFactor {
  LatentLogWeight<Model> weight;
  FactorAxes axes;
  double log_k = 0.0;
  double* out = nullptr;

  MYRIAD_HD void operator()(std::int64_t o) const {
    std::int64_t run, instance, self_k, lag_k, slot_k[kMaxGroupParents] = {};
    axes.decode(o, run, instance, slot_k, self_k, lag_k);
    out[o] = weight(run, instance, self_k, weight.parents.at(run, instance, slot_k, lag_k)) - log_k;
  }
};

/// λ_o[run, home plates, parents] = Σ over the observation's deeper (data-only) plates of
/// log P(x | parents) (mpis.md §3.1: the data-plate sum is fused into the likelihood).
template <class Model>
struct LikelihoodFactor {
  Model model;
  int observed = 0;
  GroupParents parents;  ///< divisors relative to the home instance
  FactorAxes axes;
  int home_depth = 0;
  std::int64_t home_size[kMaxPlateDepth] = {};
  int extra_depth = 0;
  std::int64_t extra_size[kMaxPlateDepth] = {};
  std::int64_t extra_instances = 1;
  double* out = nullptr;

  MYRIAD_HD void operator()(std::int64_t o) const {
    std::int64_t run, home, self_k, lag_k, slot_k[kMaxGroupParents] = {};
    axes.decode(o, run, home, slot_k, self_k, lag_k);
    const ParentValues values = parents.at(run, home, slot_k, lag_k);
    PlateIndex at = plate_index_of(home, home_depth, home_size);
    at.depth = home_depth + extra_depth;
    double total = 0.0;
    for (std::int64_t x = 0; x < extra_instances; ++x) {
      std::int64_t r = x;
      for (int d = extra_depth - 1; d >= 0; --d) {
        at.index[home_depth + d] = r % extra_size[d];
        r /= extra_size[d];
      }
      total += model.log_likelihood(observed, values, at);
    }
    out[o] = total;
  }
};

/// Replaces a NaN or +inf log-factor entry by −inf (zero weight) and reports it, so that
/// numerical trouble is counted (the engine's nonfinite_entries), never propagated.
struct ScrubNonFinite {
  double* data = nullptr;
  MYRIAD_HD bool operator()(std::int64_t i) const {
    const double x = data[i];
    if (x == x && x != INFINITY) return false;
    data[i] = -INFINITY;
    return true;
  }
};

/// A plate's product over its elements in log space (mpis.md §3.5): out[o] = Σ_n R[o, n], with
/// the plate dim as the element's single "eliminated" axis.
struct PlateSumInto {
  LogSumProductElement element;
  double* out = nullptr;
  bool accumulate = false;  ///< add to out (the plate's later chunks) instead of writing it
  MYRIAD_HD void operator()(std::int64_t o) const {
    std::int64_t base[kMaxStepInputs];
    element.base_offsets(o, base);
    double total = accumulate ? out[o] : 0.0;
    element.sweep(base, [&](std::int64_t, double s) { total += s; });
    out[o] = total;
  }
};

/// out[o] (contiguous over the element's kept axes) = the first input at o, for copies between
/// views (the chain's carried slices, a broadcast outside tensor).
struct CopyInto {
  LogSumProductElement element;  ///< one input, no eliminated axes
  double* out = nullptr;
  std::int64_t out_stride[kMaxStepAxes] = {};
  MYRIAD_HD void operator()(std::int64_t o) const {
    std::int64_t base[kMaxStepInputs], offset = 0, rest = o;
    element.base_offsets(o, base);
    for (int a = element.out_axes - 1; a >= 0; --a) {
      offset += (rest % element.out_extent[a]) * out_stride[a];
      rest /= element.out_extent[a];
    }
    out[offset] = element.data[0][base[0]];
  }
};

/// W = O(U) + … in gradient form: the log outside weight μ(U) − U of an operation's output
/// (mpis.md §5), with μ the log joint marginal of U's scope. Zero weights stay zero.
struct OutsideWeight {
  LogSumProductElement element;  ///< input 0: μ(U), input 1: U; kept axes: U's
  double* out = nullptr;
  MYRIAD_HD void operator()(std::int64_t o) const {
    std::int64_t base[kMaxStepInputs];
    element.base_offsets(o, base);
    const double mu = element.data[0][base[0]], u = element.data[1][base[1]];
    out[o] = (mu == -INFINITY || u == -INFINITY) ? -INFINITY : mu - u;
  }
};

/// Where a posterior index draw reads its inputs: the batch axes (the run, then the plate axes
/// of the operation) and the K-dims sampled earlier in reverse elimination order (mpis.md §6).
struct SampledContext {
  int batch_axes = 0;
  std::int64_t batch_extent[kMaxStepAxes] = {};
  std::int64_t batch_stride[kMaxStepInputs][kMaxStepAxes] = {};
  std::int64_t runs = 1;
  std::int64_t elements = 1;  ///< Π of the plate axes' extents
  int conditioned = 0;
  const std::int32_t* index[kMaxStepAxes] = {};  ///< [draw][run][instances]
  std::int64_t instances[kMaxStepAxes] = {};
  std::int64_t divisor[kMaxStepAxes] = {};  ///< instance = base + element / divisor
  std::int64_t base[kMaxStepAxes] = {};     ///< first instance of a chunk's window
  std::int64_t stride[kMaxStepInputs][kMaxStepAxes] = {};

  /// The draw, run and element of a sampler's flat index, (draw, run, element) row-major.
  MYRIAD_HD void decode(std::int64_t i, std::int64_t& draw, std::int64_t& run,
                        std::int64_t& element) const {
    const std::int64_t per_draw = runs * elements;
    draw = i / per_draw;
    run = (i % per_draw) / elements;
    element = i % elements;
  }

  /// Each input's offset at (draw, run, element); false when a conditioning index is −1 (a
  /// zero-weight run), in which case there is nothing to sample.
  MYRIAD_HD bool offsets(int inputs, std::int64_t draw, std::int64_t run, std::int64_t element,
                         std::int64_t* offset) const {
    std::int64_t rest = run * elements + element;
    for (int j = 0; j < inputs; ++j) offset[j] = 0;
    for (int a = batch_axes - 1; a >= 0; --a) {
      const std::int64_t c = rest % batch_extent[a];
      rest /= batch_extent[a];
      for (int j = 0; j < inputs; ++j) offset[j] += c * batch_stride[j][a];
    }
    for (int c = 0; c < conditioned; ++c) {
      const std::int64_t k =
          index[c][(draw * runs + run) * instances[c] + base[c] + element / divisor[c]];
      if (k < 0) return false;
      for (int j = 0; j < inputs; ++j) offset[j] += k * stride[j][c];
    }
    return true;
  }
};

/// Draws an eliminated assignment e with probability ∝ exp(Σ_j T_j) at `base` by inverse CDF
/// with uniform u (two passes, no scratch); −1 when every weight is zero.
MYRIAD_HD inline std::int64_t draw_assignment(const LogSumProductElement& element,
                                              const std::int64_t* base, double u) {
  double max, sum;
  element.max_and_sum(base, max, sum);
  if (!(sum > 0.0)) return -1;
  const double target = u * sum;
  double cumulative = 0.0;
  std::int64_t chosen = -1, last_positive = -1;
  element.sweep(base, [&](std::int64_t e, double s) {
    if (chosen >= 0 || s == -INFINITY) return;
    last_positive = e;
    cumulative += myriad::exp(s - max);
    if (cumulative >= target) chosen = e;
  });
  return chosen >= 0 ? chosen : last_positive;  // rounding can leave the sum just short
}

/// One posterior index draw of an elimination step (mpis.md §6): the step's eliminated K-dims,
/// jointly, from softmax_E(Σ_j T_j) given every K-dim sampled before (reverse elimination
/// order). Index i runs over (draw, run, plate element); the draws of E's variable a go to
/// out[a][(draw·runs + run)·out_instances + element·out_scale + out_offset[a]]. A zero-weight
/// conditional (only possible in a run whose log P̂ is −inf) writes −1.
struct IndexSampler {
  LogSumProductElement element;  ///< the step's inputs; its eliminated axes are E
  SampledContext context;
  std::int32_t* out[kMaxStepAxes] = {};
  std::int64_t out_instances = 1;
  std::int64_t out_scale = 1;
  std::int64_t out_offset[kMaxStepAxes] = {};
  /// Global number of the first element (a chunk's window): the uniform of element e is keyed
  /// by element_base + e and its draws go to instance element_base + e, so a chunked run draws
  /// exactly what an unchunked one does.
  std::int64_t element_base = 0;
  /// Instance of the outputs of element 0: element_base for draws of the step's own K-dims,
  /// 0 for a window-local buffer (a chain's boundary values).
  std::int64_t out_element_base = 0;
  RunUniforms uniforms{};  ///< counter (element_base + element, purpose, draw)

  MYRIAD_HD void operator()(std::int64_t i) const {
    std::int64_t draw, run, element_index;
    context.decode(i, draw, run, element_index);
    const std::int64_t global = element_base + element_index;
    std::int64_t base[kMaxStepInputs];
    std::int64_t e = -1;
    if (context.offsets(element.inputs, draw, run, element_index, base))
      e = draw_assignment(element, base, uniforms(run, global, draw));
    const bool zero = e < 0;
    for (int a = element.elim_axes - 1; a >= 0; --a) {
      const std::int64_t digit = zero ? -1 : e % element.elim_extent[a];
      if (!zero) e /= element.elim_extent[a];
      out[a][(draw * context.runs + run) * out_instances +
             (out_element_base + element_index) * out_scale + out_offset[a]] =
          static_cast<std::int32_t>(digit);
    }
  }
};

/// The midpoints of one level of a timeseries chain's product tree (mpis.md §3.6, §6): pair s
/// of level l + 1 spans steps [s·span, min((s+1)·span, T)) and joins level-l slices 2s (A) and
/// 2s + 1 (B); given its end values p (the chain's value before the span) and c (at its last
/// step) it draws the value m at the join ∝ exp(A[p, m] + B[m, c]). `boundary` holds, per
/// (draw, run, outer instance), T + 1 values: position 0 the lag before step 0, position t + 1
/// the chain's value at step t. Index i runs over (draw, run, outer instance, pair).
struct ChainMidpointSampler {
  LogSumProductElement element;                    ///< inputs A, B; one eliminated axis, m
  SampledContext context;                          ///< batch axes: run, outer plates, the pair axis
  std::int64_t left_stride[kMaxStepInputs] = {};   ///< stride of A's lag (B: 0)
  std::int64_t right_stride[kMaxStepInputs] = {};  ///< stride of B's chain (A: 0)
  std::int32_t* boundary = nullptr;
  std::int64_t steps = 1;  ///< T
  std::int64_t pairs = 1;
  std::int64_t span = 2;          ///< 2^(l+1)
  std::int64_t element_base = 0;  ///< global number of element 0 (a chunk's window)
  RunUniforms uniforms{};         ///< counter (element_base + element, purpose, draw)

  MYRIAD_HD void operator()(std::int64_t i) const {
    std::int64_t draw, run, element_index;
    context.decode(i, draw, run, element_index);
    const std::int64_t outer = element_index / pairs, pair = element_index % pairs;
    const std::int64_t outer_instances = context.elements / pairs;
    std::int32_t* b =
        boundary + ((draw * context.runs + run) * outer_instances + outer) * (steps + 1);
    const std::int64_t left = pair * span;
    const std::int64_t right = (pair + 1) * span < steps ? (pair + 1) * span : steps;
    const std::int64_t mid = left + span / 2;
    std::int64_t base[kMaxStepInputs];
    const bool conditioned = context.offsets(element.inputs, draw, run, element_index, base);
    const std::int32_t p = b[left], c = b[right];
    if (!conditioned || p < 0 || c < 0) {  // a zero-weight run: nothing to condition on
      b[mid] = -1;
      return;
    }
    for (int j = 0; j < element.inputs; ++j) base[j] += p * left_stride[j] + c * right_stride[j];
    const double u = uniforms(run, element_base + element_index, draw);
    b[mid] = static_cast<std::int32_t>(draw_assignment(element, base, u));
  }
};

/// From a chain's boundary values to its K-dims: chain[t] = boundary[t + 1], lag[t] =
/// boundary[t]. Index i runs over (draw·run, outer instance of the window, step); the outer
/// instances of the window are instances outer_base … of `outer_instances` in the index arrays.
struct ChainIndicesFromBoundary {
  const std::int32_t* boundary = nullptr;
  std::int32_t* chain = nullptr;
  std::int32_t* lag = nullptr;
  std::int64_t steps = 1;
  std::int64_t window_outer = 1;     ///< outer instances in the window (boundary's layout)
  std::int64_t outer_instances = 1;  ///< outer instances in all
  std::int64_t outer_base = 0;
  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t series = i / steps, t = i % steps;
    const std::int64_t draw_run = series / window_outer, outer = series % window_outer;
    const std::int64_t target = (draw_run * outer_instances + outer_base + outer) * steps + t;
    chain[target] = boundary[series * (steps + 1) + t + 1];
    lag[target] = boundary[series * (steps + 1) + t];
  }
};

/// Global importance sampling (mpis.md §1): log r_k += Σ_instances log P(z_g^k | pa^k) −
/// log Q(z_g^k | qa^k) of latent g, one (run, particle) per index, every parent at particle k.
template <class Model>
struct GlobalLatentTerm {
  LatentLogWeight<Model> weight;
  double* log_r = nullptr;
  MYRIAD_HD void operator()(std::int64_t i) const {
    const GroupView& self = weight.self;
    const std::int64_t run = i / self.k, particle = i % self.k;
    double total = 0.0;
    for (std::int64_t instance = 0; instance < self.instances; ++instance)
      total += weight(run, instance, particle, weight.parents.joint(run, instance, particle));
    log_r[i] += total;
  }
};
/// log r_k += Σ_instances log P(x | pa^k) over every instance of the observation's plates.
template <class Model>
struct GlobalObservedTerm {
  Model model;
  int observed = 0;
  GroupParents parents;
  int depth = 0;
  std::int64_t plate_size[kMaxPlateDepth] = {};
  std::int64_t instances = 1;
  std::int64_t k = 1;
  double* log_r = nullptr;
  MYRIAD_HD void operator()(std::int64_t i) const {
    const std::int64_t run = i / k, particle = i % k;
    double total = 0.0;
    for (std::int64_t instance = 0; instance < instances; ++instance)
      total += model.log_likelihood(observed, parents.joint(run, instance, particle),
                                    plate_index_of(instance, depth, plate_size));
    log_r[i] += total;
  }
};

}  // namespace myriad::mpis_elements
