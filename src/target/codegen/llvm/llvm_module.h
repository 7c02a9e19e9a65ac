// The LLVM backend's entry points (registered as the llvm code generator, see
// loom/target/codegen.h). Private to src/target; no LLVM types cross this header.
#pragma once

#include <string>
#include <vector>

#include "loom/ir/module.h"
#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/target/target.h"

namespace loom::codegen {

// Generates code for `packed` (every function in the packed calling convention) and loads
// it into an ORC JIT; the module's type_key is "llvm".
runtime::Module BuildLLVM(const IRModule& packed, const Target& target);

// The optimized LLVM IR of `packed` as text (what BuildLLVM compiles), for inspection.
std::string LLVMIRText(const IRModule& packed, const Target& target);

// Writes a module made by BuildLLVM as a shared library at `path`, with `blobs` as exported
// read-only data (see loom::ExportLibrary).
void ExportLLVMLibrary(const runtime::Module& module, const std::string& path,
                       const std::vector<LibraryBlob>& blobs = {});

}  // namespace loom::codegen
