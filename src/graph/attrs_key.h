// The exact text of a call's attributes that kernel caches key on (EvaluateCall's compiled
// calls, LowerToTIR's shared groups): unlike Attrs::str(), floats are hexadecimal, so values
// that print alike but differ never share a kernel, and strings are length-prefixed, so no
// value can pass for a separator.
#pragma once

#include <string>

#include "loom/graph/attrs.h"

namespace loom::graph {

// "alpha=0x1.99999ap-4;mode=7:nearest;strides=[1,2,];"
std::string AttrsKey(const Attrs& attrs);

}  // namespace loom::graph
