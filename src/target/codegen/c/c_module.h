// The c target's entry points (registered as its code generator, see loom/target/codegen.h).
// Private to src/target.
#pragma once

#include <string>

#include "loom/ir/module.h"
#include "loom/runtime/module.h"
#include "loom/target/codegen.h"
#include "loom/target/target.h"

namespace loom::codegen {

// The C source of `packed` (every function in the packed calling convention): what the c
// target compiles. It is the same for every c target; only the compiler's flags differ.
CSource GenerateCSource(const IRModule& packed);

// Generates C for `packed`; the module (type_key "c") compiles it with the target's C
// compiler into a shared library in a temporary folder, and loads it, when a function is
// first asked for.
runtime::Module BuildC(const IRModule& packed, const Target& target);

}  // namespace loom::codegen
