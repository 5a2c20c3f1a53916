#pragma once
// movielens: binary film ratings from genre features (MovieLens 100K), the third model of the
// MP IS paper (Bowyer, Heap & Aitchison 2024, App. C.3, Eqs. 70–71) at the sizes of its
// reference code's data (mpis.md §9.2 [code], §11: 300 users × 5 films each).
//
// Plates Users (300) → Films (5 rated films per user), G = 18 genres:
//
//   mu, psi ~ N(0, I_G)                                        (event vectors: one index each)
//   z_m ~ N(mu, diag(exp(psi))²)  (elementwise scale exp(psi))  per user (event vector of G)
//   rating_mn ~ Bernoulli(σ(z_m · x_mn))                        per (user, film)
//
// with x_mn ∈ {0, 1}^G the genre indicators of user m's n-th film and rating 1 for 4 or 5 stars.
// Proposal (Eq. 71), factorised: every latent N(0, I_G).
//
// n = 1 + 1 + 300 = 302 index variables; the largest elimination clique is 3 (z_m with mu and
// psi); 1500 observations.

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

/// The plated model: views of the ratings [user][film] and genre features
/// [user][film][genre] (host or device memory).
struct MovieLens {
  /// Latent ids, in the order structure() declares them.
  enum Latent : int { kMu = 0, kPsi, kZ };
  enum Observed : int { kRating = 0 };

  const double* rating = nullptr;    ///< 0 or 1
  const double* features = nullptr;  ///< 0 or 1 per genre
  int users = 300;
  int films = 5;
  int genres = 18;

  PlatedStructure structure() const {
    PlatedStructure s;
    const int user = s.plate("users", users);
    const int film = s.plate("films", films, user);
    const int mu = s.latent("mu", kRootPlate, {}, genres);
    const int psi = s.latent("psi", kRootPlate, {}, genres);
    const int z = s.latent("z", user, {mu, psi}, genres);
    s.observed("rating", film, {z});
    return s;
  }

