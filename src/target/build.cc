// loom::build: from a lowered function to running code.
#include "loom/target/build.h"

#include "loom/runtime/c_backend_api.h"
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
  if (!target.kind_def().is_device) {
    // The packed calling convention with its argument checks.
    lowered = MakePackedAPI(target.kind_def().device_type)(lowered);
    // Code generation and loading, by the generator registered for the target's kind.
    return codegen::CodegenForTarget(target).build(lowered, target);
  }
  // A device target: thread-bound loop nests become kernels for the device's generator; the
  // rest, which launches them, is built for the host target, whose module imports the
  // device's (and finds the kernels there when it launches them).
  lowered = SplitHostDevice()(lowered);
  IRModule host, kernels;
  for (const auto& [name, func] : lowered.functions()) {
    (IsDeviceKernel(func) ? kernels : host).Add(name, func);
  }
  const Target& host_target = target.host();
  runtime::Module host_module =
      codegen::CodegenForTarget(host_target)
          .build(MakePackedAPI(target.kind_def().device_type)(host), host_target);
  if (kernels.size() > 0) {
    host_module.Import(codegen::CodegenForTarget(target).build(kernels, target));
  }
  return host_module;
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
  const codegen::CodegenEntry& entry = codegen::CodegenForModule(module, path);
  // The imported modules (device code) travel inside the library, as the blob the runtime's
  // loader reads back (loom/runtime/module.h).
  std::string imports = codegen::SerializeImports(module, path);
  if (imports.empty()) return entry.export_library(module, path, blobs);
  std::vector<LibraryBlob> all = blobs;
  all.push_back({LOOM_IMPORTS_SYMBOL, imports.data(), imports.size()});
  entry.export_library(module, path, all);
}

}  // namespace loom
