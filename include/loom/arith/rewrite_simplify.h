// The rewrite simplifier: bottom-up rewriting by a table of pattern rules (rewrite_rules.h),
// with side conditions checked against the Analyzer's bounds and modular sets, plus the
// literal facts of the enclosing constraint scopes.
#pragma once

#include <functional>
#include <memory>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

class RewriteSimplifier {
 public:
  explicit RewriteSimplifier(Analyzer* parent);
  ~RewriteSimplifier();

  PrimExpr operator()(const PrimExpr& expr);
  // Within the scope, replaces `var` by `value` (and knows the facts of `constraint`).
  void Update(const Var& var, const PrimExpr& value, bool allow_override = false);
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
