#include "loom/arith/const_int_bound.h"

#include <optional>
#include <ostream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/bound_math.h"
#include "loom/ir/functor.h"

namespace loom::arith {

namespace bm = bound_math;

namespace {

ConstIntBound OrTypeRange(const std::optional<ConstIntBound>& bound, DataType t) {
  return bound ? *bound : bm::TypeRange(t);
}

ConstIntBound FromDecision(bool decided_true, bool decided_false) {
  if (decided_true) return ConstIntBound::Single(1);
  if (decided_false) return ConstIntBound::Single(0);
  return {0, 1};
}

}  // namespace

class ConstIntBoundAnalyzer::Impl : public ExprFunctor<ConstIntBound(const PrimExpr&)> {
 public:
  ConstIntBound VisitExpr(const PrimExpr& e) override {
    DataType t = e.dtype();
    if (!t.is_integer_like()) return ConstIntBound::Everything();
    ConstIntBound range = bm::TypeRange(t);
    ConstIntBound bound = bm::Intersect(ExprFunctor::VisitExpr(e), range);
    // Empty only when the expression overflows its type wherever it is evaluated, i.e. it is
    // never defined; answer the type's range rather than an empty interval.
    return bm::IsEmpty(bound) ? range : bound;
  }

  ConstIntBound VisitExpr_(const IntImmNode* op) override {
    return ConstIntBound::Single(op->value);
  }

  ConstIntBound VisitExpr_(const VarNode* op) override { return Lookup(Var(op)); }

  ConstIntBound VisitExpr_(const CastNode* op) override {
    ConstIntBound value = VisitExpr(op->value);
    DataType from = op->value.dtype();
    if (!from.is_integer_like()) return bm::TypeRange(op->dtype);
    if (op->dtype.is_bool()) {
      // Casting to bool tests for non-zero.
      bool never_zero = value.min_value > 0 || value.max_value < 0;
      return FromDecision(never_zero, value == ConstIntBound::Single(0));
    }
    // A narrowing cast wraps: the value survives only if it fits.
    ConstIntBound range = bm::TypeRange(op->dtype);
    bool fits = value.min_value >= range.min_value && value.max_value <= range.max_value;
    return fits ? value : range;
  }

  ConstIntBound VisitExpr_(const AddNode* op) override {
    return bm::Add(VisitExpr(op->a), VisitExpr(op->b));
  }
  ConstIntBound VisitExpr_(const SubNode* op) override {
    return bm::Sub(VisitExpr(op->a), VisitExpr(op->b));
  }
  ConstIntBound VisitExpr_(const MulNode* op) override {
    return bm::Mul(VisitExpr(op->a), VisitExpr(op->b));
  }
  ConstIntBound VisitExpr_(const DivNode* op) override {
    return OrTypeRange(bm::TruncDiv(VisitExpr(op->a), VisitExpr(op->b)), op->dtype);
  }
  ConstIntBound VisitExpr_(const ModNode* op) override {
    return OrTypeRange(bm::TruncMod(VisitExpr(op->a), VisitExpr(op->b)), op->dtype);
  }
  ConstIntBound VisitExpr_(const FloorDivNode* op) override {
    return OrTypeRange(bm::FloorDiv(VisitExpr(op->a), VisitExpr(op->b)), op->dtype);
  }
  ConstIntBound VisitExpr_(const FloorModNode* op) override {
    return OrTypeRange(bm::FloorMod(VisitExpr(op->a), VisitExpr(op->b)), op->dtype);
  }

  ConstIntBound VisitExpr_(const MinNode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
  }
  ConstIntBound VisitExpr_(const MaxNode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
  }

  // Comparisons compare the ends directly: actual values always lie inside int64, so an
  // end at kPosInf/kNegInf compares correctly without any arithmetic.
  ConstIntBound VisitExpr_(const EQNode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return FromDecision(a.is_const() && a == b, Disjoint(a, b));
  }
  ConstIntBound VisitExpr_(const NENode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return FromDecision(Disjoint(a, b), a.is_const() && a == b);
  }
  ConstIntBound VisitExpr_(const LTNode* op) override { return Less(op->a, op->b, false); }
  ConstIntBound VisitExpr_(const LENode* op) override { return Less(op->a, op->b, true); }
  ConstIntBound VisitExpr_(const GTNode* op) override { return Less(op->b, op->a, false); }
  ConstIntBound VisitExpr_(const GENode* op) override { return Less(op->b, op->a, true); }

