#pragma once
// run.json through nlohmann-json: ordered_json keeps the members in the order written, and a
// non-finite double is written as null (JSON has no NaN), e.g. an acceptance with no transitions.

#include <nlohmann/json.hpp>

namespace myriad::cli {

using Json = nlohmann::ordered_json;

}  // namespace myriad::cli
