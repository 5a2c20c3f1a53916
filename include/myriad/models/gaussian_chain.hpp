#pragma once
// gaussian_chain: a Gaussian random walk observed with noise, the timeseries plate of MP IS
// (mpis.md §3.6), exact by Kalman filtering (log p(x)) and Rauch–Tung–Striebel smoothing (the
// posterior of every z_t).
//
//   z_0 ~ N(0, s₀²);   z_t | z_{t−1} ~ N(ρ z_{t−1}, q²);   x_t | z_t ~ N(z_t, r²),  t < T.
//
// Proposal: by default the transition itself given z_{t−1}'s particles (the parent mixture over
// the previous step, as the reference code proposes timeseries latents, §3.6); or, with
// mixture = false, each z_t independently from its prior marginal N(0, v_t), v_t = ρ²v_{t−1} + q².

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/distributions.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::models {

/// The plated model: a view of the observations x[t] (host or device memory).
struct GaussianChain {
  const double* x = nullptr;
  const double* prior_sd = nullptr;  ///< √v_t, the independent proposal's scales
  int steps = 1;
  double rho = 1.0;
  double process_sd = 1.0;  ///< q
  double obs_sd = 1.0;      ///< r
  double init_sd = 1.0;     ///< s₀
  bool mixture = true;

  PlatedStructure structure() const {
    PlatedStructure s;
    const int t = s.timeseries("time", steps);
    const int z = s.latent("z", t, {kPreviousStep}, 1,
                           mixture ? std::vector<int>{kPreviousStep} : std::vector<int>{});
    s.observed("x", t, {z});
    return s;
  }

  /// The transition from the previous step's value, or the initial distribution at t = 0.
  MYRIAD_HD dist::Normal transition(const double* previous) const {
    return previous ? dist::Normal{rho * previous[0], process_sd} : dist::Normal{0.0, init_sd};
  }
  MYRIAD_HD double log_prior(int, const double* z, const ParentValues& parents,
                             const PlateIndex&) const {
    return transition(parents[0]).log_density(z[0]);
  }
  MYRIAD_HD dist::Normal proposal(const ParentValues& qa, const PlateIndex& at) const {
    return mixture ? transition(qa[0]) : dist::Normal{0.0, prior_sd[at[0]]};
  }
  MYRIAD_HD double log_proposal(int, const double* z, const ParentValues& qa,
                                const PlateIndex& at) const {
    return proposal(qa, at).log_density(z[0]);
  }
  MYRIAD_HD void sample_proposal(int, double* z, const ParentValues& qa, const PlateIndex& at,
                                 ParticleRandom& rng) const {
    z[0] = proposal(qa, at).sample(rng);
  }
  MYRIAD_HD double log_likelihood(int, const ParentValues& parents, const PlateIndex& at) const {
    return dist::Normal{parents[0][0], obs_sd}.log_density(x[at[0]]);
  }

  /// CUDA backends the library instantiates: model/library_instances.hpp.
  static constexpr unsigned library_backends = library_backend::mpis;
};

/// Owning data of gaussian_chain with the exact answers.
class GaussianChainData : public MirroredViews<GaussianChainData> {
 public:
  static constexpr std::uint32_t kDataPurpose = user_purpose(71);

  /// A path and its observations from the model: RandomStream(seed, 0), tag user+71, normal 2t
  /// the process noise of z_t and normal 2t + 1 the observation noise of x_t.
  static GaussianChainData synthetic(int steps, double rho, double process_sd, double obs_sd,
                                     double init_sd, bool mixture, std::uint64_t seed) {
    MYRIAD_EXPECTS(steps >= 1, "gaussian_chain: steps must be >= 1, got ", steps);
    MYRIAD_EXPECTS(process_sd > 0 && obs_sd > 0 && init_sd > 0,
                   "gaussian_chain: process_sd, obs_sd and init_sd must be positive");
    MYRIAD_EXPECTS(std::isfinite(rho), "gaussian_chain: rho must be finite");
    GaussianChainData d;
    d.model_ = GaussianChain{nullptr, nullptr, steps, rho, process_sd, obs_sd, init_sd, mixture};
    const RandomStream stream(seed, 0);
    const auto normal = [&](std::uint32_t i) {
      return stream.normal<double>(0, static_cast<Purpose>(kDataPurpose), i);
    };
    double z = 0, v = 0;
    std::vector<double> x, prior_sd;
    for (int t = 0; t < steps; ++t) {
      const std::uint32_t i = 2u * static_cast<std::uint32_t>(t);
      z = t == 0 ? init_sd * normal(i) : rho * z + process_sd * normal(i);
      v = t == 0 ? init_sd * init_sd : rho * rho * v + process_sd * process_sd;
      d.true_z_.push_back(z);
      x.push_back(z + obs_sd * normal(i + 1));
      prior_sd.push_back(std::sqrt(v));
    }
    d.x_ = std::move(x);
    d.prior_sd_ = std::move(prior_sd);
    d.solve();
    return d;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  GaussianChain viewing(Copy copy) const {
    return view(copy(x_), copy(prior_sd_));
  }

  const std::vector<double>& x() const { return x_.host(); }
  const std::vector<double>& true_z() const { return true_z_; }
  /// log p(x) by the Kalman filter's prediction-error decomposition.
  double exact_log_marginal() const { return log_marginal_; }
  /// Smoothed mean and sd of every z_t.
  std::vector<ExactMoment> exact_posterior() const {
    std::vector<ExactMoment> out;
    for (int t = 0; t < model_.steps; ++t)
      out.push_back({"z[" + std::to_string(t) + "]", smooth_mean_[t], std::sqrt(smooth_var_[t])});
    return out;
  }

 private:
  void solve() {
    const int steps = model_.steps;
    const double rho = model_.rho, q2 = model_.process_sd * model_.process_sd,
                 r2 = model_.obs_sd * model_.obs_sd;
    std::vector<double> pred_mean(steps), pred_var(steps), filt_mean(steps), filt_var(steps);
    double mean = 0, var = model_.init_sd * model_.init_sd;
    log_marginal_ = 0;
    for (int t = 0; t < steps; ++t) {
      pred_mean[t] = mean;
      pred_var[t] = var;
      const double innovation_var = var + r2, innovation = x_[t] - mean;
      log_marginal_ += -0.5 * std::log(2.0 * M_PI * innovation_var) -
                       0.5 * innovation * innovation / innovation_var;
      const double gain = var / innovation_var;
      filt_mean[t] = mean + gain * innovation;
      filt_var[t] = (1.0 - gain) * var;
      mean = rho * filt_mean[t];
      var = rho * rho * filt_var[t] + q2;
    }
    smooth_mean_ = filt_mean;
    smooth_var_ = filt_var;
    for (int t = steps - 2; t >= 0; --t) {
      const double c = filt_var[t] * rho / pred_var[t + 1];
      smooth_mean_[t] = filt_mean[t] + c * (smooth_mean_[t + 1] - pred_mean[t + 1]);
      smooth_var_[t] = filt_var[t] + c * c * (smooth_var_[t + 1] - pred_var[t + 1]);
    }
  }

  GaussianChain view(const double* x, const double* prior_sd) const {
    GaussianChain m = model_;
    m.x = x;
    m.prior_sd = prior_sd;
    return m;
  }

  GaussianChain model_;
  MirroredArray<double> x_, prior_sd_;
  std::vector<double> true_z_;
  double log_marginal_ = 0;
  std::vector<double> smooth_mean_, smooth_var_;
};

}  // namespace myriad::models
