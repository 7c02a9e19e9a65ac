// Rewriting utilities over TIR statements and expressions.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>

#include "loom/ir/functor.h"

namespace loom::tir {

using VarMap = std::unordered_map<Var, PrimExpr, ObjectHash, ObjectEqual>;

// Replaces every use of a variable in `vmap` by its expression (rebuilding only what
// changes; results are not simplified). Variables in defining positions (a loop's or a
// Let's own variable) and inside buffers (data, shape) are left alone: substitution is for
// uses, so callers substitute variables whose definitions they are removing.
PrimExpr Substitute(const PrimExpr& expr, const VarMap& vmap);
Stmt Substitute(const Stmt& stmt, const VarMap& vmap);
// The same with a function: the replacement of a variable, or nullopt to keep it.
PrimExpr Substitute(const PrimExpr& expr,
                    const std::function<std::optional<PrimExpr>(const Var&)>& replace);
Stmt Substitute(const Stmt& stmt,
                const std::function<std::optional<PrimExpr>(const Var&)>& replace);

}  // namespace loom::tir