  ConstIntBound VisitExpr_(const AndNode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return FromDecision(a.min_value > 0 && b.min_value > 0,
                        a.max_value <= 0 || b.max_value <= 0);
  }
  ConstIntBound VisitExpr_(const OrNode* op) override {
    ConstIntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return FromDecision(a.min_value > 0 || b.min_value > 0,
                        a.max_value <= 0 && b.max_value <= 0);
  }
  ConstIntBound VisitExpr_(const NotNode* op) override {
    ConstIntBound a = VisitExpr(op->a);
    return FromDecision(a.max_value <= 0, a.min_value > 0);
  }

  ConstIntBound VisitExpr_(const SelectNode* op) override {
    return Choose(op->condition, op->true_value, op->false_value);
  }

  ConstIntBound VisitExpr_(const RampNode* op) override {
    ConstIntBound offsets = bm::Mul(VisitExpr(op->stride), {0, op->lanes - 1});
    return bm::Add(VisitExpr(op->base), offsets);
  }
  ConstIntBound VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  ConstIntBound VisitExpr_(const ShuffleNode* op) override {
    std::optional<ConstIntBound> result;
    for (const PrimExpr& v : op->vectors) {
      ConstIntBound b = VisitExpr(v);
      result = result ? bm::Union(*result, b) : b;
    }
    return OrTypeRange(result, op->dtype);
  }

  ConstIntBound VisitExpr_(const LetNode* op) override {
    ConstIntBound value = VisitExpr(op->value);
    ScopedBinding binding(this, op->var, value);
    return VisitExpr(op->body);
  }

  ConstIntBound VisitExpr_(const CallNode* op) override {
    const std::string& name = op->op->name;
    if (name == "likely" && op->args.size() == 1) return VisitExpr(op->args[0]);
    if (name == "if_then_else" && op->args.size() == 3) {
      return Choose(op->args[0], op->args[1], op->args[2]);
    }
    if (name == "shift_right" && op->args.size() == 2) return ShiftRight(op);
    if (name == "bitwise_and" && op->args.size() == 2) return BitwiseAnd(op);
    return bm::TypeRange(op->dtype);
  }

  ConstIntBound VisitExprDefault_(const Object*) override { return ConstIntBound::Everything(); }

  // ------------------------------------------------------------------ variable bounds

  ConstIntBound Lookup(const Var& var) const {
    ConstIntBound bound = bm::TypeRange(var.dtype());
    if (var->is_size_var) bound.min_value = std::max<int64_t>(bound.min_value, 0);
    auto it = var_bounds_.find(var);
    if (it == var_bounds_.end()) return bound;
    ConstIntBound narrowed = bm::Intersect(bound, it->second);
    return bm::IsEmpty(narrowed) ? bound : narrowed;
  }

  void Update(const Var& var, const ConstIntBound& bound, bool allow_override) {
    auto it = var_bounds_.find(var);
    if (it != var_bounds_.end() && !allow_override) {
      LOOM_ICHECK(it->second == bound)
          << "ConstIntBoundAnalyzer: variable " << var->name_hint << " is already bound to ["
          << it->second.min_value << ", " << it->second.max_value
          << "]; re-binding it to [" << bound.min_value << ", " << bound.max_value
          << "] needs allow_override";
      return;
    }
    var_bounds_[var] = bound;
  }

  // Bounds replaced by a constraint scope, in order, so leaving it can put them back.
  using UndoLog = std::vector<std::pair<Var, std::optional<ConstIntBound>>>;

