// The canonical simplifier: brings integer index expressions into a sum-of-products normal
// form (constant-coefficient sums of monomials; floordiv/floormod by constants kept as
// split terms so that floordiv(x, 4) * 4 + floormod(x, 4) folds back to x), then prints the
// form back as an expression. Equal index expressions get equal canonical forms far more
// often than with rewriting alone.
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
  void Update(const Var& var, const PrimExpr& value, bool allow_override = false);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
