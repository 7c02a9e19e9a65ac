#include "loom/arith/rewrite_simplify.h"

#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "arith/pattern_match.h"
#include "arith/rewrite_rules.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {

namespace {

// A replacement is simplified again, and its replacement in turn, at most this deep: the
// rules shrink or normalize expressions, so real chains are short; the bound guards against
// a pair of rules undoing each other.
constexpr int kMaxRewriteDepth = 16;

// The rule table indexed for the driver.
struct RuleIndex {
  std::vector<std::vector<int>> by_root_kind;
  std::vector<bool> holds_for_unsigned;
  std::unordered_map<std::string, int> by_name;
};

const RuleIndex& GetRuleIndex() {
  static const RuleIndex index = [] {
    RuleIndex built;
    const std::vector<RewriteRule>& rules = AllRewriteRules();
    built.by_root_kind.resize(static_cast<size_t>(NodeKind::kOther) + 1);
    for (int i = 0; i < static_cast<int>(rules.size()); ++i) {
      const RewriteRule& rule = rules[i];
      built.by_root_kind[static_cast<size_t>(rule.lhs.kind())].push_back(i);
      built.holds_for_unsigned.push_back(RuleHoldsForUnsigned(rule));
      LOOM_ICHECK(built.by_name.emplace(rule.name, i).second)
          << "two rewrite rules are named " << rule.name;
    }
    return built;
  }();
  return index;
}

bool IsConstant(const PrimExpr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

bool UsesVar(const PrimExpr& e, const Var& var) {
  bool used = false;
  PostOrderVisit(e, [&](const ObjectRef& node) {
    if (node.same_as(var)) used = true;
  });
  return used;
}

}  // namespace

class RewriteSimplifier::Impl : public ExprMutator {
 public:
  explicit Impl(Analyzer* parent) : hits_(AllRewriteRules().size(), 0), parent_(parent) {}

  using ExprMutator::VisitExpr_;

  PrimExpr VisitExpr(const PrimExpr& e) override {
    if (simplified_.count(e.get())) return e;
    return Rewrite(ExprMutator::VisitExpr(e));
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = var_map_.find(Var(static_cast<const Object*>(op)));
    return it == var_map_.end() ? PrimExpr(op) : it->second;
  }

  PrimExpr VisitExpr_(const LetNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    if (IsConstant(value) || value.as<VarNode>()) {
      // A trivial value is substituted into the body.
      auto outer = var_map_.find(op->var);
      std::optional<PrimExpr> saved;
      if (outer != var_map_.end()) saved = outer->second;
      var_map_[op->var] = value;
      PrimExpr body = VisitExpr(op->body);
      if (saved) var_map_[op->var] = *saved;
      else var_map_.erase(op->var);
      return body;
    }
    PrimExpr body = VisitExpr(op->body);
    if (!UsesVar(body, op->var)) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return PrimExpr(op);
    return Let(op->var, value, body);
  }

  // likely() of a decided test is that value, and an if_then_else with a decided condition
  // is its branch (what LoopPartition leaves in the main part of a padded copy).
  PrimExpr VisitExpr_(const CallNode* op) override {
    PrimExpr e = ExprMutator::VisitExpr_(op);
    const auto* call = e.as<CallNode>();
    if (call == nullptr) return e;
    const std::string& name = call->op->name;
    if (name == "likely" && call->args.size() == 1 && IsConstant(call->args[0])) {
      return call->args[0];
    }
    if (name == "if_then_else" && call->args.size() == 3 && call->args[0].dtype().is_scalar()) {
      if (is_const_true(call->args[0])) return call->args[1];
      if (is_const_false(call->args[0])) return call->args[2];
    }
    return e;
  }

  void Update(const Var& var, const PrimExpr& value, bool allow_override) {
    if (!value.defined()) {
      var_map_.erase(var);
      return;
    }
    auto it = var_map_.find(var);
    if (it != var_map_.end() && !allow_override) {
      LOOM_ICHECK(StructuralEqual(it->second, value))
          << "rewrite simplifier: variable " << var << " is bound to " << it->second
          << " and cannot be rebound to " << value << " without allow_override";
    }
    var_map_[var] = value;
  }

