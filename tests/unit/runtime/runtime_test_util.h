// Helpers shared by the runtime tests.
#pragma once

#include "error_of.h"

namespace loom::runtime {

using ::loom::testing::ErrorOf;

}  // namespace loom::runtime
