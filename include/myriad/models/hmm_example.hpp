#pragma once
// `hmm_example`: a hidden Markov model with K states and unit-variance normal emissions,
// marginalised over the state path by the forward algorithm; posteriordb's hmm_example-hmm_example
// (Stan's model `hmm_example`, "simple hmm example (1 output; 2 states)"; data: N = 100
// observations, K = 2). With z_t the hidden state and y_t the observation,
//
//   P(z_t = k | z_{t−1} = j) = θ_{jk}   (row j the simplex theta<j>),   y_t | z_t = k ~ N(μ_k, 1),
//   μ_1 ~ N(3, 1),  μ_2 ~ N(10, 1)   (target += normal_lpdf: constants included),
//
// and, as Stan's model block writes it (no initial distribution: γ_1 is the first emission),
//
//   γ_1(k) = log N(y_1; μ_k, 1),
//   γ_t(k) = log Σ_j exp(γ_{t−1}(j) + log θ_{jk}) + log N(y_t; μ_k, 1),   t = 2, …, N,
//   log p(y | θ, μ) = log Σ_k exp γ_N(k)
//
// (Rabiner 1989, "A tutorial on hidden Markov models", Proc. IEEE 77(2), §III.A, in logs). Each
// log-sum-exp factors out its largest term, chosen on values (so the duals differentiate the
// same expression), and the N ½ log 2π of the emissions is added once.
//
// Parameterisation: Stan's, in its declaration order: theta1, theta2 (simplex[K], Stan's
// stick-breaking transform on K − 1 values each: simplex_transform), then mu
// (positive_ordered[K]: μ_1 = e^{u_1}, μ_k = μ_{k−1} + e^{u_k}; positive_ordered_transform), each
// with its log-Jacobian (model/transforms.hpp). x = (theta1's K − 1, theta2's K − 1, …, mu's K):
// dim K². At K = 2 that is (a, b, c, d) with theta1 = (σ(a), 1 − σ(a)), theta2 = (σ(b), 1 − σ(b)),
// mu = (e^c, e^c + e^d).
//
// General K. Stan's program declares theta1 and theta2 only and sets theta[1], theta[2] from them,
// so it runs for K = 2 alone (at K > 2, theta[3] is undefined and Stan rejects every draw; at
// K < 2 mu[2] is out of range). Here K may be 2 … kMaxStates, each state j with its own transition
// simplex theta<j> (the natural reading of `theta[j] = theta<j>`), the priors on μ_1, μ_2 as Stan's
// and none on μ_3 … μ_K, as Stan's text has none. Beware that for K > 2 that flat prior makes the
// posterior improper: as μ_K → ∞ state K emits nothing observable and the likelihood tends to that
// of the paths avoiding it, a positive constant. K = 2 is posteriordb's model exactly.
//
// Recorded quantities: the parameters on their own scale, named and ordered as reference.csv
// (theta1[1], theta1[2], theta2[1], theta2[2], mu[1], mu[2] at K = 2). Not recorded: the
// transformed parameter theta (a copy of theta1, theta2) and the generated quantities z_star
// (the Viterbi path) and log_p_z_star, which posteriordb's reference does not list.
//
// Per-chain scratch: log θ (kMaxStates²), μ, γ_{t−1}, γ_t and the log-sum-exp terms (kMaxStates
// each): 32 scalars at kMaxStates = 4, 1280 bytes for DualVector<double, 4> (K = 2, dim 4: one
// vector-mode pass of 4 tangents, model/autodiff.hpp), 2304 for DualVector<double, 8> (K = 4,
// dim 16), 256 for double (ptxas, sm_90: stack frames of 1328, 2384 and 256 bytes). Raising
// kMaxStates grows it as kMaxStates² + 4 kMaxStates.
//
// HmmExample<T> is the trivially copyable view the chains evaluate; HmmExampleData<T> owns the
// observations on the host and, on demand, one copy on the device. A library model (C++ API,
// tests' posteriordb ports), not a CLI built-in; the library holds its CUDA HMC instance for
// double. No gradient of its own: forward-mode duals differentiate log_density.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/transforms.hpp"

namespace myriad::models {

template <class T>
struct HmmExample {
  using value_type = T;
  /// The most hidden states: local arrays are sized by it (the header comment's scratch).
  static constexpr int kMaxStates = 4;
  static constexpr double kMu1Mean = 3.0;   ///< μ_1 ~ N(3, 1)
  static constexpr double kMu2Mean = 10.0;  ///< μ_2 ~ N(10, 1)

  const T* y = nullptr;  ///< y_1 … y_N (0-based here: y[t − 1] is Stan's y[t])
  int n = 0;             ///< N, the observations
  int states = 2;        ///< K, the hidden states (2 … kMaxStates)

  /// K simplexes of K − 1 values and K ordered means.
  MYRIAD_HD int dim() const { return states * states; }

