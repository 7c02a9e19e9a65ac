// build(): what happens to a lowered function after te::lower, read top to bottom in
// src/target/build.cc -- target lowering (ContractMultiplyAdd, LowerMathIntrinsics, for a
// device target SplitHostDevice, MakePackedAPI), code generation for the target (and for a
// device target, the kernels by the device's generator, imported by the host module), and
// loading the code in process (an ORC JIT) as a runtime::Module. The compiled code computes bit for bit what the TIR
// interpreter computes on the function after the first two of those passes (except under
// -fast-math).
//
//   PrimFunc f = te::lower(s, {A, B, C}, "add");
//   runtime::Module m = build(f, Target::Parse("llvm"));
//   m.GetRequiredFunction("add")(a, b, c);            // NDArrays
//   ExportLibrary(m, "add.so");                        // runtime::LoadModuleFromFile("add.so")
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "loom/ir/module.h"
#include "loom/runtime/module.h"
#include "loom/target/target.h"

namespace loom {

// Compiles every function of `module` (each exported under its name in the module).
runtime::Module build(const IRModule& module, const Target& target);

// Functions compiled for one target, as a part of a heterogeneous build.
struct BuildPart {
  IRModule module;
  Target target;
};
// Compiles the parts into one module for their common host target: each part's host
// functions take its device's tensors (a model's CPU kernels and its VTA kernels, say), its
// device kernels go into a module the host module imports. A function name in two parts, or
// parts with different hosts, is a loom::Error.
runtime::Module build(const std::vector<BuildPart>& parts);
// Compiles one function, exported as its "global_symbol" attribute (te::lower sets it) or
// as "main".
runtime::Module build(const PrimFunc& func, const Target& target);

// Writes `module` (made by build) as a shared library: an object file for its target linked
// with the system C compiler (`cc -shared`), with the modules it imports packed inside (the
// loader imports them again). The library needs only libc and libm.
// A module from elsewhere, or a failing compiler, is a loom::Error.
void ExportLibrary(const runtime::Module& module, const std::string& path);

// A named read-only byte array to embed in an exported library (a model's execution graph
// and weights). `data` is read during the export only.
struct LibraryBlob {
  std::string symbol;  // a C identifier, not a function of the module
  const void* data;
  size_t size;
};
// Like ExportLibrary, and also exports each blob as `symbol`: its bytes, 64-byte aligned and
// followed by one zero byte (so a text blob is a C string), and `symbol_size`, a uint64_t
// holding the size without that byte. The bytes reach the library through a temporary file
// that the assembler includes as it is (no C source, no copy in the compiler's memory), so
// hundreds of megabytes export in about the time the linker takes to copy them.
void ExportLibrary(const runtime::Module& module, const std::string& path,
                   const std::vector<LibraryBlob>& blobs);

}  // namespace loom
