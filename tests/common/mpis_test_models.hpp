#pragma once
// Small plated models for the MP IS tests: linear-Gaussian conditionals on a configurable plate
// structure, with proposals that are deliberately not the prior (so that weights vary), and a
// brute-force enumeration of every index tuple k ∈ {0..K−1}^n of one run (mpis.md §2.2),
// written independently of the engine: its own instance → parent mapping, its own mixture
// proposal densities.

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "myriad/core/math.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::testing {

/// The structures the tests use (TestPlatedModel::kind).
enum class TestStructure {
  two_level,          ///< mu; z[a] | mu; x[a, b] | z[a]           (factorised proposal)
  two_level_mixture,  ///< the same with z's proposal conditioned on mu (parent mixture)
  v_structure,        ///< a, b; c[p] | a; x[p] | c[p], b           (explaining away, mpis.md §6)
  timeseries,         ///< s; z[t] | z[t−1], s; x[t] | z[t]         (mixture on the previous step)
  plate_of_series,    ///< m[p]; z[p, t] | z[p, t−1], m[p]; x[p, t] | z[p, t]
  vector_event,       ///< w (2 values); y[a] | w; x[a] | y[a]
};

/// z ~ N(coupling · Σ_parents parent[0], prior_sd²) per event value; proposal N(loc + 0.6 ·
/// Σ_qa qa[0], proposal_sd²); x[at] ~ N(Σ_parents parent[0] (+ parent[1]), obs_sd²) with
/// data x[at] = 1.5 sin(1 + o + Σ_d (d + 1)·at[d]).
struct TestPlatedModel {
  TestStructure kind = TestStructure::two_level;
  double coupling = 0.9;
  double prior_sd = 1.0;
  double proposal_loc = 0.3;
  double proposal_sd = 1.4;
  double obs_sd = 0.8;

  PlatedStructure structure() const {
    PlatedStructure s;
    switch (kind) {
      case TestStructure::two_level:
      case TestStructure::two_level_mixture: {
        const int a = s.plate("a", 2);
        const int b = s.plate("b", 2, a);
        const int mu = s.latent("mu", kRootPlate);
        const int z = s.latent(
            "z", a, {mu}, 1,
            kind == TestStructure::two_level_mixture ? std::vector<int>{mu} : std::vector<int>{});
        s.observed("x", b, {z});
        break;
      }
      case TestStructure::v_structure: {
        const int p = s.plate("p", 2);
        const int a = s.latent("a", kRootPlate);
        const int b = s.latent("b", kRootPlate);
        const int c = s.latent("c", p, {a});
        s.observed("x", p, {c, b});
        break;
      }
      case TestStructure::timeseries: {
        const int t = s.timeseries("t", 4);
        const int sc = s.latent("s", kRootPlate);
        const int z = s.latent("z", t, {kPreviousStep, sc}, 1, {kPreviousStep});
        s.observed("x", t, {z});
        break;
      }
      case TestStructure::plate_of_series: {
        const int p = s.plate("p", 2);
        const int t = s.timeseries("t", 3, p);
        const int m = s.latent("m", p);
        const int z = s.latent("z", t, {kPreviousStep, m}, 1, {kPreviousStep});
        s.observed("x", t, {z});
        break;
      }
      case TestStructure::vector_event: {
        const int a = s.plate("a", 3);
        const int w = s.latent("w", kRootPlate, {}, 2);
        const int y = s.latent("y", a, {w});
        s.observed("x", a, {y});
        break;
      }
    }
    return s;
  }

