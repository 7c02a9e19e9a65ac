// IntSetAnalyzer: the set of values an expression takes over variable sets, node by node.
// Operands evaluate first; interval arithmetic (int_set_arith.h) combines their sets.
// When every operand is a single point the result is the single point of the rebuilt
// expression, so the parts that do not depend on relaxed variables stay exact (i * 16 for
// an i outside dom_map). Symbolic ends are simplified once, at the end.
#include "arith/bound_math.h"
#include "arith/int_set_arith.h"
#include "loom/arith/analyzer.h"
#include "loom/arith/int_set.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"

namespace loom::arith {

namespace {

DataType ElementType(const PrimExpr& e) { return e.dtype().element_of(); }

// The expression with every variable whose set is a single point replaced by that point.
// Notes whether a variable ranging over more than one value remains, or a value that is
// not a function of the variables (a memory read, a call with effects): then the
// expression is not a single point of the set.
class PointSubstituter : public ExprMutator {
 public:
  using SetLookup = std::function<const IntSet*(const Var&)>;
  explicit PointSubstituter(SetLookup lookup) : lookup_(std::move(lookup)) {}

  bool is_point() const { return !relaxed_ && !reads_state_; }

  PrimExpr VisitExpr_(const VarNode* op) override {
    Var var(op);
    const IntSet* set = lookup_(var);
    if (!set) return var;
    if (set->is_single_point()) return set->min();
    relaxed_ = true;
    return var;
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    reads_state_ = true;
    return ExprMutator::VisitExpr_(op);
  }
  PrimExpr VisitExpr_(const CallNode* op) override {
    if (op->op->effect != CallEffect::kPure) reads_state_ = true;
    return ExprMutator::VisitExpr_(op);
  }

 private:
  SetLookup lookup_;
  bool relaxed_ = false;
  bool reads_state_ = false;
};

class IntSetEvaluator : public ExprFunctor<IntSet(const PrimExpr&)> {
 public:
  IntSetEvaluator(Analyzer* analyzer, const VarIntSetMap& dom_map)
      : analyzer_(analyzer), arith_(analyzer), dom_map_(dom_map) {}

  IntSet VisitExpr(const PrimExpr& e) override {
    // Interval reasoning is about integers; anything else is a point or unknown.
    if (!ElementType(e).is_integer_like()) return Opaque(e);
    return ExprFunctor::VisitExpr(e);
  }

  IntSet VisitExpr_(const IntImmNode* op) override { return IntSet::SinglePoint(Self(op)); }

  IntSet VisitExpr_(const VarNode* op) override {
    if (const IntSet* set = Lookup(Var(op))) return *set;
    if (op->dtype.is_vector()) return Opaque(Self(op));
    return IntSet::SinglePoint(Self(op));
  }

  IntSet VisitExpr_(const CastNode* op) override {
    IntSet value = VisitExpr(op->value);
    if (value.is_nothing()) return value;
    DataType to = ElementType(Self(op)), from = ElementType(op->value);
    if (value.is_single_point()) {
      if (IsOwnPoint(value, op->value) && !IsConstInt(op->value)) {
        return IntSet::SinglePoint(Self(op));
      }
      return IntSet::SinglePoint(cast(to, value.min()));
    }
    if (!from.is_integer_like()) return Opaque(Self(op));
    if (bound_math::CastPreservesValues(from, to)) {
      return IntSet::Interval(value.has_lower_bound() ? cast(to, value.min()) : PrimExpr(),
                              value.has_upper_bound() ? cast(to, value.max()) : PrimExpr());
    }
    // A narrowing cast keeps the values that fit; others wrap anywhere in the type.
    std::optional<ConstIntBound> exact = IntervalArith::ExactConst(value, from);
    if (exact && to.is_representable(exact->min_value) && to.is_representable(exact->max_value)) {
      return IntervalArith::FromConst(*exact, to);
    }
    return IntervalArith::FromConst(bound_math::TypeRange(to), to);
  }

