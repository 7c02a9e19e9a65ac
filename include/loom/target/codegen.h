// The registry of code generators: loom::build hands a lowered module to the generator of
// its target's kind, and loom::ExportLibrary hands a built module to the exporter of its
// type. A backend registers both from its own file (llvm's in
// src/target/codegen/llvm/llvm_module.cc); build.cc names no backend.
//
//   LOOM_REGISTER_CODEGEN({.target_kind = "llvm", .module_type = "llvm",
//                          .build = BuildLLVM, .export_library = ExportLLVMLibrary});
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/ir/module.h"
#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/target/target.h"

namespace loom::codegen {

struct CodegenEntry {
  std::string target_kind;  // what build() dispatches on
  std::string module_type;  // the type_key of the modules it builds
  // Generates code for every function of `packed` (in the packed calling convention, after
  // build's target lowering) and loads it, as far as the target can run here.
  std::function<runtime::Module(const IRModule& packed, const Target& target)> build;
  // Writes a module it built as one shared library at `path`, with `blobs` exported as
  // read-only data (see loom::ExportLibrary).
  std::function<void(const runtime::Module& module, const std::string& path,
                     const std::vector<LibraryBlob>& blobs)>
      export_library;
  // Whether its modules hold C source (FindCSource), which the AOT executor needs.
  bool c_source = false;
  // A module it built as the bytes a runtime loader takes back
  // (runtime::RegisterModuleLoader), with that loader's type key. Empty: the module
  // exported as a shared library, for the runtime's "dso" loader.
  std::function<std::pair<std::string, std::string>(const runtime::Module& module)> serialize =
      nullptr;
};

void RegisterCodegen(CodegenEntry entry);

// The C source of a module built for the c target, for executors that compile it elsewhere
// (the AOT executor and the micro runtime): the text, and what one kernel call asks of the
// workspace service at most (see CodeGenC), or the kernel whose need has no constant bound.
struct CSource {
  std::string text;
  int64_t scratch_bytes = 0;
  std::string unbounded_function;
};
// Null for a module of another type.
const CSource* FindCSource(const runtime::Module& module);

// Whether `name` can be a C symbol.
bool IsCIdentifier(const std::string& name);
// The C type the c target stores one element of `t` as (uint8_t for bool, uint16_t for the
// bits of float16 and bfloat16, float, double, intN_t / uintN_t).
std::string CStorageType(DataType t);

// The modules `module` imports, serialized for the LOOM_IMPORTS_SYMBOL blob of its exported
// library (`path`, for messages); empty when it imports none.
std::string SerializeImports(const runtime::Module& module, const std::string& path);
// The generator for a target kind / the exporter for a module type; a loom::Error naming
// the kind or type and those that have one when there is none.
const CodegenEntry& CodegenForTarget(const Target& target);
const CodegenEntry& CodegenForModule(const runtime::Module& module, const std::string& path);

#define LOOM_CODEGEN_VAR_I(line) loom_codegen_##line
#define LOOM_CODEGEN_VAR(line) LOOM_CODEGEN_VAR_I(line)
#define LOOM_REGISTER_CODEGEN(...)                                    \
  [[maybe_unused]] static const bool LOOM_CODEGEN_VAR(__LINE__) =     \
      (::loom::codegen::RegisterCodegen(::loom::codegen::CodegenEntry __VA_ARGS__), true)

}  // namespace loom::codegen
