#pragma once
// chimpanzees: the prosociality experiment (McElreath's `rethinking` data), the second model of
// the MP IS paper (Bowyer, Heap & Aitchison 2024, App. C.2, Eqs. 68–69) in the version its
// reference code runs (mpis.md §9.2 [code], §11: the HalfCauchy is on σ, and 10 is a scale).
//
// Plates Actors (7) → Blocks (6) → Repeats (10 training pulls per actor and block):
//
//   sigma_actor, sigma_block ~ HalfCauchy(1)
//   alpha, beta_p, beta_pc ~ N(0, 10²)
//   alpha_actor_a ~ N(0, sigma_actor²)                              per actor
//   alpha_block_ab ~ N(0, sigma_block²)                             per (actor, block)
//   pulled_left_abr ~ Bernoulli(σ(alpha + alpha_actor_a + alpha_block_ab
//                                 + (beta_p + beta_pc · Condition_abr) · ProsocLeft_abr))
//
// Proposal (Eq. 69), factorised: HalfCauchy(1) for the σ's, N(0, 10²) for alpha, beta_p and
// beta_pc, N(0, 1) for alpha_actor and alpha_block.
//
// n = 5 + 7 + 42 = 54 index variables; the largest elimination clique is 6 (alpha_block with
// sigma_block and the four other parents of the observations); 420 observations.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/distributions.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/plated_model.hpp"
#include "myriad/models/synthetic_plated_data.hpp"

namespace myriad::models {

/// The plated model: views of the outcomes and covariates (host or device memory), laid out
/// [actor][block][repeat].
struct Chimpanzees {
  /// Latent ids, in the order structure() declares them.
  enum Latent : int {
    kSigmaActor = 0,
    kSigmaBlock,
    kAlpha,
    kBetaP,
    kBetaPC,
    kAlphaActor,
    kAlphaBlock,
  };
  enum Observed : int { kPulledLeft = 0 };
  /// Scale of the N(0, 10²) prior and proposal of alpha, beta_p and beta_pc.
  static constexpr double kCoefficientScale = 10.0;

  const double* pulled_left = nullptr;  ///< 0 or 1
  const double* condition = nullptr;    ///< 0 or 1: a partner was present
  const double* prosoc_left = nullptr;  ///< 0 or 1: the prosocial option was on the left
  int actors = 7;
  int blocks = 6;
  int repeats = 10;

  PlatedStructure structure() const {
    PlatedStructure s;
    const int actor = s.plate("actors", actors);
    const int block = s.plate("blocks", blocks, actor);
    const int repeat = s.plate("repeats", repeats, block);
    const int sigma_actor = s.latent("sigma_actor", kRootPlate);
    const int sigma_block = s.latent("sigma_block", kRootPlate);
    const int alpha = s.latent("alpha", kRootPlate);
    const int beta_p = s.latent("beta_p", kRootPlate);
    const int beta_pc = s.latent("beta_pc", kRootPlate);
    const int alpha_actor = s.latent("alpha_actor", actor, {sigma_actor});
    const int alpha_block = s.latent("alpha_block", block, {sigma_block});
    s.observed("pulled_left", repeat, {alpha, beta_p, beta_pc, alpha_actor, alpha_block});
    return s;
  }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    switch (latent) {
      case kSigmaActor:
      case kSigmaBlock:
        return dist::HalfCauchy{1.0}.log_density(z[0]);
      case kAlphaActor:  // parent: sigma_actor
      case kAlphaBlock:  // parent: sigma_block
        return dist::Normal{0.0, parents[0][0]}.log_density(z[0]);
      default:
        return dist::Normal{0.0, kCoefficientScale}.log_density(z[0]);
    }
  }

  MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues&,
                                const PlateIndex&) const {
    switch (latent) {
      case kSigmaActor:
      case kSigmaBlock:
        return dist::HalfCauchy{1.0}.log_density(z[0]);
      case kAlphaActor:
      case kAlphaBlock:
        return dist::Normal{0.0, 1.0}.log_density(z[0]);
      default:
        return dist::Normal{0.0, kCoefficientScale}.log_density(z[0]);
    }
  }

  MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues&, const PlateIndex&,
                                 ParticleRandom& rng) const {
    switch (latent) {
      case kSigmaActor:
      case kSigmaBlock:
        z[0] = dist::HalfCauchy{1.0}.sample(rng);
        break;
      case kAlphaActor:
      case kAlphaBlock:
        z[0] = dist::Normal{0.0, 1.0}.sample(rng);
        break;
      default:
        z[0] = dist::Normal{0.0, kCoefficientScale}.sample(rng);
        break;
    }
  }

  /// log Bernoulli(pulled_left_abr; σ(logit)); parents alpha, beta_p, beta_pc, alpha_actor,
  /// alpha_block; `at` = (actor, block, repeat).
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    const std::int64_t i = (at[0] * blocks + at[1]) * repeats + at[2];
    const double logit = parents[0][0] + parents[3][0] + parents[4][0] +
                         (parents[1][0] + parents[2][0] * condition[i]) * prosoc_left[i];
    return dist::BernoulliLogits{logit}.log_density(pulled_left[i]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning host data of chimpanzees, with an optional device copy uploaded once, and the true
/// latent values synthetic data were drawn from. Movable, not copyable.
class ChimpanzeesData : public SyntheticPlatedData<ChimpanzeesData> {
 public:
  /// Philox purpose tags of the synthetic data. Each value is one sequential ParticleRandom
  /// draw keyed by (tag, group, element); a draw advances the tag by one per Philox block.
  static constexpr std::uint32_t kLatentPurpose = user_purpose(0x1400);
  static constexpr std::uint32_t kCovariatePurpose = user_purpose(0x1500);
  static constexpr std::uint32_t kOutcomePurpose = user_purpose(0x1600);

  /// Fixed true values of the five global latents. Draws from their priors would make the data
  /// degenerate: HalfCauchy(1) has no mean (a draw of σ_actor = 20 puts every actor's pulls on
  /// one side), and N(0, 10²) draws of alpha, beta_p and beta_pc give logits of typical size
  /// 10, where nearly every outcome is the same. These moderate values keep both outcomes
  /// common and every effect identifiable.
  static constexpr double kTrueSigmaActor = 1.5;
  static constexpr double kTrueSigmaBlock = 0.5;
  static constexpr double kTrueAlpha = 0.5;
  static constexpr double kTrueBetaP = 0.8;
  static constexpr double kTrueBetaPC = -0.3;

  /// Synthetic data at the paper's sizes (7 actors × 6 blocks × 10 repeats). The global
  /// latents take the fixed values above; alpha_actor_a ~ N(0, σ_actor²) and alpha_block_ab ~
  /// N(0, σ_block²) are drawn from their priors (latent g's instance i from the draw
  /// (kLatentPurpose, g, i)). Covariates: Condition_abr ~ Bernoulli(½) (draw (kCovariatePurpose,
  /// 0, pull)) and ProsocLeft_abr ~ Bernoulli(½) (draw (kCovariatePurpose, 1, pull)),
  /// independently, pull = (actor·6 + block)·10 + repeat. Outcomes from the model (draw
  /// (kOutcomePurpose, 0, pull)). All draws use RandomStream(data_seed, 0), so the data are the
  /// same on every machine (up to last-ulp differences between libm implementations).
  static ChimpanzeesData synthetic(std::uint64_t data_seed) {
    ChimpanzeesData d;
    const Chimpanzees& m = d.model_;
    const KeyedDraws draw = keyed_draws(data_seed);
    d.true_latents_ = {
        {kTrueSigmaActor}, {kTrueSigmaBlock}, {kTrueAlpha}, {kTrueBetaP}, {kTrueBetaPC}, {}, {}};
    for (int a = 0; a < m.actors; ++a) {
      ParticleRandom rng = draw(kLatentPurpose, Chimpanzees::kAlphaActor, a);
      d.true_latents_[Chimpanzees::kAlphaActor].push_back(
          dist::Normal{0.0, kTrueSigmaActor}.sample(rng));
    }
    for (int ab = 0; ab < m.actors * m.blocks; ++ab) {
      ParticleRandom rng = draw(kLatentPurpose, Chimpanzees::kAlphaBlock, ab);
      d.true_latents_[Chimpanzees::kAlphaBlock].push_back(
          dist::Normal{0.0, kTrueSigmaBlock}.sample(rng));
    }
    const std::int64_t n = static_cast<std::int64_t>(m.actors) * m.blocks * m.repeats;
    std::vector<double> pulled_left, condition, prosoc_left;
    for (std::int64_t pull = 0; pull < n; ++pull) {
      ParticleRandom condition_rng = draw(kCovariatePurpose, 0, pull);
      ParticleRandom prosoc_rng = draw(kCovariatePurpose, 1, pull);
      const double partner = dist::BernoulliLogits{0.0}.sample(condition_rng);
      const double prosocial_left = dist::BernoulliLogits{0.0}.sample(prosoc_rng);
      const std::int64_t ab = pull / m.repeats, a = ab / m.blocks;
      const double logit = kTrueAlpha +
                           d.true_latents_[Chimpanzees::kAlphaActor][static_cast<std::size_t>(a)] +
                           d.true_latents_[Chimpanzees::kAlphaBlock][static_cast<std::size_t>(ab)] +
                           (kTrueBetaP + kTrueBetaPC * partner) * prosocial_left;
      ParticleRandom outcome_rng = draw(kOutcomePurpose, 0, pull);
      condition.push_back(partner);
      prosoc_left.push_back(prosocial_left);
      pulled_left.push_back(dist::BernoulliLogits{logit}.sample(outcome_rng));
    }
    d.pulled_left_ = std::move(pulled_left);
    d.condition_ = std::move(condition);
    d.prosoc_left_ = std::move(prosoc_left);
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Chimpanzees viewing(Copy copy) const {
    return view(copy(pulled_left_), copy(condition_), copy(prosoc_left_));
  }

  /// Outcomes (1: pulled the left lever), [actor][block][repeat].
  const std::vector<double>& pulled_left() const { return pulled_left_.host(); }
  /// Condition (1: partner present), [actor][block][repeat].
  const std::vector<double>& condition() const { return condition_.host(); }
  /// ProsocLeft (1: the prosocial option on the left), [actor][block][repeat].
  const std::vector<double>& prosoc_left() const { return prosoc_left_.host(); }

 private:
  ChimpanzeesData() = default;

  Chimpanzees view(const double* pulled_left, const double* condition,
                   const double* prosoc_left) const {
    Chimpanzees m = model_;
    m.pulled_left = pulled_left;
    m.condition = condition;
    m.prosoc_left = prosoc_left;
    return m;
  }

  Chimpanzees model_;
  MirroredArray<double> pulled_left_, condition_, prosoc_left_;
};

}  // namespace myriad::models
