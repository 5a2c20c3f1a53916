#pragma once
// Stacked<Model>: R models of one type (the same model on R data sets) as one model of dimension
// R · D whose density is the product of theirs, log π(x) = Σ_r log π_r(x_r) with x_r the r-th
// block of D coordinates. An ensemble of chains on it samples all R posteriors at once, each
// chain carrying one draw of every one: simulation-based calibration's replications as one batch
// on the device (run/sbc.hpp). The blocks are independent under the product, so each block's
// marginal is its own posterior; the sampler's metric adapts per coordinate, so per block, while
// the step size and trajectory length are the ensemble's, shared by all blocks.
//
// The models live in an array the view points to (host memory for the CPU, device memory for
// CUDA: StackedModels uploads it), so the view stays trivially copyable. Recorded quantities are
// block r's quantities at r · Q + q, named "[r]name".

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

namespace detail {

/// Coordinates offset … offset + D − 1 of an indexable view, as a view of its own.
template <class Vec>
struct BlockView {
  Vec* base;
  int offset;
  MYRIAD_HD decltype(auto) operator[](int i) const { return (*base)[offset + i]; }
};

template <class Model, class = void>
struct stacked_backends_of : std::integral_constant<unsigned, 0u> {};
template <class Model>
struct stacked_backends_of<Model, std::void_t<decltype(Model::stacked_library_backends)>>
    : std::integral_constant<unsigned, Model::stacked_library_backends> {};

}  // namespace detail

template <class Model>
struct Stacked {
  static_assert(std::is_trivially_copyable_v<Model>, "a stacked model must be trivially copyable");
  static_assert(!model_has_initial_point<Model>,
                "Stacked does not forward initial_point: its chains start uniformly");
  using value_type = typename Model::value_type;
  /// The library's CUDA instances of stacked models: the inner model's stacked_library_backends.
  static constexpr unsigned library_backends = detail::stacked_backends_of<Model>::value;

  const Model* models = nullptr;       ///< R models where the chains run (host or device)
  const Model* host_models = nullptr;  ///< the same on the host: quantity names
  int replications = 0;
  int inner_dim = 0;
  int inner_quantities = 0;

  MYRIAD_HD int dim() const { return replications * inner_dim; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S total = S(0);
    for (int r = 0; r < replications; ++r) {
      const detail::BlockView<const Vec> block{&x, r * inner_dim};
      total += models[r].log_density(block);
    }
    return total;
  }

  /// Each block's log density and gradient by the inner model's own means (its gradient, or
  /// forward duals).
  template <class Vec, class Grad>
  MYRIAD_HD auto log_density_gradient(const Vec& x, Grad& g) const {
    using S = std::decay_t<decltype(x[0])>;
    S total = S(0);
    for (int r = 0; r < replications; ++r) {
      const detail::BlockView<const Vec> block{&x, r * inner_dim};
      detail::BlockView<Grad> gradient{&g, r * inner_dim};
      total += log_density_and_gradient(models[r], block, gradient);
    }
    return total;
  }

  MYRIAD_HD int num_quantities() const { return replications * inner_quantities; }

  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    for (int r = 0; r < replications; ++r) {
      const detail::BlockView<const Vec> block{&x, r * inner_dim};
      detail::BlockView<Out> recorded{&out, r * inner_quantities};
      record_quantities(models[r], block, recorded);
    }
  }

  std::string quantity_name(int i) const {
    const int r = i / inner_quantities;
    return "[" + std::to_string(r) + "]" +
           recorded_quantity_names(host_models[r])[static_cast<std::size_t>(i % inner_quantities)];
  }
};

/// Owns R models for Stacked: the host array, and a device copy uploaded on the first
/// device_model() call.
template <class Model>
class StackedModels {
 public:
  /// R ≥ 1 models of one dimension and quantity count (invalid_argument otherwise).
  explicit StackedModels(std::vector<Model> models) : host_(std::move(models)) {
    MYRIAD_EXPECTS(!host_.empty(), "a stacked model needs at least one model");
    for (const Model& m : host_) {
      MYRIAD_EXPECTS(m.dim() == host_.front().dim() &&
                         recorded_quantity_count(m) == recorded_quantity_count(host_.front()),
                     "stacked models must share their dimension and recorded quantities");
    }
  }

  Stacked<Model> host_model() const { return view(host_.data()); }

  /// Throws myriad::unavailable_error in a build without CUDA.
  Stacked<Model> device_model() {
    if (device_.size() == 0) device_ = DeviceArray<Model>(host_);
    return view(device_.data());
  }

  int replications() const { return static_cast<int>(host_.size()); }
  const Model& model(int r) const { return host_[static_cast<std::size_t>(r)]; }

 private:
  Stacked<Model> view(const Model* models) const {
    return Stacked<Model>{models, host_.data(), static_cast<int>(host_.size()), host_.front().dim(),
                          recorded_quantity_count(host_.front())};
  }

  std::vector<Model> host_;
  DeviceArray<Model> device_;
};

}  // namespace myriad
