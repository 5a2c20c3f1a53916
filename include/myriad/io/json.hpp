#pragma once
// A minimal JSON document model for run.json: build a json::Value, dump() it, and parse it back.
// Objects keep their members in insertion order so that run.json reads in the order written.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace myriad::io::json {

class Value;

/// A JSON array.
using Array = std::vector<Value>;

/// A JSON object: members in insertion order. Keys are unique when built through Value.
using Object = std::vector<std::pair<std::string, Value>>;

/// The kind of a JSON value; numbers are kept as integers or doubles as they were given.
enum class Type { null, boolean, integer, number, string, array, object };

/// A JSON value: null, bool, int64, double, string, array or object.
///
///   json::Value run = json::Object{};
///   run["model"] = "eight_schools";
///   run["settings"]["chains"] = 4096;
///   run["step_size"] = 0.12;
///   std::string text = run.dump();
class Value {
 public:
  /// null.
  Value() = default;
  /// null.
  Value(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): implicit, like a literal
  /// true or false.
  Value(bool value) : data_(value) {}  // NOLINT(google-explicit-constructor)
  /// Any integer type except bool, stored as int64 (unsigned values above INT64_MAX become
  /// doubles).
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Value(T value) {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      if (value > T(INT64_MAX)) {
        data_ = double(value);
        return;
      }
    }
    data_ = int64_t(value);
  }
  /// A double (or float); non-finite values are written as null.
  Value(double value) : data_(value) {}  // NOLINT(google-explicit-constructor)
  /// A string (UTF-8).
  Value(std::string value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// A string (UTF-8).
  Value(const char* value) : data_(std::string(value)) {}  // NOLINT(google-explicit-constructor)
  /// Other pointers would silently convert to bool; they are almost always a mistake.
  template <class T>
  Value(const T* pointer) = delete;
  /// An array.
  Value(Array value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// An object.
  Value(Object value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  /// The kind of value held.
  Type type() const { return Type(data_.index()); }
  bool is_null() const { return type() == Type::null; }
  /// True for integers and doubles.
  bool is_number() const { return type() == Type::integer || type() == Type::number; }

  /// The value, or myriad::invalid_argument if it holds another type.
  bool as_bool() const;
  /// The integer value; a double is not converted.
  int64_t as_int() const;
  /// The value as a double; an integer is converted.
  double as_double() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;
  Object& as_object();

  /// The member `key`, added as null if absent; a null value first becomes an empty object.
  /// Throws myriad::invalid_argument if the value is neither null nor an object.
  Value& operator[](const std::string& key);
  /// The member `key`; throws myriad::invalid_argument if absent or not an object.
  const Value& at(const std::string& key) const;
  /// The element `index` of an array; throws myriad::invalid_argument if out of range.
  const Value& at(size_t index) const;
  /// True if this is an object with member `key`.
  bool contains(const std::string& key) const;
  /// Appends to an array; a null value first becomes an empty array.
  void push_back(Value element);
  /// Number of elements of an array or members of an object; 0 for anything else.
  size_t size() const;

  /// JSON text. `indent` > 0 puts each element on its own line indented by that many spaces
  /// per level; `indent` <= 0 writes a single line. Non-finite doubles become null (JSON has
  /// no NaN); other doubles use the shortest digits that read back to the same double.
  std::string dump(int indent = 2) const;

  /// Structural equality; an integer never equals a double, and NaN never equals NaN.
  friend bool operator==(const Value& a, const Value& b) { return a.data_ == b.data_; }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

 private:
  void dump_to(std::string& out, int indent, int depth) const;

  // The order of the alternatives matches Type.
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> data_;
};

}  // namespace myriad::io::json

namespace myriad::io {

/// Parses JSON text (RFC 8259): objects, arrays, strings with escapes (including surrogate
/// pairs), numbers, true, false and null. Numbers without a fraction or exponent that fit in
/// int64 become integers, all others doubles. A repeated object key keeps its last value.
/// Throws myriad::invalid_argument naming the byte offset of the first error.
json::Value parse_json(const std::string& text);

}  // namespace myriad::io
