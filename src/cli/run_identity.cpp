#include "run_identity.hpp"

namespace myriad::cli {

RunIdentity run_identity(const ModelSpec& spec, const ModelArguments& arguments,
                         Device requested_device) {
  return {spec.name, arguments.values(), arguments.data_path(), to_string(requested_device)};
}

Json report_header(const std::string& method, const RunIdentity& run) {
  Json report = Json::object();
  report["myriad_version"] = MYRIAD_VERSION;
  report["method"] = method;
  report["model"] = run.model;
  Json args = Json::object();
  for (const auto& [key, value] : run.model_arguments) args[key] = value;
  report["model_args"] = args;
  if (!run.data_file.empty()) report["data_file"] = run.data_file;
  return report;
}

}  // namespace myriad::cli
