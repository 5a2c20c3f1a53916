#include "myriad/io/json.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

#include "myriad/core/error.hpp"

namespace myriad::io::json {
namespace {

const char* type_name(Type type) {
  switch (type) {
    case Type::null:
      return "null";
    case Type::boolean:
      return "a boolean";
    case Type::integer:
      return "an integer";
    case Type::number:
      return "a double";
    case Type::string:
      return "a string";
    case Type::array:
      return "an array";
    case Type::object:
      return "an object";
  }
  return "?";
}

[[noreturn]] void wrong_type(Type held, const char* wanted) {
  throw invalid_argument(std::string("JSON value is ") + type_name(held) + ", not " + wanted);
}

Object::iterator find_member(Object& object, const std::string& key) {
  auto it = object.begin();
  while (it != object.end() && it->first != key) ++it;
  return it;
}

Object::const_iterator find_member(const Object& object, const std::string& key) {
  auto it = object.begin();
  while (it != object.end() && it->first != key) ++it;
  return it;
}

/// Appends `text` as a JSON string literal (RFC 8259 section 7). Bytes >= 0x80 pass through,
/// so UTF-8 stays UTF-8.
void append_string(std::string& out, const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

/// Shortest decimal that reads back to the same double (std::to_chars without a precision
/// guarantees the round trip, with at most 17 significant digits). At 1e17 and above the fixed
/// form would print the double's exact integer value, more digits than are significant, so
/// those use the exponent form. Integral values keep a ".0" so that a reader parses them back
/// as doubles, not integers.
void append_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto result =
      std::fabs(value) >= 1e17
          ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific)
          : std::to_chars(buffer, buffer + sizeof buffer, value);
  const std::string_view digits(buffer, size_t(result.ptr - buffer));
  out += digits;
  if (digits.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void newline(std::string& out, int indent, int depth) {
  if (indent <= 0) return;
  out += '\n';
  out.append(size_t(indent) * size_t(depth), ' ');
}

}  // namespace

bool Value::as_bool() const {
  if (type() != Type::boolean) wrong_type(type(), "a boolean");
  return std::get<bool>(data_);
}

int64_t Value::as_int() const {
  if (type() != Type::integer) wrong_type(type(), "an integer");
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (type() == Type::integer) return double(std::get<int64_t>(data_));
  if (type() != Type::number) wrong_type(type(), "a number");
  return std::get<double>(data_);
}

const std::string& Value::as_string() const {
  if (type() != Type::string) wrong_type(type(), "a string");
  return std::get<std::string>(data_);
}

const Array& Value::as_array() const {
  if (type() != Type::array) wrong_type(type(), "an array");
  return std::get<Array>(data_);
}

Array& Value::as_array() {
  if (type() != Type::array) wrong_type(type(), "an array");
  return std::get<Array>(data_);
}

const Object& Value::as_object() const {
  if (type() != Type::object) wrong_type(type(), "an object");
  return std::get<Object>(data_);
}

Object& Value::as_object() {
  if (type() != Type::object) wrong_type(type(), "an object");
  return std::get<Object>(data_);
}

Value& Value::operator[](const std::string& key) {
  if (is_null()) data_ = Object{};
  Object& object = as_object();
  const auto it = find_member(object, key);
  if (it != object.end()) return it->second;
  object.emplace_back(key, Value());
  return object.back().second;
}

const Value& Value::at(const std::string& key) const {
  const Object& object = as_object();
  const auto it = find_member(object, key);
  if (it == object.end()) throw invalid_argument("JSON object has no member \"" + key + "\"");
  return it->second;
}

const Value& Value::at(size_t index) const {
  const Array& array = as_array();
  MYRIAD_EXPECTS(index < array.size(), "JSON array index ", index, " is out of range (size ",
                 array.size(), ")");
  return array[index];
}

bool Value::contains(const std::string& key) const {
  if (type() != Type::object) return false;
  const Object& object = std::get<Object>(data_);
  return find_member(object, key) != object.end();
}

void Value::push_back(Value element) {
  if (is_null()) data_ = Array{};
  as_array().push_back(std::move(element));
}

size_t Value::size() const {
  if (type() == Type::array) return std::get<Array>(data_).size();
  if (type() == Type::object) return std::get<Object>(data_).size();
  return 0;
}

std::string Value::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

void Value::dump_to(std::string& out, int indent, int depth) const {
  switch (type()) {
    case Type::null:
      out += "null";
      break;
    case Type::boolean:
      out += std::get<bool>(data_) ? "true" : "false";
      break;
    case Type::integer:
      out += std::to_string(std::get<int64_t>(data_));
      break;
    case Type::number:
      append_double(out, std::get<double>(data_));
      break;
    case Type::string:
      append_string(out, std::get<std::string>(data_));
      break;
    case Type::array: {
      const Array& array = std::get<Array>(data_);
      out += '[';
      for (size_t i = 0; i < array.size(); ++i) {
        if (i > 0) out += ',';
        newline(out, indent, depth + 1);
        array[i].dump_to(out, indent, depth + 1);
      }
      if (!array.empty()) newline(out, indent, depth);
      out += ']';
      break;
    }
    case Type::object: {
      const Object& object = std::get<Object>(data_);
      out += '{';
      for (size_t i = 0; i < object.size(); ++i) {
        if (i > 0) out += ',';
        newline(out, indent, depth + 1);
        append_string(out, object[i].first);
        out += indent > 0 ? ": " : ":";
        object[i].second.dump_to(out, indent, depth + 1);
      }
      if (!object.empty()) newline(out, indent, depth);
      out += '}';
      break;
    }
  }
}

}  // namespace myriad::io::json

namespace myriad::io {
namespace {

/// Recursive-descent parser over the grammar of RFC 8259.
class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}