  static double sum_first(const ParentValues& p) {
    double sum = 0;
    for (int s = 0; s < p.count; ++s)
      if (p[s]) sum += p[s][0];
    return sum;
  }
  int event_size(int latent) const {
    return kind == TestStructure::vector_event && latent == 0 ? 2 : 1;
  }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    double mean = coupling * sum_first(parents);
    if (kind == TestStructure::vector_event && latent == 1) mean += 0.5 * parents[0][1];
    double lp = 0;
    for (int c = 0; c < event_size(latent); ++c) lp += normal_log_density(z[c], mean, prior_sd);
    return lp;
  }
  MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues& qa,
                                const PlateIndex&) const {
    const double mean = proposal_loc + 0.6 * sum_first(qa);
    double lp = 0;
    for (int c = 0; c < event_size(latent); ++c) lp += normal_log_density(z[c], mean, proposal_sd);
    return lp;
  }
  MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues& qa, const PlateIndex&,
                                 ParticleRandom& rng) const {
    const double mean = proposal_loc + 0.6 * sum_first(qa);
    for (int c = 0; c < event_size(latent); ++c) z[c] = mean + proposal_sd * rng.normal();
  }
  static double data(int observed, const PlateIndex& at) {
    double phase = 1.0 + observed;
    for (int d = 0; d < at.depth; ++d) phase += (d + 1) * static_cast<double>(at[d]);
    return 1.5 * std::sin(phase);
  }
  MYRIAD_HD double log_likelihood(int observed, const ParentValues& parents,
                                  const PlateIndex& at) const {
    return normal_log_density(data(observed, at), sum_first(parents), obs_sd);
  }
};

/// Every index tuple of one run, enumerated: log r_k for each (mpis.md §2.2), from the
/// particles the engine drew. Instances are listed latent by latent, each latent's instances
/// row-major over its plate path.
class BruteForce {
 public:
  /// particles[g] is the engine's [run][instance][K][event] array of latent g.
  BruteForce(const TestPlatedModel& model, const PlatedStructure& s, std::int64_t k,
             const std::vector<std::vector<double>>& particles, int run)
      : model_(model), s_(s), k_(k), particles_(particles), run_(run) {
    for (int g = 0; g < s.latent_count(); ++g) {
      first_.push_back(static_cast<int>(owner_.size()));
      for (std::int64_t i = 0; i < s.instances(s.latent_decl(g).plate); ++i) {
        owner_.push_back(g);
        instance_.push_back(i);
      }
    }
    std::int64_t tuples = 1;
    for (std::size_t v = 0; v < owner_.size(); ++v) tuples *= k;
    log_r_.resize(static_cast<std::size_t>(tuples));
    std::vector<std::int64_t> tuple(owner_.size());
    for (std::int64_t c = 0; c < tuples; ++c) {
      decode(c, tuple);
      log_r_[static_cast<std::size_t>(c)] = log_weight(tuple);
    }
  }

  std::size_t variables() const { return owner_.size(); }
  std::int64_t tuples() const { return static_cast<std::int64_t>(log_r_.size()); }
  /// Position of latent g's instance i among the variables.
  int variable(int g, std::int64_t i) const { return first_[g] + static_cast<int>(i); }
  const std::vector<double>& log_r() const { return log_r_; }

  void decode(std::int64_t c, std::vector<std::int64_t>& tuple) const {
    for (std::size_t v = owner_.size(); v-- > 0;) {
      tuple[v] = c % k_;
      c /= k_;
    }
  }

  /// log (1/K^n) Σ_k r_k, max-shifted. (The 1/K^n is inside the factors' −log K.)
  double log_p() const {
    double m = -INFINITY;
    for (double x : log_r_) m = std::max(m, x);
    double sum = 0;
    for (double x : log_r_) sum += std::exp(x - m);
    return m + std::log(sum);
  }

  /// P_z(k) for every tuple.
  std::vector<double> probabilities() const {
    const double lp = log_p();
    std::vector<double> p;
    for (double x : log_r_) p.push_back(std::exp(x - lp));
    return p;
  }

