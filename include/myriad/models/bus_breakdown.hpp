#pragma once
// bus_breakdown: New York City school-bus delays, the first model of the MP IS paper (Bowyer,
// Heap & Aitchison 2024, App. C.1) in the version its reference code runs (mpis.md §9.2 [code],
// §11: Binomial, not NegativeBinomial; σ_α per year; second Normal argument a scale).
//
// Plates Years (3) → Boroughs (3) → Buses (30 training buses per year and borough):
//
//   mu_beta, sigma_beta ~ N(0, 1)
//   company_weight ~ N(0, I_50),  journey_weight ~ N(0, I_5)  (event vectors: one index each)
//   log_sigma_phi_psi ~ N(0, 1)                               (not used by P: see below)
//   beta_y ~ N(mu_beta, exp(sigma_beta)²),  sigma_alpha_y ~ N(0, 1)            per year
//   alpha_yb ~ N(beta_y, exp(sigma_alpha_y)²)                                 per (year, borough)
//   delay_ybi ~ Binomial(131, logits = alpha_yb + company_weight · onehot(c_ybi)
//                                             + journey_weight · onehot(j_ybi))
//
// The one-hot covariates are held as indices: company_weight · onehot(c) = company_weight[c].
// Proposal (paper Eq. 67): every latent N(0, 1) elementwise, factorised.
//
// log_sigma_phi_psi: the reference code's fifth global latent. In earlier versions of that
// code it was the log scale of the company and journey weights; in the version the paper's
// results come from, the weights are N(0, 1) and nothing depends on it, yet it is still sampled
// and still counts as one of the n = 20 index variables (mpis.md §9.2). It is kept so that n and
// the estimator match the reference; with prior = proposal = N(0, 1) its log-factor is −log K
// for every particle, which sums to log 1 = 0 over its K particles, so log P̂ is unchanged.
//
// n = 5 + 2·3 + 9 = 20 index variables; the largest elimination clique is 5 (alpha_yb with
// beta_y, sigma_alpha_y and the two weight vectors); 270 observations.

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

/// The plated model: views of the delays and covariates (host or device memory), laid out
/// [year][borough][bus].
struct BusBreakdown {
  /// Latent ids, in the order structure() declares them.
  enum Latent : int {
    kMuBeta = 0,
    kSigmaBeta,
    kCompanyWeight,
    kJourneyWeight,
    kLogSigmaPhiPsi,
    kBeta,
    kSigmaAlpha,
    kAlpha,
  };
  enum Observed : int { kDelay = 0 };
  /// Binomial total: delays above 130 minutes were discarded from the data (mpis.md §9.2).
  static constexpr double kTrials = 131.0;

  const double* delay = nullptr;      ///< minutes, integers in [0, 131]
  const int* company = nullptr;       ///< company index in [0, companies)
  const int* journey_type = nullptr;  ///< journey-type index in [0, journey_types)
  int years = 3;
  int boroughs = 3;
  int buses = 30;
  int companies = 50;
  int journey_types = 5;

  PlatedStructure structure() const {
    PlatedStructure s;
    const int year = s.plate("years", years);
    const int borough = s.plate("boroughs", boroughs, year);
    const int bus = s.plate("buses", buses, borough);
    const int mu_beta = s.latent("mu_beta", kRootPlate);
    const int sigma_beta = s.latent("sigma_beta", kRootPlate);
    const int company_weight = s.latent("company_weight", kRootPlate, {}, companies);
    const int journey_weight = s.latent("journey_weight", kRootPlate, {}, journey_types);
    s.latent("log_sigma_phi_psi", kRootPlate);
    const int beta = s.latent("beta", year, {mu_beta, sigma_beta});
    const int sigma_alpha = s.latent("sigma_alpha", year);
    const int alpha = s.latent("alpha", borough, {beta, sigma_alpha});
    s.observed("delay", bus, {alpha, company_weight, journey_weight});
    return s;
  }

  /// Values per instance of a latent: the weight vectors are event vectors.
  MYRIAD_HD int event_size(int latent) const {
    return latent == kCompanyWeight ? companies : latent == kJourneyWeight ? journey_types : 1;
  }

  MYRIAD_HD double log_prior(int latent, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    switch (latent) {
      case kBeta:  // parents: mu_beta, sigma_beta
        return dist::Normal{parents[0][0], myriad::exp(parents[1][0])}.log_density(z[0]);
      case kAlpha:  // parents: beta, sigma_alpha
        return dist::Normal{parents[0][0], myriad::exp(parents[1][0])}.log_density(z[0]);
      default:
        return dist::standard_normal_log_density(z, event_size(latent));
    }
  }

  MYRIAD_HD double log_proposal(int latent, const double* z, const ParentValues&,
                                const PlateIndex&) const {
    return dist::standard_normal_log_density(z, event_size(latent));
  }

  MYRIAD_HD void sample_proposal(int latent, double* z, const ParentValues&, const PlateIndex&,
                                 ParticleRandom& rng) const {
    for (int e = 0; e < event_size(latent); ++e) z[e] = rng.normal();
  }