  std::function<void()> EnterConstraint(const PrimExpr& constraint) {
    size_t mark = facts_.size();
    AddFact(VisitExpr(constraint), true);
    return [this, mark] { facts_.resize(mark); };
  }

  std::vector<int64_t> hits_;

 private:
  struct Fact {
    PrimExpr expr;
    bool value = true;
  };

  // `e`'s children are simplified; simplifies its root.
  PrimExpr Rewrite(const PrimExpr& node) {
    PrimExpr e = FoldConstants(node);
    if (IsConstant(e)) return e;
    PrimExpr rewritten;
    if (TryRules(e, &rewritten)) return rewritten;
    if (RampWithinOneBlock(e, &rewritten)) return rewritten;
    if (e.dtype().is_bool() && e.dtype().is_scalar()) {
      if (std::optional<bool> known = KnownFact(e)) return MakeBool(*known);
    }
    return e;
  }

  static PrimExpr MakeBool(bool value) { return value ? const_true() : const_false(); }

  // Folds a node whose operands are all constants (the only rewrite done on floats).
  PrimExpr FoldConstants(const PrimExpr& e) {
    if (!e.dtype().is_scalar()) return e;
    PrimExpr a, b;
    if (BinaryOperands(e, &a, &b)) {
      if (!IsConstant(a) || !IsConstant(b)) return e;
      int64_t divisor = 0;
      if (IsDivisionKind(e.kind()) && IsConstInt(b, &divisor) && divisor == 0) return e;
      PrimExpr folded = BuildFoldedBinary(e.kind(), a, b);
      return IsConstant(folded) ? folded : e;
    }
    if (const auto* node = e.as<NotNode>(); node && IsConstant(node->a)) return !node->a;
    if (const auto* node = e.as<SelectNode>(); node && IsConstInt(node->condition)) {
      return is_const_false(node->condition) ? node->false_value : node->true_value;
    }
    if (const auto* node = e.as<CastNode>(); node && IsConstant(node->value)) {
      PrimExpr folded = cast(node->dtype, node->value);
      return IsConstant(folded) ? folded : e;
    }
    return e;
  }

  bool TryRules(const PrimExpr& e, PrimExpr* out) {
    const RuleIndex& index = GetRuleIndex();
    const std::vector<RewriteRule>& rules = AllRewriteRules();
    for (int r : index.by_root_kind[static_cast<size_t>(e.kind())]) {
      const RewriteRule& rule = rules[r];
      PatternMatch match;
      if (!match.Match(rule.lhs, e) || !match.BindsOnlyIntegers()) continue;
      if (match.IntegerType().is_uint() && !index.holds_for_unsigned[r]) continue;
      if (!is_const_true(rule.condition)) {
        PrimExpr condition = match.Instantiate(rule.condition, DataType::Bool());
        if (!condition.defined() || !Prove(condition)) continue;
      }
      PrimExpr replacement = match.Instantiate(rule.rhs, e.dtype());
      if (!replacement.defined() || replacement.dtype() != e.dtype()) continue;
      ++hits_[r];
      *out = Resimplify(replacement, match);
      return true;
    }
    return false;
  }

  // Simplifies the nodes a rule built; the bound sub-expressions it reuses are simplified.
  PrimExpr Resimplify(const PrimExpr& replacement, const PatternMatch& match) {
    if (rewrite_depth_ >= kMaxRewriteDepth) return replacement;
    // Undone on every exit, exceptions included.
    struct Scope {
      Impl* self;
      std::vector<const Object*> marked;
      ~Scope() {
        for (const Object* node : marked) self->simplified_.erase(node);
        --self->rewrite_depth_;
      }
    } scope{this, {}};
    ++rewrite_depth_;
    for (const auto& [pattern_var, value] : match.bindings()) {
      if (simplified_.insert(value.get()).second) scope.marked.push_back(value.get());
    }
    return VisitExpr(replacement);
  }