  json::Value parse_document() {
    skip_whitespace();
    json::Value value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  // Deeply nested input would otherwise overflow the stack of this recursive parser.
  static constexpr int kMaxDepth = 512;

  [[noreturn]] void fail(const std::string& what) const {
    throw invalid_argument("invalid JSON at byte " + std::to_string(pos_) + ": " + what);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (peek() != c || at_end()) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  json::Value parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    if (at_end()) fail("unexpected end of input");
    switch (peek()) {
      case '{':
        return parse_object(depth);
      case '[':
        return parse_array(depth);
      case '"':
        return parse_string();
      case 't':
        return parse_literal("true", true);
      case 'f':
        return parse_literal("false", false);
      case 'n':
        return parse_literal("null", nullptr);
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        fail(std::string("unexpected character '") + peek() + "'");
    }
  }

  json::Value parse_literal(const char* word, json::Value value) {
    const std::string_view expected(word);
    if (text_.compare(pos_, expected.size(), expected) != 0) {
      fail("invalid literal (expected " + std::string(expected) + ")");
    }
    pos_ += expected.size();
    return value;
  }

  json::Value parse_object(int depth) {
    expect('{');
    json::Object object;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string_text();
      skip_whitespace();
      expect(':');
      skip_whitespace();
      json::Value value = parse_value(depth + 1);
      auto it = object.begin();
      while (it != object.end() && it->first != key) ++it;
      if (it != object.end()) {
        it->second = std::move(value);
      } else {
        object.emplace_back(std::move(key), std::move(value));
      }
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return object;
    }
  }

  json::Value parse_array(int depth) {
    expect('[');
    json::Array array;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      skip_whitespace();
      array.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return array;
    }
  }

  json::Value parse_string() { return parse_string_text(); }

  unsigned parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = text_[pos_];
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= unsigned(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= unsigned(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= unsigned(c - 'A' + 10);
      } else {
        fail("invalid hex digit in \\u escape");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xc0 | (code >> 6));
      out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += char(0xe0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    } else {
      out += char(0xf0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3f));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    }
  }

  std::string parse_string_text() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      const char escape = text_[pos_++];
      switch (escape) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = parse_hex4();
          // Characters outside the Basic Multilingual Plane arrive as a UTF-16 surrogate pair.
          if (code >= 0xdc00 && code <= 0xdfff) fail("unpaired low surrogate in \\u escape");
          if (code >= 0xd800 && code <= 0xdbff) {
            if (text_.compare(pos_, 2, "\\u") != 0) fail("unpaired high surrogate in \\u escape");
            pos_ += 2;
            const unsigned low = parse_hex4();
            if (low < 0xdc00 || low > 0xdfff) fail("invalid low surrogate in \\u escape");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          --pos_;
          fail(std::string("invalid escape '\\") + escape + "'");
      }
    }
  }

  json::Value parse_number() {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t first = pos_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - first;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;  // no leading zeros: "0" stands alone
    } else if (digits() == 0) {
      fail("expected a digit");
    }
    bool integral = true;
    if (peek() == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) fail("expected a digit after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      integral = false;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("expected a digit in the exponent");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      int64_t value = 0;
      const auto result = std::from_chars(first, last, value);
      if (result.ec == std::errc() && result.ptr == last) return value;
      // Integers beyond int64 fall through and are read as doubles.
    }
    double value = 0;
    const auto result = std::from_chars(first, last, value);
    if (result.ec != std::errc() || result.ptr != last) {
      pos_ = start;
      fail("number out of the range of a double");
    }
    return value;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

json::Value parse_json(const std::string& text) { return JsonParser(text).parse_document(); }

}  // namespace myriad::io
