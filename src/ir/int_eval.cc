#include "loom/ir/int_eval.h"

#include <algorithm>
#include <limits>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"

namespace loom {

namespace {

using Value = std::optional<int64_t>;

class IntEvaluator : public ExprFunctor<Value(const PrimExpr&)> {
 public:
  explicit IntEvaluator(const VarValueMap& values) : values_(values) {}

  Value VisitExpr(const PrimExpr& e) override {
    if (!e.dtype().is_scalar() || !e.dtype().is_integer_like()) return std::nullopt;
    Value v = ExprFunctor::VisitExpr(e);
    if (v && !e.dtype().is_representable(*v)) return std::nullopt;
    return v;
  }

  Value VisitExpr_(const IntImmNode* op) override { return op->value; }
  Value VisitExpr_(const VarNode* op) override {
    auto it = values_.find(Var(op));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  Value VisitExpr_(const CastNode* op) override {
    Value v = VisitExpr(op->value);
    if (!v) return v;
    return const_int::WrapToType(*v, op->dtype);
  }
  Value VisitExpr_(const AddNode* op) override {
    return Checked(op->a, op->b, const_int::AddOverflows);
  }
  Value VisitExpr_(const SubNode* op) override {
    return Checked(op->a, op->b, const_int::SubOverflows);
  }
  Value VisitExpr_(const MulNode* op) override {
    return Checked(op->a, op->b, const_int::MulOverflows);
  }
  Value VisitExpr_(const DivNode* op) override {
    return Divide(op->a, op->b, /*remainder=*/false, [](int64_t a, int64_t b) { return a / b; });
  }
  Value VisitExpr_(const ModNode* op) override {
    return Divide(op->a, op->b, /*remainder=*/true, [](int64_t a, int64_t b) { return a % b; });
  }
  Value VisitExpr_(const FloorDivNode* op) override {
    return Divide(op->a, op->b, /*remainder=*/false, const_int::FloorDiv);
  }
  Value VisitExpr_(const FloorModNode* op) override {
    return Divide(op->a, op->b, /*remainder=*/true, const_int::FloorMod);
  }
  Value VisitExpr_(const MinNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) { return std::min(a, b); });
  }
  Value VisitExpr_(const MaxNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) { return std::max(a, b); });
  }
  Value VisitExpr_(const EQNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a == b; });
  }
  Value VisitExpr_(const NENode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a != b; });
  }
  Value VisitExpr_(const LTNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a < b; });
  }
  Value VisitExpr_(const LENode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a <= b; });
  }
  Value VisitExpr_(const GTNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a > b; });
  }
  Value VisitExpr_(const GENode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a >= b; });
  }
  Value VisitExpr_(const AndNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a && b; });
  }
  Value VisitExpr_(const OrNode* op) override {
    return Both(op->a, op->b, [](int64_t a, int64_t b) -> int64_t { return a || b; });
  }
  Value VisitExpr_(const NotNode* op) override {
    Value a = VisitExpr(op->a);
    if (!a) return a;
    return int64_t{!*a};
  }
  Value VisitExpr_(const SelectNode* op) override {
    return Choose(op->condition, op->true_value, op->false_value);
  }
  Value VisitExpr_(const CallNode* op) override {
    if (op->op->name == "if_then_else") return Choose(op->args[0], op->args[1], op->args[2]);
    if (op->op->name == "likely") return VisitExpr(op->args[0]);
    return std::nullopt;
  }
  Value VisitExpr_(const LetNode* op) override {
    Value v = VisitExpr(op->value);
    if (!v) return v;
    VarValueMap inner = values_;
    inner[op->var] = *v;
    return IntEvaluator(inner).VisitExpr(op->body);
  }
  Value VisitExprDefault_(const Object*) override { return std::nullopt; }

 private:
  template <typename Fn>
  Value Both(const PrimExpr& a, const PrimExpr& b, Fn fn) {
    Value x = VisitExpr(a), y = VisitExpr(b);
    if (!x || !y) return std::nullopt;
    return fn(*x, *y);
  }
  Value Checked(const PrimExpr& a, const PrimExpr& b, bool (*overflows)(int64_t, int64_t, int64_t*)) {
    Value x = VisitExpr(a), y = VisitExpr(b);
    int64_t r;
    if (!x || !y || overflows(*x, *y, &r)) return std::nullopt;
    return r;
  }
  // INT64_MIN / -1 overflows, but its remainder is 0, as in every narrower type (and as
  // the folding builders compute it); C++ leaves both operations undefined, so it is special.
  template <typename Fn>
  Value Divide(const PrimExpr& a, const PrimExpr& b, bool remainder, Fn fn) {
    Value x = VisitExpr(a), y = VisitExpr(b);
    if (!x || !y || *y == 0) return std::nullopt;
    if (*y == -1 && *x == std::numeric_limits<int64_t>::min()) {
      return remainder ? Value(0) : std::nullopt;
    }
    return fn(*x, *y);
  }
  Value Choose(const PrimExpr& c, const PrimExpr& t, const PrimExpr& f) {
    Value cond = VisitExpr(c);
    if (!cond) return cond;
    return VisitExpr(*cond ? t : f);
  }

  const VarValueMap& values_;
};

}  // namespace

std::optional<int64_t> EvalInt(const PrimExpr& expr, const VarValueMap& values) {
  return IntEvaluator(values).VisitExpr(expr);
}

}  // namespace loom
