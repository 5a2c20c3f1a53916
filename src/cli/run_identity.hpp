#pragma once
// What every run.json says first of the run: the model it ran with its arguments, the data file
// and the device asked for; and the model a command runs, chosen from --model and checked before
// the run starts.

#include <string>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "json.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"

namespace myriad::cli {

/// The model a run ran and where it was asked to run (each command's run description starts
/// with it).
struct RunIdentity {
  std::string model;
  std::vector<std::pair<std::string, std::string>> model_arguments;
  std::string data_file;  ///< --data, empty when the model's own data were used
  std::string requested_device;
};

RunIdentity run_identity(const ModelSpec& spec, const ModelArguments& arguments,
                         Device requested_device);

/// The members every run.json starts with: myriad_version, method, model and model_args (its
/// --model-arg values, defaults filled in), and data_file when --data named one.
Json report_header(const std::string& method, const RunIdentity& run);

/// The model --model names with its --model-arg values and --data file read, its data built
/// (and so checked) before the run. Throws UsageError ("NAME is not <what> (see 'myriad
/// models')") when the model does not offer the command: offers(spec) is false.
template <class Offers>
std::pair<const ModelSpec&, ModelArguments> chosen_model(const CommandLine& line, Offers offers,
                                                         const std::string& what) {
  const ModelSpec& spec = find_model(line.text("model"));
  if (!offers(spec)) throw UsageError{spec.name + " is not " + what + " (see 'myriad models')"};
  ModelArguments arguments(spec, model_arguments(line), data_path(line));
  if (spec.dim) spec.dim(arguments);  // builds (and so checks) the model's data
  return {spec, std::move(arguments)};
}

}  // namespace myriad::cli
