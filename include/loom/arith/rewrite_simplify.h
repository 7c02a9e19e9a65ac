// The rewrite simplifier: bottom-up rewriting by a table of pattern rules (rewrite_rules.h),
// with side conditions checked against the Analyzer's bounds and modular sets, plus the
// literal facts of the enclosing constraint scopes.
//
// Every node is simplified after its children: constant operands fold, then the rules whose
// pattern is rooted at the node's kind are tried in table order; the first that matches and
// whose condition is proven replaces the node, and the replacement is simplified again (its
// new nodes only; bounded depth). Rules apply to integer and bool expressions; float
// expressions only fold constants. A bool expression known from an enclosing constraint
// becomes true (or false, for its negation).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

class RewriteSimplifier {
 public:
  explicit RewriteSimplifier(Analyzer* parent);
  ~RewriteSimplifier();

  PrimExpr operator()(const PrimExpr& expr);
  // From now on replaces `var` by `value`. Rebinding a variable to a different value is an
  // internal error unless allow_override is set; an undefined value removes the binding.
  void Update(const Var& var, const PrimExpr& value, bool allow_override = false);
  // Records `constraint` (each conjunct) as true, and its negation as false, until the
  // returned function is called.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

  // How many times each rule fired, indexed like AllRewriteRules() (for tests and tuning).
  const std::vector<int64_t>& RuleHits() const;
  // Hits of the rule with this name; an internal error if no rule has it.
  int64_t RuleHitCount(const std::string& rule_name) const;
  void ResetRuleHits();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
