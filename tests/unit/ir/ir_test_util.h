// Helpers shared by the IR unit tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "loom/support/error.h"

namespace loom {

// The message of the loom::Error that `fn` throws; "" when it throws none (other exceptions
// propagate, failing the test).
inline std::string UserErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace loom

// Expects `statement` to throw a loom::Error whose message contains `substring`.
#define EXPECT_USER_ERROR(statement, substring)                                                  \
  do {                                                                                           \
    std::string loom_message_ = ::loom::UserErrorOf([&] { (void)(statement); });                 \
    EXPECT_NE(loom_message_.find(substring), std::string::npos)                                  \
        << "expected a user error containing \"" << (substring) << "\", got \"" << loom_message_ \
        << "\"";                                                                                 \
  } while (0)
