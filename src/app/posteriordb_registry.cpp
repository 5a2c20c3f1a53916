// The posteriordb ports among the built-in models, in the order `myriad models` lists them.

#include "posteriordb_spec.hpp"

namespace myriad {

std::vector<ModelSpec> posteriordb_model_specs() {
  std::vector<ModelSpec> all;
  for (auto family :
       {posteriordb_regression_specs, posteriordb_time_series_specs, posteriordb_latent_specs})
    for (auto& spec : family()) all.push_back(std::move(spec));
  return all;
}

}  // namespace myriad
