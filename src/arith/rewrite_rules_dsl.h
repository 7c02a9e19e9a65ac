// A small notation for writing rewrite rules as they read on paper: `(x + c1) + c2`
// builds the raw pattern Add(Add(x, c1), c2) (never folded or retyped), so the rule tables
// in rewrite_rules_*.cc stay one line per rule. Only the rule tables include this header.
#pragma once

#include <string>
#include <vector>

#include "arith/rewrite_rules.h"

namespace loom::arith::rule_dsl {

// A pattern expression. Integer literals become int32 pattern literals (which match
// constants of equal value in any integer type).
struct Pat {
  PrimExpr e;
  Pat(PrimExpr expr) : e(std::move(expr)) {}  // NOLINT(google-explicit-constructor)
  Pat(int value);                             // NOLINT(google-explicit-constructor)
};

// The shared pattern variables: general integers, integer constants, and booleans.
struct PatternVars {
  Pat x, y, z, w, v;
  Pat c1, c2, c3;
  Pat p, q;
};
const PatternVars& Vars();

extern const Pat kTrue;
extern const Pat kFalse;

Pat operator+(Pat a, Pat b);
Pat operator-(Pat a, Pat b);
Pat operator*(Pat a, Pat b);
Pat operator==(Pat a, Pat b);
Pat operator!=(Pat a, Pat b);
Pat operator<(Pat a, Pat b);
Pat operator<=(Pat a, Pat b);
Pat operator>(Pat a, Pat b);
Pat operator>=(Pat a, Pat b);
Pat operator&&(Pat a, Pat b);
Pat operator||(Pat a, Pat b);
Pat operator!(Pat a);
Pat truncdiv(Pat a, Pat b);
Pat truncmod(Pat a, Pat b);
Pat floordiv(Pat a, Pat b);
Pat floormod(Pat a, Pat b);
Pat min(Pat a, Pat b);
Pat max(Pat a, Pat b);
Pat select(Pat condition, Pat true_value, Pat false_value);
// Vector patterns: the lane count is a placeholder that matches any (see rewrite_rules.h).
Pat broadcast(Pat value);
Pat ramp(Pat base, Pat stride);

// Appends rules to one table.
class RuleList {
 public:
  explicit RuleList(std::vector<RewriteRule>* rules) : rules_(rules) {}
  void operator()(std::string name, Pat lhs, Pat rhs, Pat condition = kTrue) {
    rules_->push_back({std::move(name), lhs.e, rhs.e, condition.e});
  }

 private:
  std::vector<RewriteRule>* rules_;
};

// The tables, one per family of root kinds.
void AddArithRules(RuleList& rule);
void AddDivModRules(RuleList& rule);
void AddMinMaxRules(RuleList& rule);
void AddCompareRules(RuleList& rule);
void AddLogicRules(RuleList& rule);
void AddVectorRules(RuleList& rule);

}  // namespace loom::arith::rule_dsl
