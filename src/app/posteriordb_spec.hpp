#pragma once
// The shape shared by the posteriordb ports among the built-in models (posteriordb_*.cpp): a
// density model whose data always come from --data (CmdStan's JSON, as posteriordb ships it),
// built in double precision by a function of the StanData that checks every variable, and
// sampled where the run is, the data uploaded once for a GPU.

#include <string>
#include <utility>
#include <vector>

#include "myriad/app/registry.hpp"
#include "myriad/app/stan_data.hpp"
#include "myriad/core/error.hpp"
#include "myriad/run/sample.hpp"

namespace myriad {

/// The built-in model `name`, registered under posteriordb's model name, from
/// `make_data(const StanData&)` → an owner with host_model() and device_model().
template <class MakeData>
ModelSpec posteriordb_spec(std::string name, const std::string& posterior,
                           const std::string& description, std::string variables,
                           MakeData make_data) {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.description = description + " (posteriordb: " + posterior + ")";
  spec.data = DataUse::required;
  spec.data_variables = std::move(variables);
  spec.double_only = true;
  spec.sample = [make_data](const ModelArguments& a, const SampleConfig& config, Precision) {
    auto data = make_data(a.required_data());
    using Model = decltype(data.host_model());
    SampleConfig resolved = config;
    resolved.device = choose_device<Model>(config.device);
    return resolved.device == Device::cuda ? sample(data.device_model(), resolved)
                                           : sample(data.host_model(), resolved);
  };
  // Builds (and so checks) the data before the run starts.
  spec.dim = [make_data](const ModelArguments& a) {
    return make_data(a.required_data()).host_model().dim();
  };
  return spec;
}

/// Every entry of `values` (data variable `name`) lies in [lower, upper], Stan's declared bounds
/// of the variable; throws myriad::invalid_argument naming the file, the variable and the entry.
inline void check_data_bounds(const StanData& data, const std::string& name,
                              const std::vector<double>& values, double lower, double upper) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!(values[i] >= lower && values[i] <= upper))
      throw invalid_argument(data.origin() + ": data variable '" + name + "' has entry " +
                             std::to_string(i + 1) + " = " + data_number_text(values[i]) +
                             ", outside its declared bounds [" + data_number_text(lower) + ", " +
                             data_number_text(upper) + "]");
}

/// The posteriordb ports by family.
std::vector<ModelSpec> posteriordb_regression_specs();   // posteriordb_regressions.cpp
std::vector<ModelSpec> posteriordb_time_series_specs();  // posteriordb_time_series.cpp
std::vector<ModelSpec> posteriordb_latent_specs();       // posteriordb_latent.cpp

}  // namespace myriad
