#include "loom/runtime/module.h"

#include "loom/support/error.h"

namespace loom::runtime {

void ModuleNode::Import(Module module) {
  LOOM_CHECK_USER(module.defined())
      << "Import into " << description() << ": the imported module is undefined";
  imports_.push_back(std::move(module));
}

PackedFunc Module::GetFunction(const std::string& name, bool query_imports) const {
  LOOM_ICHECK(defined()) << "GetFunction('" << name << "') on an undefined Module";
  PackedFunc func = node_->GetFunction(name);
  if (func.defined() || !query_imports) return func;
  for (const Module& imported : node_->imports()) {
    func = imported.GetFunction(name, true);
    if (func.defined()) return func;
  }
  return PackedFunc();
}

PackedFunc Module::GetRequiredFunction(const std::string& name) const {
  PackedFunc func = GetFunction(name, true);
  LOOM_CHECK_USER(func.defined())
      << node_->description() << " has no function '" << name
      << "' (nor do its imports); check the name the function was compiled under";
  return func;
}

void InitBackendServices(const std::function<void*(const char* symbol)>& find_global) {
  // Each global is a function pointer of the matching type; writing through the address the
  // loader resolved is how the library learns where the runtime is.
  auto fill = [&](const char* symbol, auto implementation) {
    void* address = find_global(symbol);
    if (address != nullptr) *static_cast<decltype(implementation)*>(address) = implementation;
  };
  fill(LOOM_BACKEND_PARALLEL_LAUNCH_SYMBOL, LoomBackendParallelLaunchFn{&LoomBackendParallelLaunch});
  fill(LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL,
       LoomBackendParallelLaunchSharedFn{&LoomBackendParallelLaunchShared});
  fill(LOOM_BACKEND_PARALLEL_BARRIER_SYMBOL,
       LoomBackendParallelBarrierFn{&LoomBackendParallelBarrier});
  fill(LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL, LoomBackendAllocWorkspaceFn{&LoomBackendAllocWorkspace});
  fill(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL, LoomBackendFreeWorkspaceFn{&LoomBackendFreeWorkspace});
  fill(LOOM_API_SET_LAST_ERROR_SYMBOL, LoomAPISetLastErrorFn{&LoomAPISetLastError});
}

}  // namespace loom::runtime
