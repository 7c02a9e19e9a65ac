// Every rule of the rewrite table, checked two ways:
//   * semantics: at many random points (int32, int64, and uint32 where the rule applies to
//     unsigned types) where the condition holds and the pattern is defined, the replacement
//     (built as the simplifier builds it) is defined and has the same value;
//   * reachability: simplifying an instance of the pattern, under the rule's condition as a
//     constraint, makes the rule fire (so no rule is shadowed by earlier ones or dead).
#include "arith/rewrite_rules.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "arith/pattern_match.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"

namespace loom::arith {
namespace {

constexpr int kLanes = 4;
constexpr int kSamplesPerType = 1000;
constexpr int kMinCheckedPoints = 20;

std::vector<Var> PatternVarsOf(const PrimExpr& pattern) {
  std::vector<Var> vars;
  PostOrderVisit(pattern, [&](const ObjectRef& node) {
    if (!node.as<VarNode>()) return;
    Var var = Downcast<Var>(node);
    for (const Var& seen : vars) {
      if (seen.same_as(var)) return;
    }
    vars.push_back(var);
  });
  return vars;
}

bool IsVectorPattern(const PrimExpr& pattern) {
  bool vector = false;
  PostOrderVisit(pattern, [&](const ObjectRef& node) {
    if (node.as<RampNode>() || node.as<BroadcastNode>()) vector = true;
  });
  return vector;
}

// Lane `lane` of a vector expression built from ramps and broadcasts of scalars.
class LaneExtractor : public ExprMutator {
 public:
  explicit LaneExtractor(int lane) : lane_(lane) {}
  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const RampNode* op) override {
    PrimExpr base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    return Add(base, Mul(stride, IntImm(stride.dtype(), lane_)));
  }
  PrimExpr VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }

 private:
  int lane_;
};

// The value of `e` at `point`, lane by lane for vectors; nullopt where any lane is undefined.
std::optional<std::vector<int64_t>> Evaluate(const PrimExpr& e, const VarValueMap& point) {
  std::vector<int64_t> lanes;
  int count = e.dtype().lanes();
  for (int lane = 0; lane < count; ++lane) {
    PrimExpr scalar = count == 1 ? e : LaneExtractor(lane)(e);
    std::optional<int64_t> value = EvalInt(scalar, point);
    if (!value) return std::nullopt;
    lanes.push_back(*value);
  }
  return lanes;
}

// One random instance of a rule's pattern variables: constants bound to constants, the
// others to fresh variables with values at `point`.
struct Instance {
  PatternMatch match;
  VarValueMap point;
};

Instance RandomInstance(const RewriteRule& rule, DataType type, std::mt19937_64& rng) {
  bool is_unsigned = type.is_uint();
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(is_unsigned ? std::max<int64_t>(lo, 0) : lo,
                                                  hi)(rng);
  };
  Instance instance;
  if (IsVectorPattern(rule.lhs)) instance.match.BindLanes(kLanes);
  for (const Var& pattern_var : PatternVarsOf(rule.lhs)) {
    if (IsConstPatternVar(pattern_var)) {
      instance.match.Bind(pattern_var, IntImm(type, uniform(-12, 12)));
    } else if (pattern_var.dtype().is_bool()) {
      Var fresh(pattern_var->name_hint, DataType::Bool());
      instance.match.Bind(pattern_var, fresh);
      instance.point[fresh] = uniform(0, 1);
    } else {
      Var fresh(pattern_var->name_hint, type);
      instance.match.Bind(pattern_var, fresh);
      instance.point[fresh] = uniform(-20, 20);
    }
  }
  return instance;
}

DataType RootType(const RewriteRule& rule, DataType type) {
  int lanes = IsVectorPattern(rule.lhs) ? kLanes : 1;
  if (rule.lhs.dtype().is_bool()) return DataType::Bool(lanes);
  return type.with_lanes(lanes);
}

std::string Describe(const VarValueMap& point) {
  std::string text;
  for (const auto& [var, value] : point) text += var->name_hint + "=" + std::to_string(value) + " ";
  return text;
}

TEST(RewriteRules, NamesAreUniqueAndPrefixedByRootKind) {
  std::set<std::string> names;
  for (const RewriteRule& rule : AllRewriteRules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << "duplicate rule name " << rule.name;
    std::string root = NodeKindName(rule.lhs.kind());
    EXPECT_EQ(rule.name.rfind(root + "/", 0), 0u) << rule.name << " is rooted at " << root;
  }
  EXPECT_GE(AllRewriteRules().size(), 150u);
}

