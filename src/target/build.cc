// loom::build: from a lowered function to running code.
#include "loom/target/build.h"

#include "loom/tir/transform.h"
#include "target/codegen/llvm/llvm_module.h"

namespace loom {

runtime::Module build(const IRModule& module, const Target& target) {
  // Target lowering: the packed calling convention with its argument checks. (Passes that
  // depend on the target -- host/device splitting, intrinsic lowering -- go here.)
  IRModule lowered = tir::transform::MakePackedAPI()(module);
  // Code generation and loading, by target kind (only llvm exists).
  return codegen::BuildLLVM(lowered, target);
}

runtime::Module build(const PrimFunc& func, const Target& target) {
  std::string name = "main";
  auto symbol = func->attrs.find("global_symbol");
  if (symbol != func->attrs.end()) {
    if (const auto* text = symbol->second.as<StringImmNode>()) name = text->value;
  }
  IRModule module;
  module.Add(name, func);
  return build(module, target);
}

void ExportLibrary(const runtime::Module& module, const std::string& path) {
  codegen::ExportLLVMLibrary(module, path);
}

}  // namespace loom
