#include "loom/arith/canonical_simplify.h"

#include <unordered_map>
#include <unordered_set>

#include "arith/canonical_form.h"
#include "arith/canonical_split.h"
#include "arith/canonical_wrap_check.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {

namespace {

using canonical::AtomTable;
using canonical::Sum;
using canonical::SumToExpr;

using Bindings = std::unordered_map<Var, PrimExpr, ObjectHash, ObjectEqual>;

// The normal form covers scalar signed integers; everything else is only walked into.
bool InForm(DataType t) { return t.is_int() && t.is_scalar(); }

PrimExpr BuildDivision(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
  int64_t divisor = 0;
  if (IsConstInt(b, &divisor) && divisor == 0) {
    // Undefined wherever it is evaluated; kept as written (the builders reject it).
    switch (kind) {
      case NodeKind::Div: return Div(a, b);
      case NodeKind::Mod: return Mod(a, b);
      case NodeKind::FloorDiv: return FloorDiv(a, b);
      default: return FloorMod(a, b);
    }
  }
  switch (kind) {
    case NodeKind::Div: return truncdiv(a, b);
    case NodeKind::Mod: return truncmod(a, b);
    case NodeKind::FloorDiv: return floordiv(a, b);
    default: return floormod(a, b);
  }
}

PrimExpr BuildComparison(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
  switch (kind) {
    case NodeKind::EQ: return a == b;
    case NodeKind::NE: return a != b;
    case NodeKind::LT: return a < b;
    case NodeKind::LE: return a <= b;
    case NodeKind::GT: return a > b;
    default: return a >= b;
  }
}

// The truth of `d <kind> 0` when the bound of d decides it.
std::optional<bool> DecideAgainstZero(NodeKind kind, const ConstIntBound& d) {
  const bool excludes_zero = d.min_value > 0 || d.max_value < 0;
  auto decided = [](bool if_true, bool if_false) -> std::optional<bool> {
    if (if_true) return true;
    if (if_false) return false;
    return std::nullopt;
  };
  switch (kind) {
    case NodeKind::EQ: return decided(d.is_const() && d.min_value == 0, excludes_zero);
    case NodeKind::NE: return decided(excludes_zero, d.is_const() && d.min_value == 0);
    case NodeKind::LT: return decided(d.max_value < 0, d.min_value >= 0);
    case NodeKind::LE: return decided(d.max_value <= 0, d.min_value > 0);
    case NodeKind::GT: return decided(d.min_value > 0, d.max_value <= 0);
    default: return decided(d.min_value >= 0, d.max_value < 0);
  }
}

// Simplifies one expression. Integer subexpressions go through the sum form; the rest is
// rebuilt around them with the folding builders.
class Canonicalizer : public ExprMutator {
 public:
  Canonicalizer(Analyzer* parent, const Bindings& bindings) : table_(parent), bindings_(bindings) {}

  using ExprMutator::VisitExpr_;

  PrimExpr VisitExpr(const PrimExpr& e) override {
    if (InForm(e.dtype())) return Expr(ToSum(e));
    return ExprMutator::VisitExpr(e);
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    const PrimExpr* value = Binding(op);
    if (!value) return GetRef(op);
    substituting_.insert(op);
    PrimExpr result = VisitExpr(*value);
    substituting_.erase(op);
    return result;
  }
  PrimExpr VisitExpr_(const EQNode* op) override { return Compare(NodeKind::EQ, op->a, op->b); }
  PrimExpr VisitExpr_(const NENode* op) override { return Compare(NodeKind::NE, op->a, op->b); }
  PrimExpr VisitExpr_(const LTNode* op) override { return Compare(NodeKind::LT, op->a, op->b); }
  PrimExpr VisitExpr_(const LENode* op) override { return Compare(NodeKind::LE, op->a, op->b); }
  PrimExpr VisitExpr_(const GTNode* op) override { return Compare(NodeKind::GT, op->a, op->b); }
  PrimExpr VisitExpr_(const GENode* op) override { return Compare(NodeKind::GE, op->a, op->b); }
  PrimExpr VisitExpr_(const AndNode* op) override { return VisitExpr(op->a) && VisitExpr(op->b); }
  PrimExpr VisitExpr_(const OrNode* op) override { return VisitExpr(op->a) || VisitExpr(op->b); }
  PrimExpr VisitExpr_(const NotNode* op) override { return !VisitExpr(op->a); }
  PrimExpr VisitExpr_(const SelectNode* op) override {
    PrimExpr condition = VisitExpr(op->condition);
    if (condition.dtype().is_scalar() && is_const_true(condition)) return VisitExpr(op->true_value);
    if (condition.dtype().is_scalar() && is_const_false(condition)) {
      return VisitExpr(op->false_value);
    }
    return select(condition, VisitExpr(op->true_value), VisitExpr(op->false_value));
  }

