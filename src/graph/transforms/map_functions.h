// What the function-local passes (SimplifyInference, FoldConstant, FoldScaleAxis,
// EliminateCommonSubexpr, DeadCodeElimination) share: applying a rewrite to every function
// of a module.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "loom/graph/module.h"
#include "loom/graph/transform.h"

namespace loom::graph {

// The module with each function replaced by rewrite(function), which returns the very same
// function when it changes nothing (so RunPasses sees an unchanged module as unchanged).
inline IRModule MapFunctions(const IRModule& module,
                             const std::function<Expr(const Function&)>& rewrite) {
  IRModule result;
  for (const auto& [name, function] : module.functions()) {
    result.Add(name, Downcast<Function>(rewrite(function)));
  }
  return result;
}

// The pass `name` that rewrites every function with a fresh `Mutator` (an ExprMutator),
// constructed from `args`.
template <typename Mutator, typename... Args>
Pass MutatorPass(std::string name, Args... args) {
  return {std::move(name), [args...](const IRModule& module) {
            return MapFunctions(module, [&](const Function& function) {
              return Mutator(args...).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
