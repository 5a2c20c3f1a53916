#pragma once
// Step-size adaptation by Nesterov dual averaging (Hoffman & Gelman 2014, "The No-U-Turn
// Sampler", Algorithm 5, eq. 6), with Stan's constants. myriad adapts one step size for the
// whole ensemble on the acceptance probability pooled over chains, which is far less noisy than
// a single chain's.

#include <cmath>

namespace myriad {

class DualAveraging {
 public:
  struct Options {
    double target_accept = 0.8;  ///< δ
    double gamma = 0.05;         ///< γ: regularisation scale
    double t0 = 10.0;            ///< t₀: stabilises the early iterations
    double kappa = 0.75;         ///< κ: decay of the averaging weights
  };

  DualAveraging(double initial_step_size, Options options)
      : options_(options) {
    restart(initial_step_size);
  }

  /// Starts a new adaptation window around step size ε: μ = log(10ε).
  void restart(double step_size) {
    mu_ = std::log(10.0 * step_size);
    iteration_ = 0;
    error_sum_ = 0;
    log_step_ = std::log(step_size);
    log_step_average_ = 0;
  }

  /// Feeds the pooled acceptance probability of the last iteration; returns the next ε.
  double update(double accept_prob) {
    ++iteration_;
    const double t = static_cast<double>(iteration_);
    const double eta = 1.0 / (t + options_.t0);
    // H̄_t = (1 − η) H̄_{t−1} + η (δ − α_t)
    error_sum_ = (1.0 - eta) * error_sum_ + eta * (options_.target_accept - accept_prob);
    // log ε_t = μ − √t/γ · H̄_t
    log_step_ = mu_ - std::sqrt(t) / options_.gamma * error_sum_;
    // log ε̄_t = t^−κ log ε_t + (1 − t^−κ) log ε̄_{t−1}
    const double weight = std::pow(t, -options_.kappa);
    log_step_average_ = weight * log_step_ + (1.0 - weight) * log_step_average_;
    return std::exp(log_step_);
  }

  /// The current iterate ε_t (used during adaptation).
  double step_size() const { return std::exp(log_step_); }
  /// The averaged ε̄_t (used after adaptation).
  double final_step_size() const { return std::exp(log_step_average_); }

  /// Reads or writes the whole state, for a run's checkpoint (run/checkpoint: any archive with
  /// cereal's call syntax).
  template <class Archive>
  void serialize(Archive& archive) {
    archive(options_.target_accept, options_.gamma, options_.t0, options_.kappa, mu_, iteration_,
            error_sum_, log_step_, log_step_average_);
  }

 private:
  Options options_;
  double mu_ = 0;
  long iteration_ = 0;
  double error_sum_ = 0;
  double log_step_ = 0;
  double log_step_average_ = 0;
};

}  // namespace myriad