  /// The constrained parameters of x: theta[j][k] (row j the simplex theta<j+1>) and mu[k],
  /// adding the transforms' log-Jacobian to log_jacobian.
  template <class Vec, class S>
  MYRIAD_HD void constrain(const Vec& x, S (*theta)[kMaxStates], S* mu, S& log_jacobian) const {
    for (int j = 0; j < states; ++j)
      simplex_transform(x, j * (states - 1), states, theta[j], log_jacobian);
    positive_ordered_transform(x, states * (states - 1), states, mu, log_jacobian);
  }

  /// log p(x) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    const int K = states;
    S log_theta[kMaxStates][kMaxStates];  // θ, then log θ in place
    S mu[kMaxStates] = {};                // (all K ≥ 2 set by constrain)
    S lp = S(0);
    constrain(x, log_theta, mu, lp);
    for (int j = 0; j < K; ++j)
      for (int k = 0; k < K; ++k) log_theta[j][k] = myriad::log(log_theta[j][k]);
    lp += myriad::normal_log_density(mu[0], S(kMu1Mean), S(1)) +
          myriad::normal_log_density(mu[1], S(kMu2Mean), S(1));

    // Emissions without their ½ log 2π, added once at the end.
    S gamma[kMaxStates] = {}, next[kMaxStates], terms[kMaxStates];
    for (int k = 0; k < K; ++k) gamma[k] = S(-0.5) * square(S(y[0]) - mu[k]);
    for (int t = 1; t < n; ++t) {
      for (int k = 0; k < K; ++k) {
        for (int j = 0; j < K; ++j) terms[j] = gamma[j] + log_theta[j][k];
        next[k] = log_sum_exp(terms, K) + S(-0.5) * square(S(y[t]) - mu[k]);
      }
      for (int k = 0; k < K; ++k) gamma[k] = next[k];
    }
    return lp + log_sum_exp(gamma, K) - S(T(n) * T(kLogSqrtTwoPi));
  }

  /// Recorded quantities: theta1[1 … K], …, thetaK[1 … K], mu[1 … K] (reference.csv's order).
  MYRIAD_HD int num_quantities() const { return states * states + states; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    T theta[kMaxStates][kMaxStates];
    T mu[kMaxStates];
    T unused = T(0);
    constrain(x, theta, mu, unused);
    for (int j = 0; j < states; ++j)
      for (int k = 0; k < states; ++k) out[j * states + k] = theta[j][k];
    for (int k = 0; k < states; ++k) out[states * states + k] = mu[k];
  }
  std::string quantity_name(int i) const {
    if (i >= states * states) return "mu[" + std::to_string(i - states * states + 1) + "]";
    return "theta" + std::to_string(i / states + 1) + "[" + std::to_string(i % states + 1) + "]";
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;

 private:
  /// log Σ_i e^{a_i} = m + log Σ_i e^{a_i − m}, m the largest a_i by value (so no term
  /// overflows and one is exactly 1).
  template <class S>
  MYRIAD_HD static S log_sum_exp(const S* a, int count) {
    int top = 0;
    for (int i = 1; i < count; ++i)
      if (value_of(a[i]) > value_of(a[top])) top = i;
    S sum = S(0);
    for (int i = 0; i < count; ++i) sum += i == top ? S(1) : myriad::exp(a[i] - a[top]);
    return a[top] + myriad::log(sum);
  }
};

/// Owning host data of an hmm_example posterior, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class HmmExampleData : public MirroredViews<HmmExampleData<T>> {
 public:
  /// Stan's data block: N, K and y (N observations). N must be >= 1 (Stan reads y[1]), K in
  /// 2 … kMaxStates (Stan's program needs K = 2; the header comment's "General K"), every y
  /// finite. Messages index y from 1, as Stan does. Throws myriad::invalid_argument naming the
  /// first bad field.
  static HmmExampleData from_arrays(int N, int K, const std::vector<double>& y) {
    constexpr int kMax = HmmExample<T>::kMaxStates;
    MYRIAD_EXPECTS(N >= 1, "hmm_example: N must be >= 1 (Stan reads y[1]), got ", N);
    MYRIAD_EXPECTS(K >= 2 && K <= kMax, "hmm_example: K must be in 2..", kMax, ", got ", K);
    MYRIAD_EXPECTS(y.size() == static_cast<std::size_t>(N), "hmm_example: y has ", y.size(),
                   " entries, expected N = ", N);
    std::vector<T> values(y.size());
    for (std::size_t t = 0; t < y.size(); ++t) {
      MYRIAD_EXPECTS(std::isfinite(y[t]), "hmm_example: y[", t + 1, "] is not finite, got ", y[t]);
      values[t] = T(y[t]);
    }
    HmmExampleData data;
    data.n_ = N;
    data.states_ = K;
    data.y_ = std::move(values);
    return data;
  }

  int N() const { return n_; }
  int K() const { return states_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  HmmExample<T> viewing(Copy copy) const {
    return HmmExample<T>{copy(y_), n_, states_};
  }

 private:
  HmmExampleData() = default;

  int n_ = 0;
  int states_ = 2;
  MirroredArray<T> y_;
};

}  // namespace myriad::models
