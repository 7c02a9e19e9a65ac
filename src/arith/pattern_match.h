// Matching rule patterns (rewrite_rules.h) against expressions, and building a rule's
// replacement or condition from the bindings of a match.
#pragma once

#include <utility>
#include <vector>

#include "loom/ir/node.h"

namespace loom::arith {

class PatternMatch {
 public:
  // Matches `pattern` against `expr` from scratch; on success the bindings describe the
  // match. Pattern variables bound twice must bind equal expressions (structurally).
  bool Match(const PrimExpr& pattern, const PrimExpr& expr);

  // Binds a pattern variable directly (for instantiating a pattern without matching).
  void Bind(const Var& pattern_var, PrimExpr value);
  void BindLanes(int lanes) { lanes_ = lanes; }

  // Builds `pattern` over the bindings with the folding builders of expr_ops.h. Integer
  // literals take `type_hint`'s type where no operand beside them fixes one (bool literals
  // stay bool). Returns an undefined expression where the rewrite must not happen: constant
  // arithmetic that would leave its type, a literal the type cannot hold, a division by a
  // zero constant.
  PrimExpr Instantiate(const PrimExpr& pattern, DataType type_hint) const;
  // The same with the raw node constructors: nothing folds. For tests that compare a
  // pattern as written with its replacement.
  PrimExpr InstantiateRaw(const PrimExpr& pattern, DataType type_hint) const;

  // The integer type the match works in: that of the first non-bool binding (int32 if none).
  DataType IntegerType() const;
  // Whether every binding is an integer or bool expression (rules never touch floats).
  bool BindsOnlyIntegers() const;
  const std::vector<std::pair<Var, PrimExpr>>& bindings() const { return bindings_; }

 private:
  bool MatchNode(const PrimExpr& pattern, const PrimExpr& expr);
  bool MatchLanes(int lanes);
  const PrimExpr* Lookup(const Var& pattern_var) const;

  std::vector<std::pair<Var, PrimExpr>> bindings_;
  int lanes_ = 0;  // the lane count bound by Ramp/Broadcast patterns; 0 while unbound
};

// The operands of a binary node (Add ... Or); false for other kinds.
bool BinaryOperands(const PrimExpr& expr, PrimExpr* a, PrimExpr* b);
// Builds a binary node of `kind` with the folding builders of expr_ops.h.
PrimExpr BuildFoldedBinary(NodeKind kind, const PrimExpr& a, const PrimExpr& b);
bool IsDivisionKind(NodeKind kind);
bool IsComparisonKind(NodeKind kind);

}  // namespace loom::arith