TEST(RewriteRules, ReplacementsAndConditionsUseOnlyPatternVariables) {
  for (const RewriteRule& rule : AllRewriteRules()) {
    std::vector<Var> bound = PatternVarsOf(rule.lhs);
    for (const PrimExpr& side : {rule.rhs, rule.condition}) {
      for (const Var& var : PatternVarsOf(side)) {
        bool found = false;
        for (const Var& b : bound) found = found || b.same_as(var);
        EXPECT_TRUE(found) << rule.name << " uses " << var << " which its pattern does not bind";
      }
    }
    EXPECT_TRUE(rule.condition.dtype().is_bool()) << rule.name;
  }
}

// The semantic check of one rule in one type; returns how many points were compared.
int CheckRuleSemantics(const RewriteRule& rule, DataType type, std::mt19937_64& rng) {
  int checked = 0;
  for (int sample = 0; sample < kSamplesPerType; ++sample) {
    Instance instance = RandomInstance(rule, type, rng);
    PrimExpr lhs = instance.match.InstantiateRaw(rule.lhs, RootType(rule, type));
    PrimExpr condition = instance.match.Instantiate(rule.condition, DataType::Bool());
    if (!lhs.defined() || !condition.defined()) continue;
    std::optional<int64_t> holds = EvalInt(condition, instance.point);
    if (!holds || *holds == 0) continue;
    std::optional<std::vector<int64_t>> expected = Evaluate(lhs, instance.point);
    if (!expected) continue;
    // Where the replacement cannot be built (a constant leaves the type) the simplifier does
    // not rewrite, so there is nothing to compare.
    PrimExpr rhs = instance.match.Instantiate(rule.rhs, lhs.dtype());
    if (!rhs.defined()) continue;
    std::optional<std::vector<int64_t>> actual = Evaluate(rhs, instance.point);
    ++checked;
    if (actual != expected) {
      ADD_FAILURE() << rule.name << " in " << type << ": " << ToScript(lhs) << " = "
                    << (*expected)[0] << " but " << ToScript(rhs) << " = "
                    << (actual ? std::to_string((*actual)[0]) : std::string("undefined"))
                    << " at " << Describe(instance.point);
      return checked;
    }
  }
  return checked;
}

TEST(RewriteRules, EveryRuleAgreesWithItsPatternWhereDefined) {
  std::mt19937_64 rng(20261122);
  for (const RewriteRule& rule : AllRewriteRules()) {
    int checked = CheckRuleSemantics(rule, DataType::Int(32), rng);
    EXPECT_GE(checked, kMinCheckedPoints) << rule.name << ": too few points satisfy its condition";
    CheckRuleSemantics(rule, DataType::Int(64), rng);
    if (RuleHoldsForUnsigned(rule)) CheckRuleSemantics(rule, DataType::UInt(32), rng);
  }
}

// Tries instances until simplifying one makes the rule fire.
bool RuleFires(const RewriteRule& rule, int rule_index, std::mt19937_64& rng, std::string* last) {
  constexpr int kAttempts = 400;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Instance instance = RandomInstance(rule, DataType::Int(32), rng);
    PrimExpr lhs = instance.match.InstantiateRaw(rule.lhs, RootType(rule, DataType::Int(32)));
    PrimExpr condition = instance.match.Instantiate(rule.condition, DataType::Bool());
    if (!lhs.defined() || !condition.defined() || is_const_false(condition)) continue;
    // A condition over general variables must be satisfiable at the sampled point, or the
    // constraint below would be a contradiction.
    std::optional<int64_t> holds = EvalInt(condition, instance.point);
    if (holds && *holds == 0) continue;
    Analyzer analyzer;
    ConstraintContext context(&analyzer, condition);
    PrimExpr simplified = analyzer.rewrite_simplify(lhs);
    if (analyzer.rewrite_simplify.RuleHits()[rule_index] > 0) return true;
    *last = ToScript(lhs) + " -> " + ToScript(simplified) + " under " + ToScript(condition);
  }
  return false;
}

TEST(RewriteRules, EveryRuleFiresOnAnInstanceOfItsPattern) {
  std::mt19937_64 rng(7);
  const std::vector<RewriteRule>& rules = AllRewriteRules();
  for (int i = 0; i < static_cast<int>(rules.size()); ++i) {
    std::string last;
    EXPECT_TRUE(RuleFires(rules[i], i, rng, &last))
        << rules[i].name << " never fired; last attempt: " << last;
  }
}

}  // namespace
}  // namespace loom::arith
