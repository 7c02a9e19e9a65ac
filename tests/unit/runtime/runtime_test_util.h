// Helpers shared by the runtime tests.
#pragma once

#include <functional>
#include <string>

#include "loom/support/error.h"

namespace loom::runtime {

// The message of the loom::Error `body` throws, or a marker when it throws none.
inline std::string MessageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "<no loom::Error thrown>";
}

}  // namespace loom::runtime