  IntSet VisitExpr_(const AddNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) { return arith_.Add(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const SubNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) { return arith_.Sub(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const MulNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) { return arith_.Mul(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const DivNode* op) override {
    return Binary(
        op, [&](const IntSet& a, const IntSet& b) { return arith_.TruncDiv(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const ModNode* op) override {
    return Binary(
        op, [&](const IntSet& a, const IntSet& b) { return arith_.TruncMod(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const FloorDivNode* op) override {
    return Binary(
        op, [&](const IntSet& a, const IntSet& b) { return arith_.FloorDiv(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const FloorModNode* op) override {
    return Binary(
        op, [&](const IntSet& a, const IntSet& b) { return arith_.FloorMod(a, b, Type(op)); });
  }
  IntSet VisitExpr_(const MinNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) { return arith_.Min(a, b); });
  }
  IntSet VisitExpr_(const MaxNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) { return arith_.Max(a, b); });
  }

  // A comparison is decided when the difference of its operands has a known sign.
  IntSet VisitExpr_(const EQNode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a == b; },
        [](const ConstIntBound& d) {
          return Decide(d.min_value == 0 && d.max_value == 0, d.min_value > 0 || d.max_value < 0);
        });
  }
  IntSet VisitExpr_(const NENode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a != b; },
        [](const ConstIntBound& d) {
          return Decide(d.min_value > 0 || d.max_value < 0, d.min_value == 0 && d.max_value == 0);
        });
  }
  IntSet VisitExpr_(const LTNode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a < b; },
        [](const ConstIntBound& d) { return Decide(d.max_value < 0, d.min_value >= 0); });
  }
  IntSet VisitExpr_(const LENode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a <= b; },
        [](const ConstIntBound& d) { return Decide(d.max_value <= 0, d.min_value > 0); });
  }
  IntSet VisitExpr_(const GTNode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a > b; },
        [](const ConstIntBound& d) { return Decide(d.min_value > 0, d.max_value <= 0); });
  }
  IntSet VisitExpr_(const GENode* op) override {
    return Compare(
        op, [](PrimExpr a, PrimExpr b) { return a >= b; },
        [](const ConstIntBound& d) { return Decide(d.min_value >= 0, d.max_value < 0); });
  }

