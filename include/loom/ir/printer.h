// Printing IR as text that reads like TVMScript. The output is stable (golden tests depend
// on it): variables print by name, with a numeric suffix where two distinct variables share
// a name.
#pragma once

#include <ostream>
#include <string>

#include "loom/ir/node.h"

namespace loom {

// Any IR object: an expression, a statement, a PrimFunc, a Buffer, a Range, ...
std::string ToScript(const ObjectRef& node);

std::ostream& operator<<(std::ostream& os, const ObjectRef& node);

}  // namespace loom
