#pragma once
// occupancy: bird occupancy from the North American Breeding Bird Survey, the fourth model of
// the MP IS paper (Bowyer, Heap & Aitchison 2024, App. C.4, Eqs. 72–73) in the version its
// reference code runs (mpis.md §9.2 [code], §11: BirdMean is indexed by the species only).
//
// Plates Birds (12 species) → Years (6) → Sites (200 training routes) → Replicates (5):
//
//   mu_b, sigma_b, mu_q, sigma_q, mu_w, sigma_w ~ N(0, 1)                      (hyper-latents)
//   bird_mean_j ~ N(mu_b, exp(sigma_b)²), quality_weight_j ~ N(mu_q, exp(sigma_q)²),
//   weather_weight_j ~ N(mu_w, exp(sigma_w)²)                                 per species
//   bird_year_mean_jm ~ N(bird_mean_j, 1)                                     per (species, year)
//   z_jmi ~ Bernoulli(logits = bird_year_mean_jm · weather_weight_j · Weather_jmi)   occupied?
//   y_jmir ~ Bernoulli(logits = z_jmi · quality_weight_j · Quality_jmir + (1 − z_jmi)(−10))
//
// Proposal (Eq. 73): the continuous latents N(0, 1), factorised; z_jmi from its prior
// conditional given the proposal particles of its parents (bird_year_mean, weather_weight):
// the parent-mixture proposal of mpis.md §2.1, the only one in the paper. The engine draws z's
// particles by the permutation sampler and weights them by the mixture density
// (1/K²) Σ_{k,k'} Q(z | bird_year_mean^k, weather_weight^k'), so log_proposal and
// sample_proposal here are just the prior conditional.
//
// n = 6 + 3·12 + 72 + 14400 = 14514 index variables; the largest elimination clique is 7 (the
// last species-level latent with the six hyper-latents); 72000 observations.

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

/// The plated model: views of the detections and Quality [bird][year][site][replicate] and of
/// Weather [bird][year][site] (host or device memory).
struct Occupancy {
  /// Latent ids, in the order structure() declares them.
  enum Latent : int {
    kMuBirdMean = 0,
    kSigmaBirdMean,
    kMuQualityWeight,
    kSigmaQualityWeight,
    kMuWeatherWeight,
    kSigmaWeatherWeight,
    kBirdMean,
    kQualityWeight,
    kWeatherWeight,
    kBirdYearMean,
    kOccupied,
  };
  enum Observed : int { kDetected = 0 };
  /// Logit of a detection at an unoccupied site (Eq. 72): false detections are rare.
  static constexpr double kUnoccupiedLogit = -10.0;

  const double* detected = nullptr;  ///< 0 or 1, [bird][year][site][replicate]
  const double* quality = nullptr;   ///< 0 or 1 (protocol followed), [bird][year][site][replicate]
  const double* weather = nullptr;   ///< standardised temperature, [bird][year][site]
  int birds = 12;
  int years = 6;
  int sites = 200;
  int replicates = 5;

  PlatedStructure structure() const {
    PlatedStructure s;
    const int bird = s.plate("birds", birds);
    const int year = s.plate("years", years, bird);
    const int site = s.plate("sites", sites, year);
    const int replicate = s.plate("replicates", replicates, site);
    const int mu_b = s.latent("mu_bird_mean", kRootPlate);
    const int sigma_b = s.latent("sigma_bird_mean", kRootPlate);
    const int mu_q = s.latent("mu_quality_weight", kRootPlate);
    const int sigma_q = s.latent("sigma_quality_weight", kRootPlate);
    const int mu_w = s.latent("mu_weather_weight", kRootPlate);
    const int sigma_w = s.latent("sigma_weather_weight", kRootPlate);
    const int bird_mean = s.latent("bird_mean", bird, {mu_b, sigma_b});
    const int quality_weight = s.latent("quality_weight", bird, {mu_q, sigma_q});
    const int weather_weight = s.latent("weather_weight", bird, {mu_w, sigma_w});
    const int bird_year_mean = s.latent("bird_year_mean", year, {bird_mean});
    const int occupied =
        s.latent("z", site, {bird_year_mean, weather_weight}, 1, {bird_year_mean, weather_weight});
    s.observed("y", replicate, {occupied, quality_weight});
    return s;
  }

