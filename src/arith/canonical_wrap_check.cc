#include "arith/canonical_wrap_check.h"

#include <algorithm>
#include <type_traits>

#include "arith/canonical_form.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"

namespace loom::arith::canonical {

namespace {

struct Risk {
  bool known = false;    // an operation over known bounds may wrap
  bool nominal = false;  // an operation may wrap when unknown leaves take nominal bounds
};

struct Interval {
  ConstIntBound bound;
  bool known;  // derived only from leaves whose bounds are narrower than their types
};

bool Exceeds(const ConstIntBound& b, DataType t) {
  return !IsFinite(b) || b.min_value < t.min_int_value() || b.max_value > t.max_int_value();
}

class WrapScan {
 public:
  explicit WrapScan(Analyzer* analyzer) : analyzer_(analyzer) {}

  Risk Scan(const PrimExpr& e) {
    Visit(e);
    return risk_;
  }

 private:
  Interval Visit(const PrimExpr& e) {
    if (!e.dtype().is_int() || !e.dtype().is_scalar()) {
      VisitChildren(e);
      return {ConstIntBound::Everything(), false};
    }
    switch (e->kind()) {
      case NodeKind::IntImm: return {ConstIntBound::Single(e.as<IntImmNode>()->value), true};
      case NodeKind::Add: return Arith(e, e.as<AddNode>()->a, e.as<AddNode>()->b, 1);
      case NodeKind::Sub: return Arith(e, e.as<SubNode>()->a, e.as<SubNode>()->b, -1);
      case NodeKind::Mul: return Arith(e, e.as<MulNode>()->a, e.as<MulNode>()->b, 0);
      case NodeKind::Div: return Division(e, e.as<DivNode>()->a, e.as<DivNode>()->b);
      case NodeKind::Mod: return Division(e, e.as<ModNode>()->a, e.as<ModNode>()->b);
      case NodeKind::FloorDiv: return Division(e, e.as<FloorDivNode>()->a, e.as<FloorDivNode>()->b);
      case NodeKind::FloorMod: return Division(e, e.as<FloorModNode>()->a, e.as<FloorModNode>()->b);
      case NodeKind::Min:
      case NodeKind::Max: {
        bool is_min = e->kind() == NodeKind::Min;
        Interval a = Visit(is_min ? e.as<MinNode>()->a : e.as<MaxNode>()->a);
        Interval b = Visit(is_min ? e.as<MinNode>()->b : e.as<MaxNode>()->b);
        auto pick = [is_min](int64_t u, int64_t v) {
          return is_min ? std::min(u, v) : std::max(u, v);
        };
        return {{pick(a.bound.min_value, b.bound.min_value),
                 pick(a.bound.max_value, b.bound.max_value)},
                a.known && b.known};
      }
      case NodeKind::Select: {
        const auto* op = e.as<SelectNode>();
        Visit(op->condition);
        Interval a = Visit(op->true_value), b = Visit(op->false_value);
        return {{std::min(a.bound.min_value, b.bound.min_value),
                 std::max(a.bound.max_value, b.bound.max_value)},
                a.known && b.known};
      }
      default:
        VisitChildren(e);
        return Leaf(e);
    }
  }

  // The analyzer's bound of e; where that is no narrower than the type, a nominal one.
  Interval Leaf(const PrimExpr& e) {
    ConstIntBound b = analyzer_->const_int_bound(e);
    DataType t = e.dtype();
    if (b.min_value > t.min_int_value() && b.max_value < t.max_int_value()) return {b, true};
    const int64_t nominal = int64_t{1} << (t.bits() / 2);
    return {{std::clamp(-nominal, b.min_value, b.max_value),
             std::clamp(nominal, b.min_value, b.max_value)},
            false};
  }

  // sign: 1 for a + b, -1 for a - b, 0 for a * b.
  Interval Arith(const PrimExpr& e, const PrimExpr& a_expr, const PrimExpr& b_expr, int sign) {
    Interval a = Visit(a_expr), b = Visit(b_expr);
    ConstIntBound r;
    if (sign == 0) {
      r = BoundMul(a.bound, b.bound);
    } else {
      r = BoundAdd(a.bound, sign > 0 ? b.bound : BoundMul(b.bound, ConstIntBound::Single(-1)));
    }
    const DataType t = e.dtype();
    const bool known = a.known && b.known;
    if (Exceeds(r, t)) {
      risk_.nominal = true;
      if (known) risk_.known = true;
      // Where it is defined, the value is within its type.
      r = {std::max(r.min_value, t.min_int_value()), std::min(r.max_value, t.max_int_value())};
    }
    return {r, known};
  }

  // Divisions by constants bound themselves; the remainders whatever the dividend.
  Interval Division(const PrimExpr& e, const PrimExpr& a_expr, const PrimExpr& b_expr) {
    Interval a = Visit(a_expr);
    Visit(b_expr);
    int64_t c = 0;
    if (!IsConstInt(b_expr, &c) || c == 0) return Leaf(e);
    switch (e->kind()) {
      case NodeKind::FloorMod:
        return {c > 0 ? ConstIntBound{0, c - 1} : ConstIntBound{c + 1, 0}, true};
      case NodeKind::Mod: {
        int64_t m = c > 0 ? c - 1 : -(c + 1);  // |c| - 1 without overflow
        return {{a.bound.min_value >= 0 ? 0 : -m, a.bound.max_value <= 0 ? 0 : m}, true};
      }
      default: {
        if (!IsFinite(a.bound)) return Leaf(e);
        auto divide = [&](int64_t v) {
          return e->kind() == NodeKind::FloorDiv ? const_int::FloorDiv(v, c) : v / c;
        };
        // Both divisions are monotone in the dividend; -1 cannot overflow a finite bound.
        int64_t q1 = divide(a.bound.min_value), q2 = divide(a.bound.max_value);
        return {{std::min(q1, q2), std::max(q1, q2)}, a.known};
      }
    }
  }

  void VisitChildren(const PrimExpr& e) {
    DispatchNode(*e.get(), [&](const auto& node) {
      ForEachField(node, [&](const char*, const auto& field, FieldRole) {
        using T = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<T, PrimExpr>) {
          if (field.defined()) Visit(field);
        } else if constexpr (std::is_same_v<T, Array<PrimExpr>>) {
          for (const PrimExpr& element : field) Visit(element);
        }
      });
    });
  }

  Analyzer* analyzer_;
  Risk risk_;
};

}  // namespace

bool MayWrapWhereOriginalDoesNot(Analyzer* analyzer, const PrimExpr& original,
                                 const PrimExpr& simplified) {
  Risk risk = WrapScan(analyzer).Scan(simplified);
  if (risk.known) return true;
  return risk.nominal && !WrapScan(analyzer).Scan(original).nominal;
}

}  // namespace loom::arith::canonical
