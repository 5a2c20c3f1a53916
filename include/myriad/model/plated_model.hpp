#pragma once
// The plated-model concept for massively parallel importance sampling (MP IS; Bowyer, Heap &
// Aitchison 2024; mpis.md §2). A model declares its plates, latent groups and observed groups
// on the host (PlatedStructure) and evaluates its densities in device code:
//
//   struct MyModel {                          // trivially copyable; data through device views
//     PlatedStructure structure() const;      // host: plates, latents, observations
//     MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
//                                const PlateIndex& at) const;       // log P(z | parents)
//     MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues& qa,
//                                   const PlateIndex& at) const;    // log Q(z | qa)
//     MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues& qa,
//                                    const PlateIndex& at, ParticleRandom& rng) const;
//     MYRIAD_HD double log_likelihood(int observed, const ParentValues& parents,
//                                     const PlateIndex& at) const;  // log P(x_at | parents)
//   };
//
// Optional host members, detected at compile time:
//   double exact_log_marginal() const;                 // log P(x), when known (conjugate models)
//   std::vector<ExactMoment> exact_posterior() const;  // per quantity (names as quantity_names)
//
// `latent` and `observed` are the ids PlatedStructure returned. A latent instance is one
// element of its plate path (every plate from the root down to its own), and each instance
// gets its own K particles and its own index k (mpis.md §2.3). `z` points at the instance's
// event vector (event_size values; discrete latents hold their value as a double). `parents`
// holds a pointer to each parent's event vector, in the order the parents were declared, at the
// chosen particle of the parent instance that the child's plate element belongs to; `qa` the
// same for the proposal parents. A timeseries latent that names kPreviousStep among its parents
// sees its own value at t − 1 in that slot, and nullptr at t = 0 (its initial distribution).
// `at` gives the instance's index in each plate of its path (for an observation, of the
// observation's plate path), outermost first.

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/exact_moment.hpp"

namespace myriad {

/// Deepest plate nesting, and most parents of one latent or observed group.
inline constexpr int kMaxPlateDepth = 6;
inline constexpr int kMaxGroupParents = 6;

/// The plate id of the root (no plate).
inline constexpr int kRootPlate = -1;
/// A parent id meaning "this latent's own value at the previous step of its timeseries plate".
inline constexpr int kPreviousStep = -2;

/// A group instance's index in each plate of its path, outermost first.
struct PlateIndex {
  int depth = 0;
  std::int64_t index[kMaxPlateDepth] = {};
  MYRIAD_HD std::int64_t operator[](int d) const { return index[d]; }
};

/// Pointers to the event vectors of a group's parents at their chosen particles, in declared
/// order; a kPreviousStep slot is nullptr at t = 0.
struct ParentValues {
  int count = 0;
  const double* value[kMaxGroupParents] = {};
  MYRIAD_HD const double* operator[](int i) const { return value[i]; }
};

/// Random numbers for drawing one proposal particle: uniforms and normals taken in sequence from
/// the Philox stream of its run, keyed by (latent, instance, particle), so that every particle
/// is reproducible for any launch configuration (DESIGN.md rule 2). Philox counter: draw =
/// particle, purpose = kMpisProposalPurpose + 65536·latent + block, iteration = instance.
class ParticleRandom {
 public:
  MYRIAD_HD ParticleRandom(const RandomStream& stream, std::uint32_t purpose_base,
                           std::uint32_t instance, std::uint32_t particle)
      : stream_(stream), purpose_base_(purpose_base), instance_(instance), particle_(particle) {}

  /// Uniform on (0, 1) with 52 random bits.
  MYRIAD_HD double uniform() {
    if (cached_words_ == 0) refill();
    const int i = 4 - cached_words_;
    cached_words_ -= 2;
    return RandomStream::uniform_from_words<double>(words_.v[i], words_.v[i + 1]);
  }

  /// Standard normal (Box–Muller; the second value of a pair is kept for the next call).
  MYRIAD_HD double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double radius = myriad::sqrt(-2.0 * myriad::log(u1));
    const double angle = 6.283185307179586476925 * u2;
    spare_ = radius * myriad::sin(angle);
    has_spare_ = true;
    return radius * myriad::cos(angle);
  }

  /// Exponential with rate 1.
  MYRIAD_HD double exponential() { return -myriad::log(uniform()); }