  /// Every latent is an event vector of one value per genre.
  MYRIAD_HD int event_size(int) const { return genres; }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    if (latent != kZ) return dist::standard_normal_log_density(z, genres);
    const double* mu = parents[0];
    const double* psi = parents[1];
    double lp = 0.0;
    for (int g = 0; g < genres; ++g)
      lp += dist::Normal{mu[g], myriad::exp(psi[g])}.log_density(z[g]);
    return lp;
  }

  MYRIAD_HD double log_proposal(int, const double* z, const ParentValues&,
                                const PlateIndex&) const {
    return dist::standard_normal_log_density(z, genres);
  }

  MYRIAD_HD void sample_proposal(int, double* z, const ParentValues&, const PlateIndex&,
                                 ParticleRandom& rng) const {
    for (int g = 0; g < genres; ++g) z[g] = rng.normal();
  }

  /// log Bernoulli(rating_mn; σ(z_m · x_mn)); parent z; `at` = (user, film).
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    const std::int64_t i = at[0] * films + at[1];
    const double* x = features + i * genres;
    double logit = 0.0;
    for (int g = 0; g < genres; ++g) logit += parents[0][g] * x[g];
    return dist::BernoulliLogits{logit}.log_density(rating[i]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning host data of movielens, with an optional device copy uploaded once, and the true
/// latent values synthetic data were drawn from. Movable, not copyable.
class MovieLensData : public SyntheticPlatedData<MovieLensData> {
 public:
  /// Philox purpose tags of the synthetic data. Each vector or value is one sequential
  /// ParticleRandom draw keyed by (tag, group, element); a draw advances the tag by one per
  /// Philox block (an 18-vector of normals takes 9, a film's genres 10), so tags are 256 apart.
  static constexpr std::uint32_t kLatentPurpose = user_purpose(0x1800);
  static constexpr std::uint32_t kFeaturePurpose = user_purpose(0x1900);
  static constexpr std::uint32_t kRatingPurpose = user_purpose(0x1A00);
  /// Probability that a film has a genre besides its primary one (real films list 1.7 genres
  /// on average; this gives 1 + 17·0.1 = 2.7).
  static constexpr double kSecondaryGenreProbability = 0.1;

  /// Synthetic data at the reference code's sizes (300 users × 5 films, 18 genres). Every latent
  /// is drawn from its prior (latent g's instance i from the draw (kLatentPurpose, g, i)). Genre
  /// features of (user, film): a primary genre uniform on the 18, and each other genre
  /// independently with probability 0.1 (draw (kFeaturePurpose, 0, user·5 + film)). Ratings
  /// from the model (draw (kRatingPurpose, 0, user·5 + film)). All draws use
  /// RandomStream(data_seed, 0), so the data are the same on every machine (up to last-ulp
  /// differences between libm implementations).
  static MovieLensData synthetic(std::uint64_t data_seed) {
    MovieLensData d;
    std::vector<double> rating, features;
    const MovieLens& m = d.model_;
    const KeyedDraws draw = keyed_draws(data_seed);
    const auto g_count = static_cast<std::size_t>(m.genres);
    d.true_latents_.assign(3, {});
    for (int g : {MovieLens::kMu, MovieLens::kPsi}) {
      ParticleRandom rng = draw(kLatentPurpose, static_cast<std::uint32_t>(g), 0);
      for (std::size_t e = 0; e < g_count; ++e)
        d.true_latents_[g].push_back(dist::Normal{0.0, 1.0}.sample(rng));
    }
    const std::vector<double>& mu = d.true_latents_[MovieLens::kMu];
    const std::vector<double>& psi = d.true_latents_[MovieLens::kPsi];
    std::vector<double>& z = d.true_latents_[MovieLens::kZ];
    for (int user = 0; user < m.users; ++user) {
      ParticleRandom rng = draw(kLatentPurpose, MovieLens::kZ, user);
      for (std::size_t e = 0; e < g_count; ++e)
        z.push_back(dist::Normal{mu[e], std::exp(psi[e])}.sample(rng));
    }
    const std::int64_t n = static_cast<std::int64_t>(m.users) * m.films;
    features.assign(static_cast<std::size_t>(n) * g_count, 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      double* x = features.data() + static_cast<std::size_t>(i) * g_count;
      ParticleRandom feature_rng = draw(kFeaturePurpose, 0, i);
      int primary = static_cast<int>(feature_rng.uniform() * m.genres);
      if (primary >= m.genres) primary = m.genres - 1;
      for (int g = 0; g < m.genres; ++g) {
        const bool secondary = feature_rng.uniform() < kSecondaryGenreProbability;
        x[g] = (g == primary || secondary) ? 1.0 : 0.0;
      }
      const double* z_user = z.data() + static_cast<std::size_t>(i / m.films) * g_count;
      double logit = 0.0;
      for (std::size_t g = 0; g < g_count; ++g) logit += z_user[g] * x[g];
      ParticleRandom rating_rng = draw(kRatingPurpose, 0, i);
      rating.push_back(dist::BernoulliLogits{logit}.sample(rating_rng));
    }
    d.rating_ = std::move(rating);
    d.features_ = std::move(features);
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  MovieLens viewing(Copy copy) const {
    return view(copy(rating_), copy(features_));
  }

  /// Ratings (1: 4 or 5 stars), [user][film].
  const std::vector<double>& rating() const { return rating_.host(); }
  /// Genre indicators, [user][film][genre].
  const std::vector<double>& features() const { return features_.host(); }

 private:
  MovieLensData() = default;

  MovieLens view(const double* rating, const double* features) const {
    MovieLens m = model_;
    m.rating = rating;
    m.features = features;
    return m;
  }

  MovieLens model_;
  MirroredArray<double> rating_;
  MirroredArray<double> features_;
};

}  // namespace myriad::models
