#pragma once
// LotkaVolterraProblem: the Lotka–Volterra data simulated once at the paper's parameters
// (constrained-hmc.md §15.2), owned on the host and, on first use, on the device, with the
// generators that view it (models/lotka_volterra.hpp, models/lotka_volterra_summaries.hpp).

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/models/lotka_volterra.hpp"
#include "myriad/models/lotka_volterra_summaries.hpp"

namespace myriad::models {

/// Owning host container of Lotka–Volterra data: the series simulated once at the settings'
/// true parameters, its 9 summaries, and an optional device copy of the series, uploaded on
/// the first call to a device_* accessor. Movable, not copyable (it may own device memory).
class LotkaVolterraProblem : public MirroredViews<LotkaVolterraProblem> {
 public:
  /// Default data seed (any seed gives an equally valid data set).
  static constexpr std::uint64_t kDefaultSeed = 20170420;
  /// Purpose tag of the data noise stream.
  static constexpr std::uint32_t kDataPurpose = user_purpose(0);

  /// Simulates the data: u₁ = (log z − m)/s for the settings' true z, u₂ = 2S normals of
  /// RandomStream(seed, 0), iteration 0, tag user + 0; x̄ = LotkaVolterra::generate(u).
  /// Deterministic for a seed.
  static LotkaVolterraProblem make(std::uint64_t seed = kDefaultSeed,
                                   const LotkaVolterraSettings& settings = {}) {
    LotkaVolterraProblem p;
    p.settings_ = settings;
    LotkaVolterraDynamics::make(settings, "lotka_volterra");  // validates before any sizing
    const int K = LotkaVolterraDynamics::kNumParameters, M = 2 * settings.num_steps;
    p.true_inputs_.assign(static_cast<std::size_t>(K + M), 0.0);
    for (int i = 0; i < K; ++i)
      p.true_inputs_[i] =
          (std::log(settings.true_parameters[i]) - settings.prior_mean) / settings.prior_scale;
    DenseVector<double> noise{p.true_inputs_.data() + K, M};
    RandomStream(seed, 0).fill_normal<double>(0, static_cast<Purpose>(kDataPurpose), noise, M);
    std::vector<double> series(static_cast<std::size_t>(M), 0.0);
    // Views, not std::vector, in MYRIAD_HD calls (host-only operator[] warns under nvcc).
    const DenseVector<const double> u{p.true_inputs_.data(), K + M};
    DenseVector<double> x{series.data(), M};
    LotkaVolterra::make(series.data(), settings).generate(u, x);
    for (int m = 0; m < M; ++m)
      MYRIAD_EXPECTS(std::isfinite(series[m]), "lotka_volterra: the simulated data are not ",
                     "finite (entry ", m, ") for these settings");
    DenseVector<double> summaries{p.summaries_.data(), LotkaVolterraSummaries::kNumSummaries};
    LotkaVolterraSummaries::summaries_of(DenseVector<const double>{series.data(), M},
                                         settings.num_steps, summaries);
    p.series_ = std::move(series);
    return p;
  }

  const LotkaVolterraSettings& settings() const { return settings_; }
  /// x̄ = (r̄₁, f̄₁, …, r̄_S, f̄_S).
  const std::vector<double>& observations() const { return series_.host(); }
  /// The 9 summaries of x̄ (definitions at LotkaVolterraSummaries).
  const std::array<double, LotkaVolterraSummaries::kNumSummaries>& summaries() const {
    return summaries_;
  }
  /// The inputs u the data were generated from.
  const std::vector<double>& true_inputs() const { return true_inputs_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  LotkaVolterra viewing(Copy copy) const {
    return LotkaVolterra::make(copy(series_), settings_);
  }
  /// The summary generator viewing the host copy; valid while this object lives.
  LotkaVolterraSummaries host_summaries_model() const {
    return LotkaVolterraSummaries::make(series_.host_data(), summaries_, settings_);
  }
  /// The summary generator viewing the device copy (uploaded on first use).
  LotkaVolterraSummaries device_summaries_model() {
    return LotkaVolterraSummaries::make(series_.device_data(), summaries_, settings_);
  }

 private:
  LotkaVolterraProblem() = default;

  LotkaVolterraSettings settings_;
  MirroredArray<double> series_;
  std::array<double, LotkaVolterraSummaries::kNumSummaries> summaries_{};
  std::vector<double> true_inputs_;
};

}  // namespace myriad::models