 private:
  static Var GetRef(const VarNode* op) { return Var(op); }

  PrimExpr Expr(const Sum& s) { return SumToExpr(&table_, s); }
  Sum Opaque(const PrimExpr& e) { return canonical::SumOf(&table_, e); }

  Sum ToSum(const PrimExpr& e) {
    switch (e->kind()) {
      case NodeKind::IntImm:
        return canonical::ConstantSum(e.dtype(), e.as<IntImmNode>()->value);
      case NodeKind::Var: return VarSum(e.as<VarNode>());
      case NodeKind::Add: return Linear(e.as<AddNode>()->a, e.as<AddNode>()->b, 1);
      case NodeKind::Sub: return Linear(e.as<SubNode>()->a, e.as<SubNode>()->b, -1);
      case NodeKind::Mul: return Product(e.as<MulNode>()->a, e.as<MulNode>()->b);
      case NodeKind::Div: return Division(NodeKind::Div, e.as<DivNode>()->a, e.as<DivNode>()->b);
      case NodeKind::Mod: return Division(NodeKind::Mod, e.as<ModNode>()->a, e.as<ModNode>()->b);
      case NodeKind::FloorDiv:
        return Division(NodeKind::FloorDiv, e.as<FloorDivNode>()->a, e.as<FloorDivNode>()->b);
      case NodeKind::FloorMod:
        return Division(NodeKind::FloorMod, e.as<FloorModNode>()->a, e.as<FloorModNode>()->b);
      case NodeKind::Min: return Extremum(/*is_min=*/true, e.as<MinNode>()->a, e.as<MinNode>()->b);
      case NodeKind::Max: return Extremum(/*is_min=*/false, e.as<MaxNode>()->a, e.as<MaxNode>()->b);
      case NodeKind::Select: return Choice(e.as<SelectNode>());
      default:
        // Casts, loads, calls, lets, ...: atoms whose children are simplified.
        return Opaque(ExprMutator::VisitExpr(e));
    }
  }

  // The value `op` is bound to; none while it is being substituted, so that a binding that
  // refers back to its variable (directly or not) stops at the variable.
  const PrimExpr* Binding(const VarNode* op) const {
    auto it = bindings_.find(GetRef(op));
    if (it == bindings_.end() || it->second.dtype() != op->dtype || substituting_.count(op)) {
      return nullptr;
    }
    return &it->second;
  }

  Sum VarSum(const VarNode* op) {
    const PrimExpr* value = Binding(op);
    if (!value) return Opaque(GetRef(op));
    substituting_.insert(op);
    Sum result = ToSum(*value);
    substituting_.erase(op);
    return result;
  }

  Sum Linear(const PrimExpr& a, const PrimExpr& b, int64_t b_sign) {
    Sum sa = ToSum(a), sb = ToSum(b);
    if (std::optional<Sum> sum = canonical::Add(sa, sb, b_sign)) {
      canonical::MergeSplits(&table_, &*sum);
      return *sum;
    }
    return Opaque(b_sign > 0 ? Expr(sa) + Expr(sb) : Expr(sa) - Expr(sb));
  }