  /// The occupancy probability's logit, bird_year_mean · weather_weight · Weather at `at` =
  /// (bird, year, site).
  MYRIAD_HD double occupancy_logit(double bird_year_mean, double weather_weight,
                                   const PlateIndex& at) const {
    const std::int64_t i = (at[0] * years + at[1]) * sites + at[2];
    return bird_year_mean * weather_weight * weather[i];
  }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex& at) const {
    switch (latent) {
      case kBirdMean:  // parents: the matching (mu, sigma) pair
      case kQualityWeight:
      case kWeatherWeight:
        return dist::Normal{parents[0][0], myriad::exp(parents[1][0])}.log_density(z[0]);
      case kBirdYearMean:  // parent: bird_mean
        return dist::Normal{parents[0][0], 1.0}.log_density(z[0]);
      case kOccupied:  // parents: bird_year_mean, weather_weight
        return dist::BernoulliLogits{occupancy_logit(parents[0][0], parents[1][0], at)}.log_density(
            z[0]);
      default:
        return dist::Normal{0.0, 1.0}.log_density(z[0]);
    }
  }

  /// N(0, 1), or for z its prior conditional given `qa` = (bird_year_mean, weather_weight).
  MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues& qa,
                                const PlateIndex& at) const {
    if (latent == kOccupied)
      return dist::BernoulliLogits{occupancy_logit(qa[0][0], qa[1][0], at)}.log_density(z[0]);
    return dist::Normal{0.0, 1.0}.log_density(z[0]);
  }

  MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues& qa,
                                 const PlateIndex& at, ParticleRandom& rng) const {
    if (latent == kOccupied)
      z[0] = dist::BernoulliLogits{occupancy_logit(qa[0][0], qa[1][0], at)}.sample(rng);
    else
      z[0] = dist::Normal{0.0, 1.0}.sample(rng);
  }

  /// log Bernoulli(y_jmir; σ(z · quality_weight_j · Quality_jmir + (1 − z)(−10))); parents z,
  /// quality_weight; `at` = (bird, year, site, replicate).
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    const std::int64_t i = ((at[0] * years + at[1]) * sites + at[2]) * replicates + at[3];
    const double occupied = parents[0][0];
    const double logit =
        occupied * parents[1][0] * quality[i] + (1.0 - occupied) * kUnoccupiedLogit;
    return dist::BernoulliLogits{logit}.log_density(detected[i]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning host data of occupancy, with an optional device copy uploaded once, and the true
/// latent values synthetic data were drawn from. Movable, not copyable.
class OccupancyData : public SyntheticPlatedData<OccupancyData> {
 public:
  /// Philox purpose tags of the synthetic data. Each value is one sequential ParticleRandom
  /// draw keyed by (tag, group, element); a draw advances the tag by one per Philox block.
  static constexpr std::uint32_t kLatentPurpose = user_purpose(0x1C00);
  static constexpr std::uint32_t kCovariatePurpose = user_purpose(0x1D00);
  static constexpr std::uint32_t kDetectionPurpose = user_purpose(0x1E00);

  /// Synthetic data at the paper's sizes (12 species × 6 years × 200 sites × 5 replicates).
  /// Every latent, z included, is drawn from its prior (latent g's instance i from the draw
  /// (kLatentPurpose, g, i)). Covariates: Weather_jmi ~ N(0, 1), a standardised temperature
  /// (draw (kCovariatePurpose, 0, site), site = (bird·6 + year)·200 + i), and Quality_jmir ~
  /// Bernoulli(½) (draw (kCovariatePurpose, 1, site·5 + r)). Detections from the model (draw
  /// (kDetectionPurpose, 0, site·5 + r)). All draws use RandomStream(data_seed, 0), so the data
  /// are the same on every machine (up to last-ulp differences between libm implementations).
  static OccupancyData synthetic(std::uint64_t data_seed) {
    OccupancyData d;
    std::vector<double> detected, quality, weather;
    const Occupancy& m = d.model_;
    const KeyedDraws draw = keyed_draws(data_seed);
    const std::int64_t bird_years = static_cast<std::int64_t>(m.birds) * m.years;
    const std::int64_t site_count = bird_years * m.sites;
    const std::int64_t visit_count = site_count * m.replicates;

    weather.resize(static_cast<std::size_t>(site_count));
    for (std::int64_t site = 0; site < site_count; ++site) {
      ParticleRandom rng = draw(kCovariatePurpose, 0, site);
      weather[static_cast<std::size_t>(site)] = dist::Normal{0.0, 1.0}.sample(rng);
    }
    quality.resize(static_cast<std::size_t>(visit_count));
    for (std::int64_t visit = 0; visit < visit_count; ++visit) {
      ParticleRandom rng = draw(kCovariatePurpose, 1, visit);
      quality[static_cast<std::size_t>(visit)] = dist::BernoulliLogits{0.0}.sample(rng);
    }

    auto& truth = d.true_latents_;
    truth.assign(Occupancy::kOccupied + 1, {});
    const auto sample = [&](int g, std::int64_t instances, auto&& prior) {
      for (std::int64_t i = 0; i < instances; ++i) {
        ParticleRandom rng = draw(kLatentPurpose, static_cast<std::uint32_t>(g), i);
        truth[static_cast<std::size_t>(g)].push_back(prior(i).sample(rng));
      }
    };
    for (int g = Occupancy::kMuBirdMean; g <= Occupancy::kSigmaWeatherWeight; ++g)
      sample(g, 1, [](std::int64_t) { return dist::Normal{0.0, 1.0}; });
    // bird_mean, quality_weight, weather_weight: parents (mu, sigma) are hyper-latents 2h, 2h+1.
    for (int h = 0; h < 3; ++h) {
      const double mu = truth[static_cast<std::size_t>(2 * h)][0];
      const double scale = std::exp(truth[static_cast<std::size_t>(2 * h + 1)][0]);
      sample(Occupancy::kBirdMean + h, m.birds, [&](std::int64_t) {
        return dist::Normal{mu, scale};
      });
    }
    const std::vector<double>& bird_mean = truth[Occupancy::kBirdMean];
    const std::vector<double>& weather_weight = truth[Occupancy::kWeatherWeight];
    const std::vector<double>& quality_weight = truth[Occupancy::kQualityWeight];
    sample(Occupancy::kBirdYearMean, bird_years, [&](std::int64_t jm) {
      return dist::Normal{bird_mean[static_cast<std::size_t>(jm / m.years)], 1.0};
    });
    const std::vector<double>& bird_year_mean = truth[Occupancy::kBirdYearMean];
    sample(Occupancy::kOccupied, site_count, [&](std::int64_t site) {
      const std::int64_t jm = site / m.sites, j = jm / m.years;
      return dist::BernoulliLogits{bird_year_mean[static_cast<std::size_t>(jm)] *
                                   weather_weight[static_cast<std::size_t>(j)] *
                                   weather[static_cast<std::size_t>(site)]};
    });
    const std::vector<double>& occupied = truth[Occupancy::kOccupied];

    detected.resize(static_cast<std::size_t>(visit_count));
    for (std::int64_t visit = 0; visit < visit_count; ++visit) {
      const std::int64_t site = visit / m.replicates;
      const std::int64_t j = site / (static_cast<std::int64_t>(m.years) * m.sites);
      const double z = occupied[static_cast<std::size_t>(site)];
      const double logit = z * quality_weight[static_cast<std::size_t>(j)] *
                               quality[static_cast<std::size_t>(visit)] +
                           (1.0 - z) * Occupancy::kUnoccupiedLogit;
      ParticleRandom rng = draw(kDetectionPurpose, 0, visit);
      detected[static_cast<std::size_t>(visit)] = dist::BernoulliLogits{logit}.sample(rng);
    }
    d.detected_ = std::move(detected);
    d.quality_ = std::move(quality);
    d.weather_ = std::move(weather);
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Occupancy viewing(Copy copy) const {
    return view(copy(detected_), copy(quality_), copy(weather_));
  }

  /// Detections, [bird][year][site][replicate].
  const std::vector<double>& detected() const { return detected_.host(); }
  /// Quality (1: protocol followed), [bird][year][site][replicate].
  const std::vector<double>& quality() const { return quality_.host(); }
  /// Weather (standardised temperature), [bird][year][site].
  const std::vector<double>& weather() const { return weather_.host(); }

 private:
  OccupancyData() = default;

  Occupancy view(const double* detected, const double* quality, const double* weather) const {
    Occupancy m = model_;
    m.detected = detected;
    m.quality = quality;
    m.weather = weather;
    return m;
  }

  Occupancy model_;
  MirroredArray<double> detected_;
  MirroredArray<double> quality_;
  MirroredArray<double> weather_;
};

}  // namespace myriad::models
