// Exact evaluation of scalar integer/bool expressions at a point: the oracle that fuzzers
// and property tests compare simplified expressions against. Arithmetic is exact in int64
// and checked against the expression's dtype range: a value that would wrap, a division by
// zero, an unbound variable or a node kind it does not evaluate yields std::nullopt
// (undefined at that point) instead of a wrong number.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "loom/ir/node.h"

namespace loom {

using VarValueMap = std::unordered_map<Var, int64_t, ObjectHash, ObjectEqual>;

// Select and if_then_else evaluate only the chosen branch.
std::optional<int64_t> EvalInt(const PrimExpr& expr, const VarValueMap& values);

}  // namespace loom
