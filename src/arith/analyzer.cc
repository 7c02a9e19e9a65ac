#include "loom/arith/analyzer.h"

#include "loom/ir/expr_ops.h"

namespace loom::arith {

Analyzer::Analyzer()
    : const_int_bound(this),
      modular_set(this),
      rewrite_simplify(this),
      canonical_simplify(this),
      int_set(this) {}

void Analyzer::Bind(const Var& var, const PrimExpr& expr, bool allow_override) {
  PrimExpr value = Simplify(expr);
  const_int_bound.Update(var, const_int_bound(value), allow_override);
  modular_set.Update(var, modular_set(value), allow_override);
  rewrite_simplify.Update(var, value, allow_override);
  canonical_simplify.Update(var, value, allow_override);
}

void Analyzer::Bind(const Var& var, const Range& range, bool allow_override) {
  int64_t extent = 0;
  if (IsConstInt(range->extent, &extent) && extent == 1) {
    Bind(var, range->min, allow_override);
  } else {
    const_int_bound.Bind(var, range, allow_override);
    if (allow_override) {
      // A loop variable reused with a new range must forget an earlier extent-1 binding.
      modular_set.Update(var, ModularSet::Everything(), true);
      rewrite_simplify.Update(var, PrimExpr(), true);
      canonical_simplify.Update(var, PrimExpr(), true);
    }
  }
}

bool Analyzer::CanProveGreaterEqual(const PrimExpr& expr, int64_t lower_bound) {
  if (const_int_bound(expr).min_value >= lower_bound) return true;
  return const_int_bound(Simplify(expr)).min_value >= lower_bound;
}

bool Analyzer::CanProveLess(const PrimExpr& expr, int64_t upper_bound) {
  if (const_int_bound(expr).max_value < upper_bound) return true;
  return const_int_bound(Simplify(expr)).max_value < upper_bound;
}

bool Analyzer::CanProveEqual(const PrimExpr& lhs, const PrimExpr& rhs) {
  return CanProve(lhs == rhs);
}

bool Analyzer::CanProve(const PrimExpr& condition) {
  PrimExpr simplified = Simplify(condition);
  if (is_const_true(simplified)) return true;
  // A comparison of integers is proven when the bounds of the difference decide it.
  auto difference_bound = [&](const PrimExpr& a, const PrimExpr& b) {
    return const_int_bound(canonical_simplify(a - b));
  };
  if (!simplified.dtype().is_scalar()) return false;
  if (const auto* n = simplified.as<LTNode>(); n && n->a.dtype().is_int()) {
    return difference_bound(n->a, n->b).max_value < 0;
  }
  if (const auto* n = simplified.as<LENode>(); n && n->a.dtype().is_int()) {
    return difference_bound(n->a, n->b).max_value <= 0;
  }
  if (const auto* n = simplified.as<GTNode>(); n && n->a.dtype().is_int()) {
    return difference_bound(n->a, n->b).min_value > 0;
  }
  if (const auto* n = simplified.as<GENode>(); n && n->a.dtype().is_int()) {
    return difference_bound(n->a, n->b).min_value >= 0;
  }
  if (const auto* n = simplified.as<NENode>(); n && n->a.dtype().is_int()) {
    ConstIntBound b = difference_bound(n->a, n->b);
    return b.min_value > 0 || b.max_value < 0;
  }
  return false;
}

PrimExpr Analyzer::Simplify(const PrimExpr& expr, int steps) {
  PrimExpr result = expr;
  for (int i = 0; i < steps; ++i) {
    result = rewrite_simplify(result);
    if (result.as<IntImmNode>() || result.as<FloatImmNode>()) return result;
    result = canonical_simplify(result);
    if (result.as<IntImmNode>() || result.as<FloatImmNode>()) return result;
  }
  return result;
}

std::function<void()> Analyzer::EnterConstraint(const PrimExpr& constraint) {
  PrimExpr fact = rewrite_simplify(constraint);
  std::function<void()> exit_bound = const_int_bound.EnterConstraint(fact);
  std::function<void()> exit_modular = modular_set.EnterConstraint(fact);
  std::function<void()> exit_rewrite = rewrite_simplify.EnterConstraint(fact);
  return [=]() {
    if (exit_rewrite) exit_rewrite();
    if (exit_modular) exit_modular();
    if (exit_bound) exit_bound();
  };
}

ConstraintContext::ConstraintContext(Analyzer* analyzer, PrimExpr constraint)
    : exit_(analyzer->EnterConstraint(constraint)) {}

ConstraintContext::~ConstraintContext() {
  if (exit_) exit_();
}

}  // namespace loom::arith