 private:
  MYRIAD_HD void refill() {
    words_ = stream_.block(instance_, static_cast<Purpose>(purpose_base_ + block_), particle_);
    ++block_;
    cached_words_ = 4;
  }
  RandomStream stream_;
  std::uint32_t purpose_base_;
  std::uint32_t instance_;
  std::uint32_t particle_;
  std::uint32_t block_ = 0;
  RandomStream::Block words_ = {};
  int cached_words_ = 0;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

/// Philox purpose tags of MP IS: particles of latent g use kMpisProposalPurpose + 65536·g + b
/// (b the Philox block within the particle), the parent permutations of g's proposal slot s use
/// kMpisPermutationPurpose + 64·g + s, and posterior index sampling uses kMpisIndexPurpose + op.
inline constexpr std::uint32_t kMpisProposalPurpose = 1u << 31;
inline constexpr std::uint32_t kMpisPermutationPurpose = (1u << 30) + (1u << 29);
inline constexpr std::uint32_t kMpisIndexPurpose = 1u << 30;

struct PlateDecl {
  std::string name;
  std::int64_t size = 1;
  int parent = kRootPlate;
  bool timeseries = false;
};

struct LatentDecl {
  std::string name;
  int plate = kRootPlate;
  int event_size = 1;
  std::vector<int> parents;           ///< latent ids (declared earlier) or kPreviousStep
  std::vector<int> proposal_parents;  ///< a subset of parents: the parent-mixture proposal
};

struct ObservedDecl {
  std::string name;
  int plate = kRootPlate;
  std::vector<int> parents;  ///< latent ids
};

/// The plates, latent groups and observed groups of a model, checked as they are declared.
///
///   PlatedStructure s;
///   int groups = s.plate("groups", 10);
///   int obs = s.plate("obs", 5, groups);
///   int mu = s.latent("mu", kRootPlate);
///   int z = s.latent("z", groups, {mu});
///   s.observed("x", obs, {z});
///
/// Rules (mpis.md §2.3, §3.6): a parent's plate is the child's plate or one of its ancestors;
/// parents are declared before their children; a timeseries plate holds exactly one latent that
/// names kPreviousStep among its parents (the chain), and only that latent may; proposal parents
/// are parents (the proposal of a latent with proposal parents is the uniform mixture over every
/// combination of their particles, drawn by the permutation sampler, mpis.md §2.1). Violations
/// throw myriad::invalid_argument naming the group.
class PlatedStructure {
 public:
  /// A plate of `size` elements inside `parent`; returns its id.
  int plate(const std::string& name, std::int64_t size, int parent = kRootPlate) {
    return add_plate(name, size, parent, false);
  }
  /// A timeseries plate of `length` steps: its chain latent depends on its previous step.
  int timeseries(const std::string& name, std::int64_t length, int parent = kRootPlate) {
    return add_plate(name, length, parent, true);
  }

  /// A latent group in `plate` with `parents` (latent ids, or kPreviousStep), an event vector of
  /// `event_size` values per instance, and the parents its proposal conditions on.
  int latent(const std::string& name, int plate, std::vector<int> parents = {}, int event_size = 1,
             std::vector<int> proposal_parents = {});

  /// An observed group in `plate` whose likelihood depends on `parents`.
  int observed(const std::string& name, int plate, std::vector<int> parents);

  int plate_count() const { return static_cast<int>(plates_.size()); }
  int latent_count() const { return static_cast<int>(latents_.size()); }
  int observed_count() const { return static_cast<int>(observed_.size()); }
  const PlateDecl& plate_decl(int p) const { return plates_.at(static_cast<std::size_t>(p)); }
  const LatentDecl& latent_decl(int g) const { return latents_.at(static_cast<std::size_t>(g)); }
  const ObservedDecl& observed_decl(int o) const {
    return observed_.at(static_cast<std::size_t>(o));
  }

  /// The plates from the root down to `plate` (empty for the root).
  std::vector<int> path(int plate) const;
  /// True when `ancestor` is `plate` or encloses it (the root encloses everything).
  bool encloses(int ancestor, int plate) const;
  /// Number of instances of a group in `plate`: the product of the sizes along its path.
  std::int64_t instances(int plate) const;
  /// The chain latent of a timeseries plate, or −1.
  int chain_latent(int plate) const;
  /// Throws unless every timeseries plate has its chain latent and at least one latent exists.
  void validate() const;

 private:
  int add_plate(const std::string& name, std::int64_t size, int parent, bool timeseries);
  void check_new_name(const std::string& name) const;
  void check_plate(int plate, const std::string& who) const;
  std::vector<PlateDecl> plates_;
  std::vector<LatentDecl> latents_;
  std::vector<ObservedDecl> observed_;
};

namespace detail {
template <class Model>
using exact_log_marginal_expression = decltype(std::declval<const Model&>().exact_log_marginal());
template <class Model>
using exact_posterior_expression = decltype(std::declval<const Model&>().exact_posterior());
}  // namespace detail

/// True when the model (or its data) knows its exact log marginal likelihood.
template <class Model>
constexpr bool plated_has_exact_log_marginal =
    is_detected_v<detail::exact_log_marginal_expression, Model>;
/// True when the model (or its data) knows its exact posterior moments.
template <class Model>
constexpr bool plated_has_exact_posterior =
    is_detected_v<detail::exact_posterior_expression, Model>;

}  // namespace myriad
