// CmdStan's JSON data format (stan_data.hpp), read through nlohmann-json.

#include "myriad/app/stan_data.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "myriad/core/error.hpp"

namespace myriad {

namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  if (shape.empty()) return "a scalar";
  std::string text = "an array of shape [";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The value of one JSON leaf: a number, or one of CmdStan's strings for the non-finite reals.
bool leaf_value(const nlohmann::json& leaf, double& value, bool& integer) {
  if (leaf.is_number()) {
    integer = leaf.is_number_integer() || leaf.is_number_unsigned();
    value = leaf.get<double>();
    return true;
  }
  if (!leaf.is_string()) return false;
  const std::string& s = leaf.get_ref<const std::string&>();
  const double inf = std::numeric_limits<double>::infinity();
  integer = false;
  if (s == "NaN")
    value = std::numeric_limits<double>::quiet_NaN();
  else if (s == "Inf" || s == "Infinity" || s == "+Inf" || s == "+Infinity")
    value = inf;
  else if (s == "-Inf" || s == "-Infinity")
    value = -inf;
  else
    return false;
  return true;
}

}  // namespace

std::string data_number_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

StanData StanData::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw invalid_argument("--data " + path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

StanData StanData::parse(const std::string& text, const std::string& origin) {
  StanData data;
  data.origin_ = origin;
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw invalid_argument(origin + ": not valid JSON");
  if (!json.is_object())
    throw invalid_argument(origin + ": expected a JSON object of data variables");
  for (const auto& [name, value] : json.items()) {
    Variable v;
    // The shape from the first element at every depth; every other element must match it.
    for (const nlohmann::json* level = &value; level->is_array();) {
      v.shape.push_back(level->size());
      if (level->empty()) break;
      level = &level->front();
    }
    bool ok = true;
    const auto walk = [&](const auto& self, const nlohmann::json& node, std::size_t depth) -> void {
      if (!ok) return;
      if (depth == v.shape.size()) {
        double x = 0;
        bool integer = false;
        ok = leaf_value(node, x, integer);
        v.values.push_back(x);
        v.all_integers = v.all_integers && integer;
        return;
      }
      if (!node.is_array() || node.size() != v.shape[depth]) {
        ok = false;
        return;
      }
      for (const auto& element : node) self(self, element, depth + 1);
    };
    walk(walk, value, 0);
    if (!ok)
      data.fail(name,
                "is not a number, one of \"NaN\", \"Inf\", \"-Inf\", or a rectangular "
                "array of them");
    data.variables_.emplace(name, std::move(v));
  }
  return data;
}

bool StanData::has(const std::string& name) const { return variables_.count(name) != 0; }

void StanData::fail(const std::string& name, const std::string& what) const {
  throw invalid_argument(origin_ + ": data variable '" + name + "' " + what);
}

const StanData::Variable& StanData::find(const std::string& name) const {
  const auto it = variables_.find(name);
  if (it == variables_.end())
    throw invalid_argument(origin_ + ": data variable '" + name + "' is missing");
  return it->second;
}

std::vector<std::size_t> StanData::shape(const std::string& name) const { return find(name).shape; }

std::vector<double> StanData::finite_values(const std::string& name, const Variable& v) const {
  for (std::size_t i = 0; i < v.values.size(); ++i) {
    if (!std::isfinite(v.values[i]))
      fail(name, (v.shape.empty() ? std::string("is") : "has entry " + std::to_string(i + 1)) +
                     " not finite (" + data_number_text(v.values[i]) + ")");
  }
  return v.values;
}

int StanData::integer(const std::string& name, long long min, long long max) const {
  const Variable& v = find(name);
  if (!v.shape.empty()) fail(name, "must be an integer scalar, got " + shape_text(v.shape));
  if (!v.all_integers || !std::isfinite(v.values[0]))
    fail(name, "must be an integer, got " + data_number_text(v.values[0]));
  const double x = v.values[0];
  if (x < double(min) || x > double(max))
    fail(name, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                   std::to_string(static_cast<long long>(x)));
  return static_cast<int>(x);
}

double StanData::real(const std::string& name) const {
  const Variable& v = find(name);
  if (!v.shape.empty()) fail(name, "must be a real scalar, got " + shape_text(v.shape));
  return finite_values(name, v)[0];
}

std::vector<double> StanData::reals(const std::string& name, std::size_t length) const {
  const Variable& v = find(name);
  if (v.shape.size() != 1 || v.shape[0] != length)
    fail(name,
         "must be an array of " + std::to_string(length) + " reals, got " + shape_text(v.shape));
  return finite_values(name, v);
}

std::vector<int> StanData::integers(const std::string& name, std::size_t length, long long min,
                                    long long max) const {
  const Variable& v = find(name);
  if (v.shape.size() != 1 || v.shape[0] != length)
    fail(name,
         "must be an array of " + std::to_string(length) + " integers, got " + shape_text(v.shape));
  if (!v.all_integers) fail(name, "must hold integers, not reals");
  std::vector<int> values;
  for (std::size_t i = 0; i < v.values.size(); ++i) {
    const double x = v.values[i];
    if (x < double(min) || x > double(max))
      fail(name, "has entry " + std::to_string(i + 1) + " = " +
                     std::to_string(static_cast<long long>(x)) + ", outside [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
    values.push_back(static_cast<int>(x));
  }
  return values;
}

std::vector<double> StanData::matrix(const std::string& name, std::size_t rows,
                                     std::size_t cols) const {
  const Variable& v = find(name);
  // An empty matrix has no rows to give its column count: [] is 0 × cols.
  const bool shaped = v.shape.size() == 2 ? v.shape[0] == rows && v.shape[1] == cols
                                          : v.shape.size() == 1 && v.shape[0] == 0 && rows == 0;
  if (!shaped)
    fail(name, "must be a " + std::to_string(rows) + " x " + std::to_string(cols) +
                   " matrix (an array of rows), got " + shape_text(v.shape));
  return finite_values(name, v);
}

}  // namespace myriad
