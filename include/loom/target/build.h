// build(): what happens to a lowered function after te::lower, read top to bottom in
// src/target/build.cc -- target lowering (ContractMultiplyAdd, LowerMathIntrinsics,
// MakePackedAPI), code generation for the target, and loading the code in process (an ORC
// JIT) as a runtime::Module. The compiled code computes bit for bit what the TIR
// interpreter computes on the function after the first two of those passes (except under
// -fast-math).
//
//   PrimFunc f = te::lower(s, {A, B, C}, "add");
//   runtime::Module m = build(f, Target::Parse("llvm"));
//   m.GetRequiredFunction("add")(a, b, c);            // NDArrays
//   ExportLibrary(m, "add.so");                        // runtime::LoadModuleFromFile("add.so")
#pragma once

#include <string>

#include "loom/ir/module.h"
#include "loom/runtime/module.h"
#include "loom/target/target.h"

namespace loom {

// Compiles every function of `module` (each exported under its name in the module).
runtime::Module build(const IRModule& module, const Target& target);
// Compiles one function, exported as its "global_symbol" attribute (te::lower sets it) or
// as "main".
runtime::Module build(const PrimFunc& func, const Target& target);

// Writes `module` (made by build) as a shared library: an object file for its target linked
// with the system C compiler (`cc -shared`). The library needs only libc and libm.
// A module from elsewhere, or a failing compiler, is a loom::Error.
void ExportLibrary(const runtime::Module& module, const std::string& path);

}  // namespace loom