  void Restore(const UndoLog& log) {
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->second) {
        var_bounds_[it->first] = *it->second;
      } else {
        var_bounds_.erase(it->first);
      }
    }
  }

  // ------------------------------------------------------------------ constraints

  // Learns what `constraint` (or its negation) says about variables.
  void Assume(const PrimExpr& constraint, bool negated, UndoLog* log) {
    if (!constraint.dtype().is_scalar()) return;
    if (const auto* n = constraint.as<NotNode>()) return Assume(n->a, !negated, log);
    if (const auto* n = constraint.as<AndNode>(); n && !negated) {
      Assume(n->a, false, log);
      Assume(n->b, false, log);
      return;
    }
    if (const auto* n = constraint.as<OrNode>(); n && negated) {
      Assume(n->a, true, log);
      Assume(n->b, true, log);
      return;
    }
    if (const auto* n = constraint.as<LTNode>()) return AssumeLess(n->a, n->b, false, negated, log);
    if (const auto* n = constraint.as<LENode>()) return AssumeLess(n->a, n->b, true, negated, log);
    if (const auto* n = constraint.as<GTNode>()) return AssumeLess(n->b, n->a, false, negated, log);
    if (const auto* n = constraint.as<GENode>()) return AssumeLess(n->b, n->a, true, negated, log);
    if (const auto* n = constraint.as<EQNode>()) return AssumeEqual(n->a, n->b, negated, log);
    if (const auto* n = constraint.as<NENode>()) return AssumeEqual(n->a, n->b, !negated, log);
    if (constraint.as<VarNode>() && constraint.dtype().is_bool()) {
      Narrow(constraint, ConstIntBound::Single(negated ? 0 : 1), log);
    }
  }

 private:
  // Sets a Let variable's bound for the body and puts the previous one back afterwards.
  class ScopedBinding {
   public:
    ScopedBinding(Impl* impl, Var var, const ConstIntBound& bound) : impl_(impl) {
      log_.emplace_back(var, Previous(var));
      impl_->var_bounds_[var] = bound;
    }
    ~ScopedBinding() { impl_->Restore(log_); }
    ScopedBinding(const ScopedBinding&) = delete;
    ScopedBinding& operator=(const ScopedBinding&) = delete;

   private:
    std::optional<ConstIntBound> Previous(const Var& var) const {
      auto it = impl_->var_bounds_.find(var);
      if (it == impl_->var_bounds_.end()) return std::nullopt;
      return it->second;
    }
    Impl* impl_;
    UndoLog log_;
  };

  static bool Disjoint(const ConstIntBound& a, const ConstIntBound& b) {
    return a.max_value < b.min_value || b.max_value < a.min_value;
  }

  // a < b (or a <= b when or_equal).
  ConstIntBound Less(const PrimExpr& lhs, const PrimExpr& rhs, bool or_equal) {
    ConstIntBound a = VisitExpr(lhs), b = VisitExpr(rhs);
    if (or_equal) return FromDecision(a.max_value <= b.min_value, a.min_value > b.max_value);
    return FromDecision(a.max_value < b.min_value, a.min_value >= b.max_value);
  }

  ConstIntBound Choose(const PrimExpr& condition, const PrimExpr& then_value,
                       const PrimExpr& else_value) {
    ConstIntBound c = VisitExpr(condition);
    if (c.min_value > 0) return VisitExpr(then_value);
    if (c.max_value <= 0) return VisitExpr(else_value);
    return bm::Union(VisitExpr(then_value), VisitExpr(else_value));
  }

  // An arithmetic right shift is a floored division by 2^shift.
  ConstIntBound ShiftRight(const CallNode* op) {
    ConstIntBound shift = VisitExpr(op->args[1]);
    constexpr int64_t kMaxExactShift = 62;
    if (shift.min_value < 0 || shift.max_value > kMaxExactShift) {
      return bm::TypeRange(op->dtype);
    }
    ConstIntBound divisor{int64_t{1} << shift.min_value, int64_t{1} << shift.max_value};
    return OrTypeRange(bm::FloorDiv(VisitExpr(op->args[0]), divisor), op->dtype);
  }

  // x & m lies in [0, m] when m >= 0, whatever x is.
  ConstIntBound BitwiseAnd(const CallNode* op) {
    ConstIntBound a = VisitExpr(op->args[0]), b = VisitExpr(op->args[1]);
    bool a_nonneg = a.min_value >= 0, b_nonneg = b.min_value >= 0;
    if (a_nonneg && b_nonneg) return {0, std::min(a.max_value, b.max_value)};
    if (a_nonneg) return {0, a.max_value};
    if (b_nonneg) return {0, b.max_value};
    return bm::TypeRange(op->dtype);
  }

  // a < b, or a <= b; negated: b <= a, or b < a.
  void AssumeLess(const PrimExpr& a, const PrimExpr& b, bool or_equal, bool negated,
                  UndoLog* log) {
    if (negated) return AssumeLess(b, a, !or_equal, false, log);
    if (!a.dtype().is_integer_like() || !b.dtype().is_integer_like()) return;
    const ConstIntBound gap = ConstIntBound::Single(or_equal ? 0 : 1);
    Narrow(a, {ConstIntBound::kNegInf, bm::Sub(VisitExpr(b), gap).max_value}, log);
    Narrow(b, {bm::Add(VisitExpr(a), gap).min_value, ConstIntBound::kPosInf}, log);
  }

  void AssumeEqual(const PrimExpr& a, const PrimExpr& b, bool negated, UndoLog* log) {
    if (!a.dtype().is_integer_like() || !b.dtype().is_integer_like()) return;
    if (!negated) {
      Narrow(a, VisitExpr(b), log);
      Narrow(b, VisitExpr(a), log);
      return;
    }
    // x != c only helps when c is an end of x's range.
    ExcludeEnd(a, VisitExpr(b), log);
    ExcludeEnd(b, VisitExpr(a), log);
  }

  void ExcludeEnd(const PrimExpr& e, const ConstIntBound& excluded, UndoLog* log) {
    if (!e.as<VarNode>() || !excluded.is_const()) return;
    ConstIntBound current = VisitExpr(e);
    int64_t c = excluded.min_value;
    if (current.min_value == c && c != ConstIntBound::kNegInf) {
      Narrow(e, {c + 1, ConstIntBound::kPosInf}, log);
    } else if (current.max_value == c && c != ConstIntBound::kPosInf) {
      Narrow(e, {ConstIntBound::kNegInf, c - 1}, log);
    }
  }

  // Records that `e` lies in `target`, passing the fact through +, -, * by a constant,
  // min/max and widening casts down to the variables it constrains.
  void Narrow(const PrimExpr& e, const ConstIntBound& target, UndoLog* log) {
    if (const auto* v = e.as<VarNode>()) return NarrowVar(Var(v), target, log);
    if (const auto* n = e.as<AddNode>()) {
      Narrow(n->a, bm::Sub(target, VisitExpr(n->b)), log);
      Narrow(n->b, bm::Sub(target, VisitExpr(n->a)), log);
    } else if (const auto* n = e.as<SubNode>()) {
      Narrow(n->a, bm::Add(target, VisitExpr(n->b)), log);
      Narrow(n->b, bm::Sub(VisitExpr(n->a), target), log);
    } else if (const auto* n = e.as<MulNode>()) {
      int64_t factor = 0;
      if (IsConstInt(n->b, &factor) && factor != 0) {
        Narrow(n->a, bm::DivideExactly(target, factor), log);
      } else if (IsConstInt(n->a, &factor) && factor != 0) {
        Narrow(n->b, bm::DivideExactly(target, factor), log);
      }
    } else if (const auto* n = e.as<MinNode>()) {
      ConstIntBound at_least{target.min_value, ConstIntBound::kPosInf};
      Narrow(n->a, at_least, log);
      Narrow(n->b, at_least, log);
    } else if (const auto* n = e.as<MaxNode>()) {
      ConstIntBound at_most{ConstIntBound::kNegInf, target.max_value};
      Narrow(n->a, at_most, log);
      Narrow(n->b, at_most, log);
    } else if (const auto* n = e.as<CastNode>()) {
      if (bm::CastPreservesValues(n->value.dtype(), n->dtype)) Narrow(n->value, target, log);
    }
  }

  void NarrowVar(const Var& var, const ConstIntBound& target, UndoLog* log) {
    ConstIntBound current = Lookup(var);
    ConstIntBound narrowed = bm::Intersect(current, target);
    // An empty range means the scope is unreachable; keeping the old bound is still true.
    if (bm::IsEmpty(narrowed) || narrowed == current) return;
    auto it = var_bounds_.find(var);
    log->emplace_back(var, it == var_bounds_.end() ? std::nullopt
                                                   : std::optional<ConstIntBound>(it->second));
    var_bounds_[var] = narrowed;
  }

  std::unordered_map<Var, ConstIntBound, ObjectHash, ObjectEqual> var_bounds_;
};

