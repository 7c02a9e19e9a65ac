// The canonical simplifier: brings integer index expressions into a sum-of-products normal
// form (constant-coefficient sums of monomials; floordiv/floormod by constants kept as
// split terms so that floordiv(x, 4) * 4 + floormod(x, 4) folds back to x), then prints the
// form back as an expression. Equal index expressions get equal canonical forms far more
// often than with rewriting alone.
//
//   floordiv(i * 16 + j, 16) * 64 + floormod(i * 16 + j, 16) * 4 + 3  ->  i * 64 + j * 4 + 3
//   floordiv(x * 6 + y * 4, 2) -> x * 3 + y * 2          x * 2 + 1 < y * 2 + 4 -> x < y + 2
//
// Terms print positive before negative, heavier coefficients first, otherwise in order of
// first appearance. Scalar signed integers are simplified; other types are only walked into.
// Truncated division becomes floored division where the analyzer knows the dividend's
// sign; division by a non-constant stays a division of simplified operands. Bounds and
// modular sets come from the parent Analyzer. The result equals the input wherever the
// input is defined; where the analyzer's bounds say the rewritten arithmetic may wrap its
// type when the input did not, the input is returned unchanged.
#pragma once

#include <memory>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

class CanonicalSimplifier {
 public:
  explicit CanonicalSimplifier(Analyzer* parent);
  ~CanonicalSimplifier();

  PrimExpr operator()(const PrimExpr& expr);
  // Substitutes `value` for `var` from now on. Rebinding to a different value is a user
  // error unless allow_override is set; an undefined value removes the binding.
  void Update(const Var& var, const PrimExpr& value, bool allow_override = false);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
