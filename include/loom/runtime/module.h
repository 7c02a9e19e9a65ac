// Module: a container of compiled functions looked up by name (a loaded shared library, a
// JIT session, later a CUDA or VTA module), plus the modules it imports - for example the
// device kernels a host module launches.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "loom/runtime/packed_func.h"

namespace loom::runtime {

class Module;

class ModuleNode {
 public:
  virtual ~ModuleNode() = default;

  // The kind of module ("dso", "llvm", ...).
  virtual std::string type_key() const = 0;
  // The function called `name`, or an empty PackedFunc when this module has none.
  virtual PackedFunc GetFunction(const std::string& name) = 0;
  // What error messages call this module; the library path for a loaded library.
  virtual std::string description() const { return "a '" + type_key() + "' module"; }

  const std::vector<Module>& imports() const { return imports_; }
  void Import(Module module);
  // The function `name` of the first import (depth first) that has it, or an empty one;
  // remembered after the first lookup, since generated code asks on every kernel launch.
  PackedFunc GetImportedFunction(const std::string& name);

 private:
  std::vector<Module> imports_;
  std::mutex imported_mutex_;
  std::unordered_map<std::string, PackedFunc> imported_functions_;
};

// A shared handle to a ModuleNode.
class Module {
 public:
  Module() = default;
  explicit Module(std::shared_ptr<ModuleNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  ModuleNode* operator->() const { return node_.get(); }
  std::shared_ptr<ModuleNode> node() const { return node_; }

  // Looks in this module, then (when `query_imports`) depth-first through its imports. An
  // empty PackedFunc when no module has it.
  PackedFunc GetFunction(const std::string& name, bool query_imports = false) const;
  // Like GetFunction with imports, but a missing function is a loom::Error naming the
  // module and the function.
  PackedFunc GetRequiredFunction(const std::string& name) const;
  void Import(Module module) const { node_->Import(std::move(module)); }

 private:
  std::shared_ptr<ModuleNode> node_;
};

// Loads a shared library exported by codegen (dlopen). Functions are resolved by their
// symbol name and must be defined by the library itself. Before returning, the backend-
// service globals of c_backend_api.h that the library defines are pointed at this runtime,
// and the modules its LOOM_IMPORTS_SYMBOL blob holds (device code) are loaded by their
// loaders and imported.
// A missing file, a file that is not a shared library for this machine, and a truncated or
// corrupt library are loom::Errors naming the path.
Module LoadModuleFromFile(const std::string& path);
// The checks LoadModuleFromFile makes of the file before loading it: a regular file, an ELF
// shared library for this machine whose headers fit in the file.
void CheckLibraryFile(const std::string& path);

// The architecture a shared library was built for, as MachineName spells it ("x86_64",
// "aarch64"; "... (32-bit)" or "(big-endian)" added for such a file); a file without an ELF
// header is a loom::Error naming it.
std::string LibraryArchitecture(const std::string& path);
// The architecture this runtime runs on, in the same spelling.
std::string HostArchitecture();

// Makes a module from the bytes a code generator serialized it to (one import of an exported
// library). Loaders register by the type key the serializer wrote; "dso" (a shared library's
// bytes) is built in. A device runtime registers its own ("cuda", ...) when it loads.
using ModuleLoader = std::function<Module(const std::string& bytes)>;
void RegisterModuleLoader(const std::string& type_key, ModuleLoader loader);
// A loom::Error naming `what` and the known type keys when none is registered for `type_key`.
Module LoadModuleFromBytes(const std::string& type_key, const std::string& bytes,
                           const std::string& what);

// Sets each backend-service global (LOOM_*_SYMBOL in c_backend_api.h) that `find_global`
// resolves to a non-null address, to this runtime's implementation, and the module-context
// global to `context`, the module that holds the code (its imports are what
// LoomBackendCallPacked calls); globals it does not find are skipped. Every loader of
// generated code (this file's dlopen loader, the JIT) calls it before running the code.
void InitBackendServices(const std::function<void*(const char* symbol)>& find_global,
                         ModuleNode* context);

}  // namespace loom::runtime