  /// log Binomial(delay_ybi; 131, σ(alpha_yb + company_weight[c] + journey_weight[j])); parents
  /// alpha, company_weight, journey_weight; `at` = (year, borough, bus).
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    const std::int64_t i = (at[0] * boroughs + at[1]) * buses + at[2];
    const double logit = parents[0][0] + parents[1][company[i]] + parents[2][journey_type[i]];
    return dist::BinomialLogits{kTrials, logit}.log_density(delay[i]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning host data of bus_breakdown, with an optional device copy uploaded once, and the true
/// latent values synthetic data were drawn from. Movable, not copyable.
class BusBreakdownData : public SyntheticPlatedData<BusBreakdownData> {
 public:
  /// Philox purpose tags of the synthetic data. Each scalar or event vector is one sequential
  /// ParticleRandom draw keyed by (tag, group, element); a draw advances the tag by one per
  /// Philox block (a Binomial(131) delay takes 66), so the tags are 256 apart.
  static constexpr std::uint32_t kLatentPurpose = user_purpose(0x1000);
  static constexpr std::uint32_t kCovariatePurpose = user_purpose(0x1100);
  static constexpr std::uint32_t kDelayPurpose = user_purpose(0x1200);

  /// Synthetic data at the paper's sizes (3 years × 3 boroughs × 30 buses, 50 companies, 5
  /// journey types). Every latent is drawn from its prior (the true values; latent g's instance
  /// i from the draw (kLatentPurpose, g, i)). Covariates: company c_ybi uniform on {0..49}
  /// (draw (kCovariatePurpose, 0, bus)), journey type j_ybi uniform on {0..4} (draw
  /// (kCovariatePurpose, 1, bus)), bus = (year·3 + borough)·30 + i. Delays are Binomial(131)
  /// from the model, as sums of 131 Bernoulli trials (draw (kDelayPurpose, 0, bus)). All draws
  /// use RandomStream(data_seed, 0), so the data are the same on every machine (up to last-ulp
  /// differences between libm implementations of log, sin, cos and exp).
  static BusBreakdownData synthetic(std::uint64_t data_seed) {
    BusBreakdownData d;
    std::vector<double> delay;
    std::vector<int> company, journey_type;
    const BusBreakdown& m = d.model_;
    const KeyedDraws draw = keyed_draws(data_seed);
    // The latents, parents before children, each instance from its prior given its parents.
    const PlatedStructure s = m.structure();
    d.true_latents_.resize(static_cast<std::size_t>(s.latent_count()));
    for (int g = 0; g < s.latent_count(); ++g) {
      const std::int64_t instances = s.instances(s.latent_decl(g).plate);
      std::vector<double>& values = d.true_latents_[static_cast<std::size_t>(g)];
      values.resize(static_cast<std::size_t>(instances * m.event_size(g)));
      for (std::int64_t i = 0; i < instances; ++i) {
        ParticleRandom rng = draw(kLatentPurpose, static_cast<std::uint32_t>(g), i);
        double* z = values.data() + i * m.event_size(g);
        double loc = 0.0, log_scale = 0.0;
        if (g == BusBreakdown::kBeta) {
          loc = d.true_latents_[BusBreakdown::kMuBeta][0];
          log_scale = d.true_latents_[BusBreakdown::kSigmaBeta][0];
        } else if (g == BusBreakdown::kAlpha) {  // instance i = year·boroughs + borough
          loc = d.true_latents_[BusBreakdown::kBeta][static_cast<std::size_t>(i / m.boroughs)];
          log_scale =
              d.true_latents_[BusBreakdown::kSigmaAlpha][static_cast<std::size_t>(i / m.boroughs)];
        }
        for (int e = 0; e < m.event_size(g); ++e)
          z[e] = dist::Normal{loc, std::exp(log_scale)}.sample(rng);
      }
    }
    const std::int64_t n = static_cast<std::int64_t>(m.years) * m.boroughs * m.buses;
    delay.resize(static_cast<std::size_t>(n));
    company.resize(static_cast<std::size_t>(n));
    journey_type.resize(static_cast<std::size_t>(n));
    for (std::int64_t bus = 0; bus < n; ++bus) {
      ParticleRandom company_rng = draw(kCovariatePurpose, 0, bus);
      ParticleRandom journey_rng = draw(kCovariatePurpose, 1, bus);
      const int c = uniform_index(company_rng, m.companies);
      const int j = uniform_index(journey_rng, m.journey_types);
      company[static_cast<std::size_t>(bus)] = c;
      journey_type[static_cast<std::size_t>(bus)] = j;
      const double logit =
          d.true_latents_[BusBreakdown::kAlpha][static_cast<std::size_t>(bus / m.buses)] +
          d.true_latents_[BusBreakdown::kCompanyWeight][static_cast<std::size_t>(c)] +
          d.true_latents_[BusBreakdown::kJourneyWeight][static_cast<std::size_t>(j)];
      ParticleRandom delay_rng = draw(kDelayPurpose, 0, bus);
      delay[static_cast<std::size_t>(bus)] =
          dist::BinomialLogits{BusBreakdown::kTrials, logit}.sample(delay_rng);
    }
    d.delay_ = std::move(delay);
    d.company_ = std::move(company);
    d.journey_type_ = std::move(journey_type);
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  BusBreakdown viewing(Copy copy) const {
    return view(copy(delay_), copy(company_), copy(journey_type_));
  }

  /// Delays in minutes, [year][borough][bus].
  const std::vector<double>& delay() const { return delay_.host(); }
  /// Company index of each bus, [year][borough][bus].
  const std::vector<int>& company() const { return company_.host(); }
  /// Journey-type index of each bus, [year][borough][bus].
  const std::vector<int>& journey_type() const { return journey_type_.host(); }

 private:
  BusBreakdownData() = default;

  /// Uniform on {0, …, n − 1}.
  static int uniform_index(ParticleRandom& rng, int n) {
    const int i = static_cast<int>(rng.uniform() * n);
    return i < n ? i : n - 1;
  }

  BusBreakdown view(const double* delay, const int* company, const int* journey_type) const {
    BusBreakdown m = model_;
    m.delay = delay;
    m.company = company;
    m.journey_type = journey_type;
    return m;
  }

  BusBreakdown model_;
  MirroredArray<double> delay_;
  MirroredArray<int> company_;
  MirroredArray<int> journey_type_;
};

}  // namespace myriad::models
