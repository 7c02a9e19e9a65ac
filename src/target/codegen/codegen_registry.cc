// The registry of code generators (loom/target/codegen.h).
#include <map>
#include <mutex>

#include "loom/support/error.h"
#include "loom/target/codegen.h"

namespace loom::codegen {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, CodegenEntry> by_kind;
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();  // never destroyed: entries outlive all users
  return *registry;
}

std::string Known(const Registry& registry, bool kinds) {
  std::string known;
  for (const auto& [kind, entry] : registry.by_kind) {
    known += (known.empty() ? "" : ", ") + (kinds ? kind : entry.module_type);
  }
  return known;
}

}  // namespace

void RegisterCodegen(CodegenEntry entry) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  LOOM_ICHECK(!registry.by_kind.count(entry.target_kind))
      << "two code generators for target kind '" << entry.target_kind << "'";
  std::string kind = entry.target_kind;
  registry.by_kind.emplace(kind, std::move(entry));
}

const CodegenEntry& CodegenForTarget(const Target& target) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.by_kind.find(target.kind());
  LOOM_CHECK_USER(it != registry.by_kind.end())
      << "build: no code generator for target kind '" << target.kind() << "' (target '"
      << target.str() << "'); code generators exist for: " << Known(registry, true);
  return it->second;
}

const CodegenEntry& CodegenForModule(const runtime::Module& module, const std::string& path) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const CodegenEntry* found = nullptr;
  for (const auto& [kind, entry] : registry.by_kind) {
    if (module.defined() && entry.module_type == module->type_key()) found = &entry;
  }
  LOOM_CHECK_USER(found != nullptr)
      << "ExportLibrary('" << path << "'): the module is "
      << (module.defined() ? "a '" + module->type_key() + "' module" : "undefined")
      << "; only modules made by loom::build can be exported (types: " << Known(registry, false)
      << ")";
  return *found;
}

}  // namespace loom::codegen