 private:
  const double* value(int g, std::int64_t instance, std::int64_t k) const {
    const std::int64_t instances = s_.instances(s_.latent_decl(g).plate);
    const int event = s_.latent_decl(g).event_size;
    return particles_[g].data() + ((run_ * instances + instance) * k_ + k) * event;
  }
  /// The parent's instance for a child instance: the child's plate indices truncated to the
  /// parent's path.
  std::int64_t parent_instance(int child_plate, std::int64_t child, int parent_plate) const {
    const std::vector<int> cp = s_.path(child_plate), pp = s_.path(parent_plate);
    std::int64_t divisor = 1;
    for (std::size_t d = pp.size(); d < cp.size(); ++d) divisor *= s_.plate_decl(cp[d]).size;
    return child / divisor;
  }
  PlateIndex plate_index(int plate, std::int64_t instance) const {
    const std::vector<int> path = s_.path(plate);
    PlateIndex at;
    at.depth = static_cast<int>(path.size());
    for (int d = at.depth - 1; d >= 0; --d) {
      at.index[d] = instance % s_.plate_decl(path[d]).size;
      instance /= s_.plate_decl(path[d]).size;
    }
    return at;
  }
  /// log Q_MP: the mean over every combination of the proposal parents' particles.
  double log_q_mixture(int g, std::int64_t instance, const double* z) const {
    const LatentDecl& decl = s_.latent_decl(g);
    const PlateIndex at = plate_index(decl.plate, instance);
    std::vector<int> slots;
    for (int q : decl.proposal_parents)
      if (!(q == kPreviousStep && at[at.depth - 1] == 0)) slots.push_back(q);
    std::int64_t combos = 1;
    for (std::size_t i = 0; i < slots.size(); ++i) combos *= k_;
    double m = -INFINITY;
    std::vector<double> terms;
    for (std::int64_t c = 0; c < combos; ++c) {
      ParentValues qa;
      qa.count = static_cast<int>(decl.proposal_parents.size());
      std::int64_t rest = c;
      int used = 0;
      for (std::size_t s = 0; s < decl.proposal_parents.size(); ++s) {
        const int q = decl.proposal_parents[s];
        if (q == kPreviousStep && at[at.depth - 1] == 0) {
          qa.value[s] = nullptr;
          continue;
        }
        const std::int64_t pk = rest % k_;
        rest /= k_;
        ++used;
        qa.value[s] =
            q == kPreviousStep
                ? value(g, instance - 1, pk)
                : value(q, parent_instance(decl.plate, instance, s_.latent_decl(q).plate), pk);
      }
      (void)used;
      terms.push_back(model_.log_proposal(g, z, qa, at));
      m = std::max(m, terms.back());
    }
    double sum = 0;
    for (double x : terms) sum += std::exp(x - m);
    return m + std::log(sum / static_cast<double>(combos));
  }
  double log_weight(const std::vector<std::int64_t>& tuple) const {
    double total = 0;
    for (std::size_t v = 0; v < owner_.size(); ++v) {
      const int g = owner_[v];
      const std::int64_t i = instance_[v];
      const LatentDecl& decl = s_.latent_decl(g);
      const PlateIndex at = plate_index(decl.plate, i);
      ParentValues pa;
      pa.count = static_cast<int>(decl.parents.size());
      for (std::size_t s = 0; s < decl.parents.size(); ++s) {
        const int p = decl.parents[s];
        if (p == kPreviousStep) {
          pa.value[s] = at[at.depth - 1] == 0 ? nullptr : value(g, i - 1, tuple[v - 1]);
        } else {
          const std::int64_t pi = parent_instance(decl.plate, i, s_.latent_decl(p).plate);
          pa.value[s] = value(p, pi, tuple[static_cast<std::size_t>(variable(p, pi))]);
        }
      }
      const double* z = value(g, i, tuple[v]);
      total += model_.log_prior(g, z, pa, at) - log_q_mixture(g, i, z) -
               std::log(static_cast<double>(k_));
    }
    for (int o = 0; o < s_.observed_count(); ++o) {
      const ObservedDecl& decl = s_.observed_decl(o);
      for (std::int64_t i = 0; i < s_.instances(decl.plate); ++i) {
        ParentValues pa;
        pa.count = static_cast<int>(decl.parents.size());
        for (std::size_t s = 0; s < decl.parents.size(); ++s) {
          const int p = decl.parents[s];
          const std::int64_t pi = parent_instance(decl.plate, i, s_.latent_decl(p).plate);
          pa.value[s] = value(p, pi, tuple[static_cast<std::size_t>(variable(p, pi))]);
        }
        total += model_.log_likelihood(o, pa, plate_index(decl.plate, i));
      }
    }
    return total;
  }

  TestPlatedModel model_;
  const PlatedStructure& s_;
  std::int64_t k_;
  const std::vector<std::vector<double>>& particles_;
  std::int64_t run_;
  std::vector<int> first_;
  std::vector<int> owner_;
  std::vector<std::int64_t> instance_;
  std::vector<double> log_r_;
};

}  // namespace myriad::testing
