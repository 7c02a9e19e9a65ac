// IRModule: the unit that passes transform and code generators compile -- a set of
// PrimFuncs, each under a unique global name (the symbol it is exported as).
//
//   IRModule mod;
//   mod.Add("add_one", func);
//   PrimFunc f = mod.Lookup("add_one");
//
// A module is a value: copies share the (immutable) functions, so a pass that returns a
// modified copy never disturbs the module it was given. Functions iterate in name order, so
// printing and compiling are deterministic.
#pragma once

#include <map>
#include <string>

#include "loom/ir/node.h"
#include "loom/ir/structural.h"

namespace loom {

class IRModule {
 public:
  IRModule() = default;
  explicit IRModule(std::map<std::string, PrimFunc> functions);

  // Adds `func` as `name`. A name already present is a user error unless `replace` is set.
  void Add(const std::string& name, PrimFunc func, bool replace = false);
  // The function named `name`; a user error listing the module's names if there is none.
  const PrimFunc& Lookup(const std::string& name) const;
  bool Contains(const std::string& name) const { return functions_.count(name) != 0; }
  void Remove(const std::string& name);

  const std::map<std::string, PrimFunc>& functions() const { return functions_; }
  size_t size() const { return functions_.size(); }

 private:
  std::map<std::string, PrimFunc> functions_;
};

// Same names, and structurally equal functions under each name.
bool StructuralEqual(const IRModule& lhs, const IRModule& rhs);
size_t StructuralHash(const IRModule& module);

// TVMScript-like text: an `@I.ir_module` class with one `@T.prim_func` per function.
std::string ToScript(const IRModule& module);

}  // namespace loom
