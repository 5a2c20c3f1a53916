#pragma once
// How a built-in model offers the auxiliary-variable samplers (ModelSpec::auxiliary): one call
// with a function that builds the model in double precision from its arguments. The checks come
// from the model's type (run/sample_auxiliary.hpp: check_auxiliary_model), so the CLI refuses
// exactly what myriad::sample_auxiliary would.

#include <utility>

#include "myriad/app/registry.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad {

template <class Make>
void offer_auxiliary_samplers(ModelSpec& spec, Make make) {
  using Model = decltype(make(std::declval<const ModelArguments&>()));
  spec.auxiliary_check = [](AuxiliaryMethod method) { check_auxiliary_model<Model>(method); };
  spec.auxiliary = [make](const ModelArguments& a, const AuxiliaryConfig& config,
                          AuxiliaryReport& report) {
    return sample_auxiliary(make(a), config, &report);
  };
}

}  // namespace myriad
