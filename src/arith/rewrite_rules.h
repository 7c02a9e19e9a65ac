// The rewrite simplifier's rules, as data. A rule is three expressions over pattern
// variables: when `lhs` matches an expression (binding the pattern variables) and
// `condition`, instantiated with those bindings, is proven by the Analyzer, the expression
// is replaced by `rhs` instantiated with the same bindings (built with the folding builders,
// so constant sub-terms fold). Because rules are plain IR, one table serves the simplifier,
// the per-rule tests (tests/unit/arith) and the Z3 proofs (tests/prove): nothing is
// written twice.
//
// Pattern variables are ordinary Vars created by the rule table. A *constant* pattern
// variable (IsConstPatternVar) matches only an integer constant; any other pattern variable
// matches any expression. Literal constants in a pattern match constants of equal value in
// any integer type; in a replacement they take the integer type of the matched expression.
// The lane count of a Ramp or Broadcast in a pattern is a placeholder: it matches any lane
// count, the same one throughout a match, and the replacement uses the matched count.
//
// Rules hold over the integers (floored and truncated division exactly as defined, with
// negative operands); a rewrite whose constant arithmetic would overflow the type is not
// applied, and rules only apply to integer and bool expressions, never to floats.
#pragma once

#include <string>
#include <vector>

#include "loom/ir/node.h"

namespace loom::arith {

struct RewriteRule {
  std::string name;    // unique: "<root kind>/<what it does>", e.g. "Add/fold_const_assoc"
  PrimExpr lhs;        // the pattern matched against an expression
  PrimExpr rhs;        // the replacement
  PrimExpr condition;  // a bool expression over the pattern variables; const true if none
};

// Every rule, grouped by the node kind at the root of lhs; within a kind, earlier rules are
// tried first.
const std::vector<RewriteRule>& AllRewriteRules();

// Whether `var` is a pattern variable that matches only integer constants.
bool IsConstPatternVar(const Var& var);

// Whether the rule may be applied to unsigned expressions. Unsigned subtraction is undefined
// below zero, so a rule is refused there when its replacement subtracts where its pattern
// did not (the replacement could step below zero where the original stayed above).
bool RuleHoldsForUnsigned(const RewriteRule& rule);

}  // namespace loom::arith
