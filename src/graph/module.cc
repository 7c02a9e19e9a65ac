#include "loom/graph/module.h"

namespace loom::graph {

IRModule IRModule::FromFunction(Function main) {
  IRModule module;
  module.Add("main", std::move(main));
  return module;
}

void IRModule::Add(const std::string& name, Function func, bool replace) {
  LOOM_CHECK_USER(func.defined()) << "IRModule::Add('" << name << "'): no function";
  LOOM_CHECK_USER(replace || !functions_.count(name))
      << "IRModule::Add: the module already has a function '" << name << "'";
  functions_[name] = std::move(func);
}

const Function& IRModule::Lookup(const std::string& name) const {
  auto it = functions_.find(name);
  if (it != functions_.end()) return it->second;
  std::string names;
  for (const auto& [known, func] : functions_) names += (names.empty() ? "" : ", ") + known;
  LOOM_THROW << "the graph module has no function '" << name << "' (it has "
             << (names.empty() ? "none" : names) << ")";
}

std::string ToText(const IRModule& module) {
  std::string text;
  for (const auto& [name, func] : module.functions()) text += "def @" + name + " " + ToText(func);
  return text;
}

}  // namespace loom::graph
