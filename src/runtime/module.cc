#include "loom/runtime/module.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "loom/runtime/cpu_features.h"
#include "loom/support/error.h"

namespace loom::runtime {

namespace {

struct LoaderRegistry {
  std::mutex mutex;
  std::map<std::string, ModuleLoader> loaders;
};

// A shared library's bytes: written to a temporary file, loaded, and the file removed (the
// mapping outlives its name).
Module LoadSharedLibraryBytes(const std::string& bytes) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/loom_import_XXXXXX";
  int fd = mkstemp(pattern.data());
  LOOM_CHECK_USER(fd >= 0) << "loading an imported library: cannot create a temporary file "
                           << "like '" << pattern << "'; set TMPDIR to a writable folder";
  bool written = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  if (!written) {
    std::remove(pattern.c_str());
    LOOM_THROW << "loading an imported library: could not write '" << pattern << "'";
  }
  try {
    Module module = LoadModuleFromFile(pattern);
    std::remove(pattern.c_str());
    return module;
  } catch (...) {
    std::remove(pattern.c_str());
    throw;
  }
}

LoaderRegistry& Loaders() {
  static LoaderRegistry* registry = [] {
    auto* r = new LoaderRegistry();  // never destroyed: loaders outlive every module
    r->loaders.emplace("dso", LoadSharedLibraryBytes);
    return r;
  }();
  return *registry;
}

}  // namespace

void RegisterModuleLoader(const std::string& type_key, ModuleLoader loader) {
  LoaderRegistry& registry = Loaders();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.loaders[type_key] = std::move(loader);
}

Module LoadModuleFromBytes(const std::string& type_key, const std::string& bytes,
                           const std::string& what) {
  ModuleLoader loader;
  std::string known;
  {
    LoaderRegistry& registry = Loaders();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.loaders.find(type_key);
    if (it != registry.loaders.end()) loader = it->second;
    for (const auto& [key, unused] : registry.loaders) known += (known.empty() ? "" : ", ") + key;
  }
  LOOM_CHECK_USER(loader) << what << " holds a '" << type_key
                          << "' module, and no loader for it is registered in this process "
                             "(known: " << known << "); load the runtime library that provides it first";
  return loader(bytes);
}

void ModuleNode::Import(Module module) {
  LOOM_CHECK_USER(module.defined())
      << "Import into " << description() << ": the imported module is undefined";
  std::lock_guard<std::mutex> lock(imported_mutex_);
  imports_.push_back(std::move(module));
  imported_functions_.clear();  // a new import may hold a name that was missing
}

PackedFunc ModuleNode::GetImportedFunction(const std::string& name) {
  std::lock_guard<std::mutex> lock(imported_mutex_);
  auto it = imported_functions_.find(name);
  if (it != imported_functions_.end()) return it->second;
  PackedFunc func;
  for (const Module& imported : imports_) {
    func = imported.GetFunction(name, /*query_imports=*/true);
    if (func.defined()) break;
  }
  if (func.defined()) imported_functions_.emplace(name, func);
  return func;
}

PackedFunc Module::GetFunction(const std::string& name, bool query_imports) const {
  LOOM_ICHECK(defined()) << "GetFunction('" << name << "') on an undefined Module";
  PackedFunc func = node_->GetFunction(name);
  if (func.defined() || !query_imports) return func;
  return node_->GetImportedFunction(name);
}

PackedFunc Module::GetRequiredFunction(const std::string& name) const {
  PackedFunc func = GetFunction(name, true);
  LOOM_CHECK_USER(func.defined())
      << node_->description() << " has no function '" << name
      << "' (nor do its imports); check the name the function was compiled under";
  return func;
}

void InitBackendServices(const std::function<void*(const char* symbol)>& find_global,
                         ModuleNode* context) {
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
  fill(LOOM_BACKEND_CALL_PACKED_SYMBOL, LoomBackendCallPackedFn{&LoomBackendCallPacked});
  fill(LOOM_MODULE_CONTEXT_SYMBOL, static_cast<void*>(context));
  // Kernels tensorized onto AMX tiles need the process's permission first.
  RequestTileRegisters();
}

}  // namespace loom::runtime
