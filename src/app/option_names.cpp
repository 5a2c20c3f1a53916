#include "myriad/app/option_names.hpp"

#include <string>

#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"

namespace myriad {

namespace {

/// The value `name` names in the enum's table (core/enum_names.hpp), or invalid_argument
/// "unknown <what> '<name>' (expected a, b or c)".
template <class E, std::size_t N>
E parse_enum(const EnumName<E> (&names)[N], const std::string& name, const std::string& what) {
  if (const auto value = enum_value(names, name)) return *value;
  throw invalid_argument("unknown " + what + " '" + name + "' (expected " + enum_names_list(names) +
                         ")");
}

}  // namespace

TeamMapping parse_team_mapping(const std::string& name, const char* what) {
  return parse_enum(kTeamMappingNames, name, what);
}

GramFactorization parse_gram_factorization(const std::string& name) {
  return parse_enum(kGramFactorizationNames, name, "Gram factorisation");
}

Device parse_device(const std::string& name) { return parse_enum(kDeviceNames, name, "device"); }

ScheduleKind parse_schedule_kind(const std::string& name) {
  return parse_enum(kScheduleKindNames, name, "schedule");
}

AisTransition parse_ais_transition(const std::string& name) {
  return parse_enum(kAisTransitionNames, name, "AIS transition");
}

TemperMethod parse_temper_method(const std::string& name) {
  return parse_enum(kTemperMethodNames, name, "tempering method");
}

TemperingMetric parse_tempering_metric(const std::string& name) {
  return parse_enum(kTemperingMetricNames, name, "tempering metric");
}

MpisMethod parse_mpis_method(const std::string& name) {
  return parse_enum(kMpisMethodNames, name, "method");
}

ContractionPath parse_contraction_path(const std::string& name) {
  return parse_enum(kContractionPathNames, name, "contraction path");
}

Precision parse_precision(const std::string& name) {
  return parse_enum(kPrecisionNames, name, "precision");
}

}  // namespace myriad
