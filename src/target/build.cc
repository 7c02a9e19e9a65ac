// loom::build: from a lowered function to running code.
#include "loom/target/build.h"

#include "loom/runtime/c_backend_api.h"
#include "loom/target/codegen.h"
#include "loom/tir/transform.h"

namespace loom {

namespace {

// Target lowering shared by every part of a build: contraction and math intrinsics.
IRModule LowerForTarget(const IRModule& module, const Target& target) {
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
  return lowered;
}

}  // namespace

runtime::Module build(const std::vector<BuildPart>& parts) {
  using namespace tir::transform;
  LOOM_CHECK_USER(!parts.empty()) << "build: nothing to build";
  const Target& host_target = parts[0].target.host();
  // The functions that run on the host, each part's with the packed calling convention of its
  // device (whose tensors the checks expect), and the device kernels of each part.
  IRModule host;
  std::vector<runtime::Module> device_modules;
  for (const BuildPart& part : parts) {
    const Target& target = part.target;
    LOOM_CHECK_USER(target.host().str() == host_target.str())
        << "build: the parts' host targets differ (" << target.host().str() << " and "
        << host_target.str() << ")";
    IRModule lowered = LowerForTarget(part.module, target);
    IRModule part_host;
    if (!target.kind_def().is_device) {
      part_host = lowered;
    } else {
      // A device target: thread-bound loop nests become kernels for the device's generator;
      // the rest, which launches them, is built for the host target, whose module imports
      // the device's (and finds the kernels there when it launches them).
      // Cross-thread reductions become the target's shuffles or shared memory once each
      // kernel's threads are known; barriers go in once the kernels are whole, with the
      // shared memory their threads share.
      lowered = SplitHostDevice()(lowered);
      // A device kind without warps (VTA) reduces across no threads: a warp of one.
      const int warp_size =
          target.Has("thread-warp-size") ? static_cast<int>(target.GetInt("thread-warp-size")) : 1;
      lowered = LowerThreadAllreduce(warp_size)(lowered);
      lowered = ThreadSync()(lowered);
      IRModule kernels;
      for (const auto& [name, func] : lowered.functions()) {
        (IsDeviceKernel(func) ? kernels : part_host).Add(name, func);
      }
      if (kernels.size() > 0) {
        device_modules.push_back(codegen::CodegenForTarget(target).build(kernels, target));
      }
    }
    // The packed calling convention with its argument checks.
    part_host =
        MakePackedAPI(target.kind_def().device_type, target.kind_def().opaque_memory)(part_host);
    for (const auto& [name, func] : part_host.functions()) {
      LOOM_CHECK_USER(!host.Contains(name))
          << "build: function '" << name << "' is in two parts of the build";
      host.Add(name, func);
    }
  }
  // Code generation and loading, by the generator registered for the host's kind.
  runtime::Module host_module = codegen::CodegenForTarget(host_target).build(host, host_target);
  for (const runtime::Module& device : device_modules) host_module.Import(device);
  return host_module;
}

runtime::Module build(const IRModule& module, const Target& target) {
  return build(std::vector<BuildPart>{{module, target}});
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
