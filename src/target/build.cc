// loom::build: from a lowered function to running code.
#include "loom/target/build.h"

#include "loom/target/codegen.h"
#include "loom/tir/transform.h"

namespace loom {

runtime::Module build(const IRModule& module, const Target& target) {
  using namespace tir::transform;
  IRModule lowered = module;
  // Float contraction, decided in TIR so that compiled code and the interpreter running
  // this TIR agree bit for bit (LLVM itself never contracts; see Target): a * b + c
  // becomes fma(a, b, c) where the target contracts (-fp-contract=fast on an fma CPU).
  if (target.ContractsMultiplyAdd()) lowered = ContractMultiplyAdd()(lowered);
  // float32 exp, log, tanh, ... become branch-free polynomials, vectorizable with no libm
  // calls. After contraction, which must not fuse the polynomials' operations: their
  // accuracy (docs/math.md) holds as measured, uncontracted. Under -fast-math the calls go
  // to codegen instead, which emits the same polynomials without the fast-math flags that
  // would otherwise let LLVM reassociate them.
  if (!target.fast_math()) lowered = LowerMathIntrinsics()(lowered);
  // The packed calling convention with its argument checks. (Other passes that depend on
  // the target -- host/device splitting -- go before it.)
  lowered = MakePackedAPI()(lowered);
  // Code generation and loading, by the generator registered for the target's kind.
  return codegen::CodegenForTarget(target).build(lowered, target);
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
  ExportLibrary(module, path, {});
}

void ExportLibrary(const runtime::Module& module, const std::string& path,
                   const std::vector<LibraryBlob>& blobs) {
  codegen::CodegenForModule(module, path).export_library(module, path, blobs);
}

}  // namespace loom
