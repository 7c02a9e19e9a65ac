// The pattern notation of rewrite_rules_dsl.h and the assembled rule table.
#include <functional>

#include "arith/rewrite_rules.h"
#include "arith/rewrite_rules_dsl.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/structural.h"

namespace loom::arith {
namespace rule_dsl {
namespace {
// Any count above one works: matching ignores it (see rewrite_rules.h).
constexpr int kPlaceholderLanes = 4;
}  // namespace

Pat::Pat(int value) : e(IntImm(DataType::Int(32), value)) {}

const PatternVars& Vars() {
  static const PatternVars vars{
      Var("x"), Var("y"), Var("z"), Var("w"), Var("v"),
      Var("c1"), Var("c2"), Var("c3"),
      Var("p", DataType::Bool()), Var("q", DataType::Bool())};
  return vars;
}

const Pat kTrue = Pat(IntImm(DataType::Bool(), 1));
const Pat kFalse = Pat(IntImm(DataType::Bool(), 0));

Pat operator+(Pat a, Pat b) { return Add(a.e, b.e); }
Pat operator-(Pat a, Pat b) { return Sub(a.e, b.e); }
Pat operator*(Pat a, Pat b) { return Mul(a.e, b.e); }
Pat operator==(Pat a, Pat b) { return EQ(a.e, b.e); }
Pat operator!=(Pat a, Pat b) { return NE(a.e, b.e); }
Pat operator<(Pat a, Pat b) { return LT(a.e, b.e); }
Pat operator<=(Pat a, Pat b) { return LE(a.e, b.e); }
Pat operator>(Pat a, Pat b) { return GT(a.e, b.e); }
Pat operator>=(Pat a, Pat b) { return GE(a.e, b.e); }
Pat operator&&(Pat a, Pat b) { return And(a.e, b.e); }
Pat operator||(Pat a, Pat b) { return Or(a.e, b.e); }
Pat operator!(Pat a) { return Not(a.e); }
Pat truncdiv(Pat a, Pat b) { return Div(a.e, b.e); }
Pat truncmod(Pat a, Pat b) { return Mod(a.e, b.e); }
Pat floordiv(Pat a, Pat b) { return FloorDiv(a.e, b.e); }
Pat floormod(Pat a, Pat b) { return FloorMod(a.e, b.e); }
Pat min(Pat a, Pat b) { return Min(a.e, b.e); }
Pat max(Pat a, Pat b) { return Max(a.e, b.e); }
Pat select(Pat condition, Pat true_value, Pat false_value) {
  return Select(condition.e, true_value.e, false_value.e);
}
Pat broadcast(Pat value) { return Broadcast(value.e, kPlaceholderLanes); }
Pat ramp(Pat base, Pat stride) { return Ramp(base.e, stride.e, kPlaceholderLanes); }

}  // namespace rule_dsl

const std::vector<RewriteRule>& AllRewriteRules() {
  static const std::vector<RewriteRule> rules = [] {
    std::vector<RewriteRule> all;
    rule_dsl::RuleList list(&all);
    rule_dsl::AddArithRules(list);
    rule_dsl::AddDivModRules(list);
    rule_dsl::AddMinMaxRules(list);
    rule_dsl::AddCompareRules(list);
    rule_dsl::AddLogicRules(list);
    rule_dsl::AddVectorRules(list);
    return all;
  }();
  return rules;
}

bool IsConstPatternVar(const Var& var) {
  const rule_dsl::PatternVars& v = rule_dsl::Vars();
  return var.same_as(v.c1.e) || var.same_as(v.c2.e) || var.same_as(v.c3.e);
}

bool RuleHoldsForUnsigned(const RewriteRule& rule) {
  std::vector<PrimExpr> lhs_subtractions;
  PostOrderVisit(rule.lhs, [&](const ObjectRef& node) {
    if (node.as<SubNode>()) lhs_subtractions.push_back(Downcast<PrimExpr>(node));
  });
  // Constant-only subtractions fold (or the rewrite is refused when they leave the type).
  auto only_constants = [](const PrimExpr& e) {
    bool constant = true;
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (node.as<VarNode>() && !IsConstPatternVar(Downcast<Var>(node))) {
        constant = false;
      }
    });
    return constant;
  };
  bool holds = true;
  PostOrderVisit(rule.rhs, [&](const ObjectRef& node) {
    if (!node.as<SubNode>()) return;
    PrimExpr sub = Downcast<PrimExpr>(node);
    if (only_constants(sub)) return;
    for (const PrimExpr& seen : lhs_subtractions) {
      if (StructuralEqual(seen, sub)) return;
    }
    holds = false;
  });
  return holds;
}

}  // namespace loom::arith