  Sum Product(const PrimExpr& a, const PrimExpr& b) {
    Sum sa = ToSum(a), sb = ToSum(b);
    if (std::optional<Sum> product = canonical::Multiply(sa, sb)) {
      canonical::MergeSplits(&table_, &*product);
      return *product;
    }
    return Opaque(Expr(sa) * Expr(sb));
  }

  Sum Division(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
    Sum dividend = ToSum(a), divisor = ToSum(b);
    if (!divisor.is_constant() || divisor.constant == 0) {
      return Opaque(BuildDivision(kind, Expr(dividend), Expr(divisor)));
    }
    const int64_t c = divisor.constant;
    std::optional<Sum> result;
    switch (kind) {
      case NodeKind::FloorDiv: result = canonical::FloorDivide(&table_, dividend, c); break;
      case NodeKind::FloorMod: result = canonical::FloorModulo(&table_, dividend, c); break;
      case NodeKind::Div: result = canonical::TruncDivide(&table_, dividend, c); break;
      default: result = canonical::TruncModulo(&table_, dividend, c); break;
    }
    if (result) return *result;
    // A common factor still cancels: truncdiv(g * a, g * c) == truncdiv(a, c) and
    // truncmod(g * a, g * c) == g * truncmod(a, c); likewise for the floored forms.
    int64_t g = canonical::Gcd(canonical::Gcd(canonical::CoefficientGcd(dividend),
                                              dividend.constant),
                               c);
    Sum reduced = canonical::DivideExact(dividend, g);
    PrimExpr reduced_divisor = make_const(dividend.dtype, c / g);
    Sum atom = Opaque(BuildDivision(kind, Expr(reduced), reduced_divisor));
    if (kind == NodeKind::Div || kind == NodeKind::FloorDiv || g == 1) return atom;
    std::optional<Sum> scaled = canonical::Scale(atom, g);
    LOOM_ICHECK(scaled) << "a remainder scaled by a factor of its divisor overflowed";
    return *scaled;
  }

  Sum Extremum(bool is_min, const PrimExpr& a, const PrimExpr& b) {
    Sum sa = ToSum(a), sb = ToSum(b);
    if (std::optional<Sum> diff = canonical::Add(sa, sb, -1)) {
      ConstIntBound d = canonical::SumBound(&table_, *diff);
      if (d.max_value <= 0) return is_min ? sa : sb;
      if (d.min_value >= 0) return is_min ? sb : sa;
    }
    return Opaque(is_min ? min(Expr(sa), Expr(sb)) : max(Expr(sa), Expr(sb)));
  }

  Sum Choice(const SelectNode* op) {
    PrimExpr condition = VisitExpr(op->condition);
    if (is_const_true(condition)) return ToSum(op->true_value);
    if (is_const_false(condition)) return ToSum(op->false_value);
    Sum if_true = ToSum(op->true_value), if_false = ToSum(op->false_value);
    if (if_true == if_false) return if_true;
    return Opaque(select(condition, Expr(if_true), Expr(if_false)));
  }

  PrimExpr Compare(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
    if (!InForm(a.dtype()) || a.dtype() != b.dtype()) {
      return BuildComparison(kind, VisitExpr(a), VisitExpr(b));
    }
    Sum sa = ToSum(a), sb = ToSum(b);
    std::optional<Sum> diff = canonical::Add(sa, sb, -1);
    if (!diff) return BuildComparison(kind, Expr(sa), Expr(sb));
    if (std::optional<bool> known = DecideAgainstZero(kind, canonical::SumBound(&table_, *diff))) {
      return make_const(DataType::Bool(), int64_t{*known});
    }
    if (std::optional<PrimExpr> balanced = Balance(kind, *diff)) return *balanced;
    return BuildComparison(kind, Expr(sa), Expr(sb));
  }

