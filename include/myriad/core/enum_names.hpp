#pragma once
// The names of an option enum's values in one table, which both directions read: to_string (the
// library's labels, run.json) and the command line's parsing (myriad/app/option_names.hpp). A
// value may have several names: the first is its own, the others are aliases the parser takes.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace myriad {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

/// The first name of `value` in `names`; `fallback` for a value the table lacks.
template <class E, std::size_t N>
constexpr const char* enum_name(const EnumName<E> (&names)[N], E value,
                                const char* fallback = "?") {
  for (const EnumName<E>& entry : names)
    if (entry.value == value) return entry.name;
  return fallback;
}

/// The value `text` names in `names`, aliases included.
template <class E, std::size_t N>
std::optional<E> enum_value(const EnumName<E> (&names)[N], std::string_view text) {
  for (const EnumName<E>& entry : names)
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

/// Each value's own name, "a, b or c", for messages that say what is expected.
template <class E, std::size_t N>
std::string enum_names_list(const EnumName<E> (&names)[N]) {
  std::vector<const char*> own;  // the first name of each value: aliases are left out
  for (const EnumName<E>& entry : names)
    if (enum_name(names, entry.value) == entry.name) own.push_back(entry.name);
  std::string list;
  for (std::size_t i = 0; i < own.size(); ++i)
    list += (i == 0 ? "" : i + 1 == own.size() ? " or " : ", ") + std::string(own[i]);
  return list;
}

}  // namespace myriad
