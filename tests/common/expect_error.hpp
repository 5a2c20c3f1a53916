#pragma once
// Expectations on the errors a call throws.

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::testing {

/// Expects `call` to throw myriad::invalid_argument whose message contains `fragment`.
inline void expect_invalid_argument(const std::function<void()>& call,
                                    const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "expected myriad::invalid_argument containing \"" << fragment << "\"";
  } catch (const myriad::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << fragment;
  }
}

/// Expects `make` to throw myriad::invalid_argument whose message names every one of `words`
/// (in any order and place).
template <class F>
void expect_rejected(F&& make, std::initializer_list<const char*> words) {
  try {
    make();
    ADD_FAILURE() << "no exception; expected a message naming " << *words.begin();
  } catch (const myriad::invalid_argument& e) {
    const std::string message = e.what();
    for (const char* word : words)
      EXPECT_NE(message.find(word), std::string::npos) << "'" << message << "' lacks " << word;
  }
}

/// The message of the `Error` that `call` throws; a failure, and "", if it throws none.
template <class Error, class Call>
std::string thrown_message(Call call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no exception of the expected type thrown";
  return "";
}

/// Expects `statement` to throw `Error` whose message is one line containing every one of
/// `parts`.
template <class Error, class Statement>
void expect_error_containing(Statement statement, std::vector<std::string> parts) {
  try {
    statement();
    ADD_FAILURE() << "no exception thrown";
  } catch (const Error& error) {
    const std::string message = error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "message: " << message;
    }
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  }
}

}  // namespace myriad::testing
