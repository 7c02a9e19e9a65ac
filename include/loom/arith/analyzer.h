// One Analyzer shares variable bindings and scoped facts between all arithmetic analyses:
//
//   arith::Analyzer ana;
//   ana.Bind(i, Range(0, 16));
//   ana.Simplify(floordiv(i, 16))            // -> 0
//   ana.CanProve(i * 4 + 3 < 64)             // -> true
//   { arith::ConstraintContext ctx(&ana, j < i);  ... facts hold only in here ... }
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "loom/arith/canonical_simplify.h"
#include "loom/arith/const_int_bound.h"
#include "loom/arith/int_set.h"
#include "loom/arith/modular_set.h"
#include "loom/arith/rewrite_simplify.h"
#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer {
 public:
  Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  ConstIntBoundAnalyzer const_int_bound;
  ModularSetAnalyzer modular_set;
  RewriteSimplifier rewrite_simplify;
  CanonicalSimplifier canonical_simplify;
  IntSetAnalyzer int_set;

  // var == expr from now on (substituted by the simplifiers; bounds follow expr's).
  void Bind(const Var& var, const PrimExpr& expr, bool allow_override = false);
  // var in [range.min, range.min + range.extent).
  void Bind(const Var& var, const Range& range, bool allow_override = false);

  bool CanProveGreaterEqual(const PrimExpr& expr, int64_t lower_bound);
  bool CanProveLess(const PrimExpr& expr, int64_t upper_bound);
  bool CanProveEqual(const PrimExpr& lhs, const PrimExpr& rhs);
  // True only when `condition` holds for every value the variables may take. False means
  // "not proven", never "disproven".
  bool CanProve(const PrimExpr& condition);

  // Rewrite and canonical simplification, alternated `steps` times.
  PrimExpr Simplify(const PrimExpr& expr, int steps = 2);

 private:
  friend class ConstraintContext;
  std::function<void()> EnterConstraint(const PrimExpr& constraint);
};

// Facts that hold inside an `if` or a loop body: entering adds them to every analysis of the
// Analyzer, leaving (the destructor) removes them. Contexts nest like scopes.
class ConstraintContext {
 public:
  ConstraintContext(Analyzer* analyzer, PrimExpr constraint);
  ~ConstraintContext();
  ConstraintContext(const ConstraintContext&) = delete;
  ConstraintContext& operator=(const ConstraintContext&) = delete;

 private:
  std::function<void()> exit_;
};

}  // namespace loom::arith