  IntSet VisitExpr_(const AndNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) {
      if (a.is_single_point() && b.is_single_point()) {
        return IntSet::SinglePoint(a.min() && b.min());
      }
      ConstIntBound x = arith_.Relax(a, DataType::Bool()), y = arith_.Relax(b, DataType::Bool());
      return Decide(x.min_value >= 1 && y.min_value >= 1, x.max_value <= 0 || y.max_value <= 0);
    });
  }
  IntSet VisitExpr_(const OrNode* op) override {
    return Binary(op, [&](const IntSet& a, const IntSet& b) {
      if (a.is_single_point() && b.is_single_point()) {
        return IntSet::SinglePoint(a.min() || b.min());
      }
      ConstIntBound x = arith_.Relax(a, DataType::Bool()), y = arith_.Relax(b, DataType::Bool());
      return Decide(x.min_value >= 1 || y.min_value >= 1, x.max_value <= 0 && y.max_value <= 0);
    });
  }
  IntSet VisitExpr_(const NotNode* op) override {
    IntSet a = VisitExpr(op->a);
    if (a.is_nothing()) return a;
    if (a.is_single_point()) {
      if (IsOwnPoint(a, op->a) && !IsConstInt(op->a)) return IntSet::SinglePoint(Self(op));
      return IntSet::SinglePoint(!a.min());
    }
    ConstIntBound x = arith_.Relax(a, DataType::Bool());
    return Decide(x.max_value <= 0, x.min_value >= 1);
  }

  IntSet VisitExpr_(const SelectNode* op) override {
    return Choose(Self(op), op->condition, op->true_value, op->false_value);
  }

  IntSet VisitExpr_(const LetNode* op) override {
    IntSet value = VisitExpr(op->value);
    // A Let inside another Let of the same variable shadows it for its body.
    std::optional<IntSet> shadowed;
    if (auto it = let_sets_.find(op->var); it != let_sets_.end()) shadowed = it->second;
    let_sets_.insert_or_assign(op->var, value);
    IntSet body = VisitExpr(op->body);
    if (shadowed) {
      let_sets_.insert_or_assign(op->var, *shadowed);
    } else {
      let_sets_.erase(op->var);
    }
    return body;
  }

  // All lanes: base + stride * [0, lanes - 1].
  IntSet VisitExpr_(const RampNode* op) override {
    DataType t = ElementType(Self(op));
    IntSet lane_offsets =
        arith_.Mul(VisitExpr(op->stride),
                   IntSet::Interval(make_zero(t), make_const(t, int64_t{op->lanes - 1})), t);
    return arith_.Add(VisitExpr(op->base), lane_offsets, t);
  }

  IntSet VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }

  IntSet VisitExpr_(const CallNode* op) override {
    const std::string& name = op->op->name;
    if (name == "likely") return VisitExpr(op->args[0]);
    if (name == "if_then_else") return Choose(Self(op), op->args[0], op->args[1], op->args[2]);
    return Opaque(Self(op));
  }

  IntSet VisitExprDefault_(const Object* op) override { return Opaque(PrimExpr::FromObject(op)); }

 private:
  static PrimExpr Self(const Object* op) { return PrimExpr::FromObject(op); }
  static DataType Type(const Object* op) { return ElementType(Self(op)); }

  // A node whose operands are their own single points is its own single point, unless the
  // operands are all constants: those are folded, so that the rules of the nodes above see
  // 7 rather than (-1 + 8).
  static bool IsOwnPoint(const IntSet& set, const PrimExpr& operand) {
    return set.is_single_point() && set.min().same_as(operand);
  }

  // A truth value: 1 when `is_true`, 0 when `is_false`, else either.
  static IntSet Decide(bool is_true, bool is_false) {
    DataType t = DataType::Bool();
    if (is_true) return IntSet::SinglePoint(make_const(t, int64_t{1}));
    if (is_false) return IntSet::SinglePoint(make_const(t, int64_t{0}));
    return IntSet::Interval(make_const(t, int64_t{0}), make_const(t, int64_t{1}));
  }

  const IntSet* Lookup(const Var& var) const {
    if (auto it = let_sets_.find(var); it != let_sets_.end()) return &it->second;
    if (auto it = dom_map_.find(var); it != dom_map_.end()) return &it->second;
    return nullptr;
  }

  // Operands first; single points stay single points of the rebuilt node.
  template <typename NodeT, typename Combine>
  IntSet Binary(const NodeT* op, Combine combine) {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
    if (IsOwnPoint(a, op->a) && IsOwnPoint(b, op->b) && !(IsConstInt(op->a) && IsConstInt(op->b))) {
      return IntSet::SinglePoint(Self(op));
    }
    return combine(a, b);
  }

  // Decided by the sign of the difference of the operands' sets.
  template <typename NodeT, typename Build, typename Verdict>
  IntSet Compare(const NodeT* op, Build build, Verdict verdict) {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
    if (a.is_single_point() && b.is_single_point()) {
      if (IsOwnPoint(a, op->a) && IsOwnPoint(b, op->b) &&
          !(IsConstInt(op->a) && IsConstInt(op->b))) {
        return IntSet::SinglePoint(Self(op));
      }
      return IntSet::SinglePoint(build(a.min(), b.min()));
    }
    DataType t = ElementType(op->a);
    auto ca = IntervalArith::ExactConst(a, t), cb = IntervalArith::ExactConst(b, t);
    if (ca && cb) return verdict(bound_math::Sub(*ca, *cb));
    // Symbolic ends: the sign of their difference. Only for signed types, where the
    // difference is a plain number (an unsigned one cannot go below zero).
    if (!t.is_int()) return Decide(false, false);
    IntSet difference = arith_.Sub(a, b, t);
    if (difference.is_nothing()) return difference;
    return verdict(RelaxSimplified(difference, t));
  }

  // Relax after simplifying symbolic ends, so that a difference such as
  // (i * 16 + 3) - (i * 16) is seen as the constant it is.
  ConstIntBound RelaxSimplified(const IntSet& set, DataType t) {
    auto simplified = [&](const PrimExpr& end) {
      return end.defined() && !end.as<IntImmNode>() ? analyzer_->Simplify(end) : end;
    };
    return arith_.Relax(IntSet::Interval(simplified(set.min()), simplified(set.max())), t);
  }

  IntSet Choose(const PrimExpr& self, const PrimExpr& condition, const PrimExpr& true_value,
                const PrimExpr& false_value) {
    IntSet c = VisitExpr(condition);
    if (c.is_nothing()) return c;
    IntSet t = VisitExpr(true_value), f = VisitExpr(false_value);
    if (c.is_single_point() && t.is_single_point() && f.is_single_point()) {
      if (IsOwnPoint(c, condition) && IsOwnPoint(t, true_value) && IsOwnPoint(f, false_value) &&
          !IsConstInt(condition)) {
        return IntSet::SinglePoint(self);
      }
      if (self.as<SelectNode>()) return IntSet::SinglePoint(select(c.min(), t.min(), f.min()));
    }
    ConstIntBound verdict = arith_.Relax(c, DataType::Bool());
    if (verdict.min_value >= 1) return t;
    if (verdict.max_value <= 0) return f;
    return arith_.Hull(t, f);
  }

  // A node the interval rules do not cover: a single point when it depends on no relaxed
  // variable, else the constant bound the analyzer knows for it.
  IntSet Opaque(const PrimExpr& e) {
    PointSubstituter substituter([this](const Var& var) { return Lookup(var); });
    PrimExpr substituted = substituter(e);
    if (substituter.is_point() && e.dtype().is_scalar()) return IntSet::SinglePoint(substituted);
    DataType t = ElementType(e);
    if (!t.is_integer_like()) return IntSet::Everything();
    return IntervalArith::FromConst(analyzer_->const_int_bound(substituted), t);
  }

  Analyzer* analyzer_;
  IntervalArith arith_;
  const VarIntSetMap& dom_map_;
  // Sets of the variables of the Lets being evaluated.
  VarIntSetMap let_sets_;
};

IntSet SimplifyEnds(Analyzer* analyzer, const IntSet& set) {
  if (set.is_nothing()) return set;
  auto simplified = [&](const PrimExpr& end) {
    return end.defined() && !end.as<IntImmNode>() ? analyzer->Simplify(end) : end;
  };
  if (set.is_single_point()) return IntSet::SinglePoint(simplified(set.min()));
  return IntSet::Interval(simplified(set.min()), simplified(set.max()));
}

}  // namespace

IntSet IntSetAnalyzer::operator()(const PrimExpr& expr, const VarIntSetMap& dom_map) {
  return SimplifyEnds(parent_, IntSetEvaluator(parent_, dom_map).VisitExpr(expr));
}

IntSet IntSetAnalyzer::operator()(const Range& range, const VarIntSetMap& dom_map) {
  IntSetEvaluator evaluator(parent_, dom_map);
  IntSet first = evaluator.VisitExpr(range->min);
  IntSet last = evaluator.VisitExpr(range->min + (range->extent - 1));
  if (first.is_nothing() || last.is_nothing()) return IntSet::Nothing();
  return SimplifyEnds(parent_, IntSet::Interval(first.min(), last.max()));
}

}  // namespace loom::arith