  // `d <kind> 0` for a non-constant d = g * y + k (g the gcd of the coefficients) as
  // `y <kind> r` over the integers, with the positive terms of y on the left and the negated
  // negative ones on the right: x * 2 + 1 < y * 2 + 4 -> x < y + 2.
  std::optional<PrimExpr> Balance(NodeKind kind, const Sum& d) {
    const DataType t = d.dtype;
    const int64_t g = canonical::CoefficientGcd(d);
    const int64_t k = d.constant;
    if ((kind == NodeKind::EQ || kind == NodeKind::NE) && k % g != 0) {
      return make_const(DataType::Bool(), int64_t{kind == NodeKind::NE});
    }
    // Wide enough for every intermediate below: |k| < 2^63 and g >= 1.
    const __int128 wk = k;
    auto floor_div = [g](__int128 a) {
      __int128 q = a / g;
      return (a % g != 0 && a < 0) ? q - 1 : q;
    };
    __int128 r = 0;
    switch (kind) {
      case NodeKind::EQ:
      case NodeKind::NE: r = -wk / g; break;
      case NodeKind::LE: r = floor_div(-wk); break;
      case NodeKind::LT: r = floor_div(-wk - 1) + 1; break;
      case NodeKind::GE: r = -floor_div(wk); break;
      default: r = -floor_div(wk - 1) - 1; break;
    }
    Sum lhs = canonical::ConstantSum(t, 0), rhs = canonical::ConstantSum(t, 0);
    for (const auto& [monomial, coeff] : d.terms) {
      int64_t y_coeff = coeff / g;
      if (y_coeff > 0) {
        lhs.terms.emplace(monomial, y_coeff);
      } else {
        if (y_coeff == INT64_MIN || !t.is_representable(-y_coeff)) return std::nullopt;
        rhs.terms.emplace(monomial, -y_coeff);
      }
    }
    // y == p - n; `y op r` is printed as `p op r` or `-r op n` when one side has no terms,
    // otherwise as `p op n + r` or `p - r op n`, whichever has the positive constant.
    __int128 shown = r;
    if (lhs.is_constant() || (!rhs.is_constant() && r < 0)) shown = -r;
    if (shown < INT64_MIN || shown > INT64_MAX ||
        !t.is_representable(static_cast<int64_t>(shown))) {
      return std::nullopt;
    }
    (shown == r ? rhs : lhs).constant = static_cast<int64_t>(shown);
    return BuildComparison(kind, Expr(lhs), Expr(rhs));
  }

  AtomTable table_;
  const Bindings& bindings_;
  std::unordered_set<const VarNode*> substituting_;
};

}  // namespace

class CanonicalSimplifier::Impl {
 public:
  explicit Impl(Analyzer* parent) : parent_(parent) {}

  PrimExpr Simplify(const PrimExpr& expr) {
    Canonicalizer canonicalizer(parent_, bindings_);
    PrimExpr result = canonicalizer(expr);
    if (result.same_as(expr) || canonical::MayWrapWhereOriginalDoesNot(parent_, expr, result)) {
      return expr;
    }
    return result;
  }

  void Update(const Var& var, const PrimExpr& value, bool allow_override) {
    if (!value.defined()) {
      bindings_.erase(var);
      return;
    }
    auto it = bindings_.find(var);
    if (it != bindings_.end() && !allow_override) {
      LOOM_CHECK_USER(StructuralEqual(it->second, value))
          << "canonical simplifier: cannot bind " << var << " to " << value
          << ": it is already bound to " << it->second
          << "; pass allow_override = true to replace the binding";
    }
    bindings_[var] = value;
  }

 private:
  Analyzer* parent_;
  Bindings bindings_;
};

CanonicalSimplifier::CanonicalSimplifier(Analyzer* parent)
    : impl_(std::make_unique<Impl>(parent)) {}
CanonicalSimplifier::~CanonicalSimplifier() = default;

PrimExpr CanonicalSimplifier::operator()(const PrimExpr& expr) { return impl_->Simplify(expr); }

void CanonicalSimplifier::Update(const Var& var, const PrimExpr& value, bool allow_override) {
  impl_->Update(var, value, allow_override);
}

}  // namespace loom::arith
