// The message of the loom::Error a callable throws, for tests of user errors. Header-only.
#pragma once

#include <functional>
#include <string>

#include "loom/support/error.h"

namespace loom::testing {

// The message of the loom::Error that `f` throws, or "no error".
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace loom::testing
