#pragma once
// Trajectory-length adaptation across an ensemble (ChEES-HMC: Hoffman, Radul & Sountsov,
// AISTATS 2021, Algorithm 1; SNAPER: Sountsov & Hoffman 2022). Every warm-up iteration the
// chains share one maximum trajectory length T; each iteration's trajectory is a fraction u of it
// (the quasi-random jitter of mcmc/hmc.hpp), and the criterion's gradient with respect to the
// actual length t = u·T, summed over chains (mcmc/trajectory_criterion.hpp), becomes the
// gradient with respect to log T by the chain rule: ∂C/∂log T = t · ∂C/∂t.
//
// The criterion's units are those of x⁴ per unit time, which change by orders of magnitude while
// the ensemble contracts from dispersed starts; its gradient is therefore taken of log C:
//   ∂log C/∂log T = t · (Σ_c α_c ∂C_c/∂t) / (Σ_c α_c C_c),
// scale-free, about 2 while trajectories are far too short (C ∝ t² for small t) and 0 at the
// optimum. log T climbs it by Adam without momentum (β₁ = 0, β₂ = 0.95, TFP's choice: the step is
// the gradient over the root of its running mean square) at learning rate 0.05, each step clipped
// to ±0.35 as in TFP and BlackJAX. TFP's rate of 0.025 left T growing at the end of a 200-iteration
// warm-up on `logistic` (bench/results/trajectory-adaptation-cpu.md). T is capped at
// max_steps · ε for the current step size ε; below ε the iteration takes one step. After
// warm-up the length is the mean of log T since the last restart_average(): the run restarts
// the average when the metric changes, since the metric rescales the trajectory the criterion
// sees.

#include <algorithm>
#include <cmath>

namespace myriad {

class TrajectoryLengthAdaptation {
 public:
  struct Options {
    double learning_rate = 0.05;
    double beta2 = 0.95;           ///< decay of the running mean square of the gradient
    double max_log_update = 0.35;  ///< largest change of log T in one iteration
  };

  TrajectoryLengthAdaptation(double initial_length, Options options)
      : options_(options), log_length_(std::log(initial_length)) {
    restart_average();
  }

  /// One step on the gradient of log C with respect to log T (non-finite gradients are skipped),
  /// then T clipped to at most max_length. Returns the new T.
  double update(double log_gradient, double max_length) {
    if (std::isfinite(log_gradient)) {
      ++steps_;
      mean_square_ =
          options_.beta2 * mean_square_ + (1 - options_.beta2) * log_gradient * log_gradient;
      const double corrected = mean_square_ / (1 - std::pow(options_.beta2, double(steps_)));
      const double step = options_.learning_rate * log_gradient / (std::sqrt(corrected) + 1e-300);
      log_length_ += std::clamp(step, -options_.max_log_update, options_.max_log_update);
    }
    log_length_ = std::min(log_length_, std::log(max_length));
    log_sum_ += log_length_;
    ++averaged_;
    return length();
  }

  /// The current T (used during warm-up).
  double length() const { return std::exp(log_length_); }
  /// exp of the mean of log T since the last restart_average() (used after warm-up); the current
  /// T when no update has happened since.
  double final_length() const {
    return averaged_ > 0 ? std::exp(log_sum_ / double(averaged_)) : length();
  }
  void restart_average() {
    log_sum_ = 0;
    averaged_ = 0;
  }

  /// Reads or writes the whole state, for a run's checkpoint.
  template <class Archive>
  void serialize(Archive& archive) {
    archive(options_.learning_rate, options_.beta2, options_.max_log_update, log_length_,
            mean_square_, steps_, log_sum_, averaged_);
  }

 private:
  Options options_;
  double log_length_;
  double mean_square_ = 0;
  long steps_ = 0;
  double log_sum_ = 0;
  long averaged_ = 0;
};

}  // namespace myriad