  // Proves a rule's instantiated condition with facts, bounds and modular sets only.
  bool Prove(const PrimExpr& condition) {
    int64_t value = 0;
    if (IsConstInt(condition, &value)) return value != 0;
    if (const auto* node = condition.as<AndNode>()) return Prove(node->a) && Prove(node->b);
    if (const auto* node = condition.as<OrNode>()) return Prove(node->a) || Prove(node->b);
    if (std::optional<bool> known = KnownFact(condition)) return *known;
    PrimExpr a, b;
    if (!IsComparisonKind(condition.kind()) || !BinaryOperands(condition, &a, &b)) return false;
    if (!a.dtype().is_scalar() || !(a.dtype().is_int() || a.dtype().is_uint())) return false;
    NodeKind kind = condition.kind();
    if (ImpliedByFacts(kind, a, b)) return true;
    if (kind == NodeKind::EQ || kind == NodeKind::NE) {
      if (std::optional<bool> equal = RemainderEquals(a, b)) {
        return kind == NodeKind::EQ ? *equal : !*equal;
      }
    }
    ConstIntBound d = DifferenceBound(a, b);
    switch (kind) {
      case NodeKind::LT: return d.max_value < 0;
      case NodeKind::LE: return d.max_value <= 0;
      case NodeKind::GT: return d.min_value > 0;
      case NodeKind::GE: return d.min_value >= 0;
      case NodeKind::EQ: return d.min_value == 0 && d.max_value == 0;
      case NodeKind::NE: return d.min_value > 0 || d.max_value < 0;
      default: return false;
    }
  }

  // a <= b follows from a known a < b; a != b from a known a < b or b < a. (The facts hold
  // simplified comparisons, which are LT and LE, so these are the implications that occur.)
  bool ImpliedByFacts(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
    auto known_true = [&](const PrimExpr& fact) { return KnownFact(fact) == true; };
    if (kind == NodeKind::LE) return known_true(LT(a, b));
    if (kind == NodeKind::NE) return known_true(LT(a, b)) || known_true(LT(b, a));
    return false;
  }

  // Bounds of a - b (exact: the bound analysis works in int64 with saturation).
  ConstIntBound DifferenceBound(const PrimExpr& a, const PrimExpr& b) {
    int64_t value = 0;
    if (IsConstInt(b, &value) && value == 0) return parent_->const_int_bound(a);
    return parent_->const_int_bound(a - b);
  }

  // floordiv / floormod of a ramp by a constant c when every lane falls in one block of c: the
  // quotient is the base's, broadcast, and the remainder a ramp from the base's (a vectorized
  // index into a blocked layout: (16 * x + ramp(0, 1, 8)) // 8). Not a rule of the tables, whose
  // conditions cannot name the lane count. Decided from the base's modular set: base =
  // coeff * k + b, so base mod c is b mod g plus a multiple of g = gcd(coeff, c), at most
  // c - g + b mod g (exactly b mod c for a constant base, coeff 0); the last lane adds
  // stride * (lanes - 1), which must stay below c.
  bool RampWithinOneBlock(const PrimExpr& e, PrimExpr* out) {
    const bool quotient = e.kind() == NodeKind::FloorDiv;
    if (!quotient && e.kind() != NodeKind::FloorMod) return false;
    PrimExpr a, b;
    if (!BinaryOperands(e, &a, &b)) return false;
    const auto* ramp = a.as<RampNode>();
    const auto* divisor = b.as<BroadcastNode>();
    int64_t stride = 0, c = 0;
    if (!ramp || !divisor || !IsConstInt(ramp->stride, &stride) ||
        !IsConstInt(divisor->value, &c) || stride < 0 || c <= 0) {
      return false;
    }
    const ModularSet m = parent_->modular_set(ramp->base);
    const int64_t g = std::gcd(m.coeff, c);
    const int64_t largest_remainder = c - g + const_int::FloorMod(m.base, g);
    // stride * (lanes - 1) <= room, divided so that it cannot overflow.
    const int64_t room = c - 1 - largest_remainder;
    if (room < 0 || (ramp->lanes > 1 && stride > room / (ramp->lanes - 1))) return false;
    if (quotient) {
      *out = Broadcast(VisitExpr(floordiv(ramp->base, divisor->value)), ramp->lanes);
    } else {
      *out = Ramp(VisitExpr(floormod(ramp->base, divisor->value)), ramp->stride, ramp->lanes);
    }
    return true;
  }

