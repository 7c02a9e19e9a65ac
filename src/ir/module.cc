#include "loom/ir/module.h"

#include <utility>

#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/support/error.h"

namespace loom {
namespace {

void CheckFunctionName(const std::string& name, const PrimFunc& func) {
  LOOM_CHECK_USER(!name.empty()) << "IRModule::Add: the function name is empty; give every "
                                    "function a non-empty global name";
  LOOM_CHECK_USER(func.defined()) << "IRModule::Add(\"" << name
                                  << "\"): the function is undefined (a null PrimFunc)";
}

std::string NameList(const std::map<std::string, PrimFunc>& functions) {
  if (functions.empty()) return "the module is empty";
  std::string list = "the module has: ";
  bool first = true;
  for (const auto& [name, func] : functions) {
    list += (first ? "" : ", ") + name;
    first = false;
  }
  return list;
}

}  // namespace

IRModule::IRModule(std::map<std::string, PrimFunc> functions) {
  for (auto& [name, func] : functions) CheckFunctionName(name, func);
  functions_ = std::move(functions);
}

void IRModule::Add(const std::string& name, PrimFunc func, bool replace) {
  CheckFunctionName(name, func);
  LOOM_CHECK_USER(replace || !Contains(name))
      << "IRModule::Add(\"" << name << "\"): a function of that name is already in the module; "
      << "pick another name or pass replace = true";
  functions_[name] = std::move(func);
}

const PrimFunc& IRModule::Lookup(const std::string& name) const {
  auto it = functions_.find(name);
  LOOM_CHECK_USER(it != functions_.end())
      << "IRModule::Lookup(\"" << name << "\"): no function of that name; "
      << NameList(functions_);
  return it->second;
}

void IRModule::Remove(const std::string& name) {
  LOOM_CHECK_USER(functions_.erase(name) == 1)
      << "IRModule::Remove(\"" << name << "\"): no function of that name; "
      << NameList(functions_);
}

bool StructuralEqual(const IRModule& lhs, const IRModule& rhs) {
  if (lhs.size() != rhs.size()) return false;
  auto r = rhs.functions().begin();
  for (const auto& [name, func] : lhs.functions()) {
    if (name != r->first || !StructuralEqual(func, r->second)) return false;
    ++r;
  }
  return true;
}

size_t StructuralHash(const IRModule& module) {
  size_t hash = module.size();
  for (const auto& [name, func] : module.functions()) {
    hash = hash * 1000003u ^ std::hash<std::string>()(name);
    hash = hash * 1000003u ^ StructuralHash(func);
  }
  return hash;
}

std::string ToScript(const IRModule& module) {
  std::string text = "@I.ir_module\nclass Module:\n";
  if (module.size() == 0) return text + "    pass\n";
  bool first = true;
  for (const auto& [name, func] : module.functions()) {
    if (!first) text += "\n";
    first = false;
    // Printed under its module name (the printer takes a function's name from global_symbol).
    Annotations attrs = func->attrs;
    attrs["global_symbol"] = StringImm(name);
    std::string body =
        ToScript(PrimFunc(func->params, func->buffer_map, func->body, func->ret_type, attrs));
    std::string indented;
    size_t start = 0;
    while (start < body.size()) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      std::string line = body.substr(start, end - start);
      indented += line.empty() ? "\n" : "    " + line + "\n";
      start = end + 1;
    }
    text += indented;
  }
  return text;
}

}  // namespace loom