std::ostream& operator<<(std::ostream& os, const ConstIntBound& bound) {
  os << '[';
  if (bound.min_value == ConstIntBound::kNegInf) {
    os << "-inf";
  } else {
    os << bound.min_value;
  }
  os << ", ";
  if (bound.max_value == ConstIntBound::kPosInf) {
    os << "+inf";
  } else {
    os << bound.max_value;
  }
  return os << ']';
}

ConstIntBoundAnalyzer::ConstIntBoundAnalyzer(Analyzer*) : impl_(std::make_unique<Impl>()) {}

ConstIntBoundAnalyzer::~ConstIntBoundAnalyzer() = default;

ConstIntBound ConstIntBoundAnalyzer::operator()(const PrimExpr& expr) {
  return impl_->VisitExpr(expr);
}

void ConstIntBoundAnalyzer::Bind(const Var& var, const Range& range, bool allow_override) {
  ConstIntBound min = (*impl_)(range->min);
  ConstIntBound extent = (*impl_)(range->extent);
  ConstIntBound last = bm::Add(bm::Add(min, extent), ConstIntBound::Single(-1));
  // An empty range (extent <= 0) binds the variable to nothing it could ever hold; keep the
  // interval non-empty so later arithmetic stays well-formed.
  int64_t max_value = std::max(last.max_value, min.min_value);
  Update(var, {min.min_value, max_value}, allow_override);
}

void ConstIntBoundAnalyzer::Update(const Var& var, const ConstIntBound& bound,
                                   bool allow_override) {
  impl_->Update(var, bound, allow_override);
}

std::function<void()> ConstIntBoundAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  Impl::UndoLog log;
  impl_->Assume(constraint, false, &log);
  Impl* impl = impl_.get();
  return [impl, log = std::move(log)]() { impl->Restore(log); };
}

}  // namespace loom::arith
