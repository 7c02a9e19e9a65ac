// The graph IRModule: named functions; a model is the function "main".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loom/graph/expr.h"

namespace loom::graph {

class IRModule {
 public:
  IRModule() = default;
  // A module whose "main" is `main`.
  static IRModule FromFunction(Function main);

  // Adds (or, with `replace`, replaces) the function `name`.
  void Add(const std::string& name, Function func, bool replace = false);
  // The function named `name`; a loom::Error listing the module's names if there is none.
  const Function& Lookup(const std::string& name) const;
  const Function& main() const { return Lookup("main"); }
  bool Contains(const std::string& name) const { return functions_.count(name) != 0; }
  const std::map<std::string, Function>& functions() const { return functions_; }

  // Names of main's results (one per tensor it returns, in order), as the artifact's outputs
  // carry them; an empty name (or none set) is "output<i>". Passes keep them.
  void SetOutputNames(std::vector<std::string> names) { output_names_ = std::move(names); }
  const std::vector<std::string>& output_names() const { return output_names_; }

 private:
  std::map<std::string, Function> functions_;
  std::vector<std::string> output_names_;
};

// Every function's text, "def @name" headers in name order.
std::string ToText(const IRModule& module);

}  // namespace loom::graph