  // Decides floormod(x, c) == k from x's modular set, when it does.
  std::optional<bool> RemainderEquals(const PrimExpr& a, const PrimExpr& b) {
    const auto* mod = a.as<FloorModNode>();
    int64_t divisor = 0, expected = 0;
    if (!mod || !IsConstInt(mod->b, &divisor) || divisor <= 0 || !IsConstInt(b, &expected)) {
      return std::nullopt;
    }
    ModularSet m = parent_->modular_set(mod->a);
    if (m.coeff % divisor != 0) return std::nullopt;
    return const_int::FloorMod(m.base, divisor) == expected;
  }

  std::optional<bool> KnownFact(const PrimExpr& e) const {
    for (auto it = facts_.rbegin(); it != facts_.rend(); ++it) {
      if (StructuralEqual(it->expr, e)) return it->value;
    }
    return std::nullopt;
  }

  void AddFact(const PrimExpr& fact, bool value) {
    if (!fact.dtype().is_bool() || !fact.dtype().is_scalar() || IsConstant(fact)) return;
    if (const auto* node = fact.as<AndNode>(); node && value) {
      AddFact(node->a, true);
      AddFact(node->b, true);
      return;
    }
    if (const auto* node = fact.as<OrNode>(); node && !value) {
      AddFact(node->a, false);
      AddFact(node->b, false);
      return;
    }
    if (const auto* node = fact.as<NotNode>()) {
      AddFact(node->a, !value);
      return;
    }
    // The negation in simplified form, so that `4 <= x` is known false under `x < 4`.
    PrimExpr negated = VisitExpr(Not(fact));
    facts_.push_back({fact, value});
    if (!IsConstant(negated)) facts_.push_back({negated, !value});
  }

  Analyzer* parent_;
  std::unordered_map<Var, PrimExpr, ObjectHash, ObjectEqual> var_map_;
  std::vector<Fact> facts_;
  // Sub-expressions known to be simplified already: the reused parts of a replacement.
  std::unordered_set<const Object*> simplified_;
  int rewrite_depth_ = 0;
};

RewriteSimplifier::RewriteSimplifier(Analyzer* parent) : impl_(std::make_unique<Impl>(parent)) {}
RewriteSimplifier::~RewriteSimplifier() = default;

PrimExpr RewriteSimplifier::operator()(const PrimExpr& expr) { return impl_->VisitExpr(expr); }

void RewriteSimplifier::Update(const Var& var, const PrimExpr& value, bool allow_override) {
  impl_->Update(var, value, allow_override);
}

std::function<void()> RewriteSimplifier::EnterConstraint(const PrimExpr& constraint) {
  return impl_->EnterConstraint(constraint);
}

const std::vector<int64_t>& RewriteSimplifier::RuleHits() const { return impl_->hits_; }

int64_t RewriteSimplifier::RuleHitCount(const std::string& rule_name) const {
  const auto& by_name = GetRuleIndex().by_name;
  auto it = by_name.find(rule_name);
  LOOM_ICHECK(it != by_name.end()) << "no rewrite rule is named " << rule_name;
  return impl_->hits_[it->second];
}

void RewriteSimplifier::ResetRuleHits() {
  std::fill(impl_->hits_.begin(), impl_->hits_.end(), 0);
}

}  // namespace loom::arith
