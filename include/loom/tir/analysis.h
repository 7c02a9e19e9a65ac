// Small analyses over TIR that passes share.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/ir/node.h"

namespace loom::tir {

// Whether `var` is used (read) anywhere in `node`: an expression or a statement, buffer
// accesses included (an access uses its buffer's data variable).
bool UsesVar(const ObjectRef& node, const Var& var);

// Whether evaluating `expr` can do more than compute a value: it calls an operator or
// external function whose effect is not pure. Loads, and arithmetic that may be undefined
// (a division by zero), count as side-effect free: dropping them is allowed.
bool HasSideEffect(const PrimExpr& expr);

// Whether `expr`'s value depends only on its variables: it reads no buffer and has no
// side effect. Only such expressions may be duplicated, moved or assumed as facts across
// statements that write memory.
bool IsMemoryIndependent(const PrimExpr& expr);

// A statement that does nothing: Evaluate of a side-effect-free expression.
bool IsNoOp(const Stmt& stmt);

// The buffer bound to parameter `index` of `func`, and its extents when they are constant
// (what a caller allocates to call a lowered function); a loom::Error naming the function
// otherwise.
const Buffer& ParamBuffer(const PrimFunc& func, size_t index);
std::vector<int64_t> ConstParamShape(const PrimFunc& func, size_t index);

}  // namespace loom::tir
