#include "loom/ir/expr_ops.h"

#include <cmath>
#include <limits>

#include "loom/ir/printer.h"

namespace loom {

namespace const_int {
bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
bool SubOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_sub_overflow(a, b, out); }
bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t WrapToType(int64_t value, DataType t) {
  if (t.is_bool()) return value != 0;
  int bits = t.bits();
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t low = static_cast<uint64_t>(value) & mask;
  if (t.is_int() && (low >> (bits - 1)) != 0) low |= ~mask;  // sign-extend
  return static_cast<int64_t>(low);
}
}  // namespace const_int

PrimExpr make_const(DataType t, int64_t value) {
  if (t.is_vector()) return Broadcast(make_const(t.element_of(), value), t.lanes());
  if (t.is_float()) return FloatImm(t, static_cast<double>(value));
  return IntImm(t, value);
}

PrimExpr make_const(DataType t, double value) {
  if (t.is_vector()) return Broadcast(make_const(t.element_of(), value), t.lanes());
  if (t.is_float()) return FloatImm(t, value);
  return IntImm(t, static_cast<int64_t>(value));
}

PrimExpr make_zero(DataType t) { return make_const(t, int64_t{0}); }
PrimExpr const_true(int lanes) { return make_const(DataType::Bool(lanes), int64_t{1}); }
PrimExpr const_false(int lanes) { return make_const(DataType::Bool(lanes), int64_t{0}); }

namespace {

bool ScalarBoolValue(const PrimExpr& e, int64_t expected) {
  if (const auto* b = e.as<BroadcastNode>()) return ScalarBoolValue(b->value, expected);
  const auto* imm = e.as<IntImmNode>();
  return imm && imm->dtype.is_bool() && imm->value == expected;
}

const IntImmNode* AsInt(const PrimExpr& e) { return e.as<IntImmNode>(); }
const FloatImmNode* AsFloat(const PrimExpr& e) { return e.as<FloatImmNode>(); }

bool IsIntValue(const PrimExpr& e, int64_t v) {
  const auto* imm = AsInt(e);
  return imm && imm->value == v;
}

// Makes the two operands of a binary operator agree in type (see the header).
void MatchTypes(PrimExpr& a, PrimExpr& b, const char* op) {
  LOOM_CHECK_USER(a.defined() && b.defined()) << "operator " << op << " on an undefined operand";
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return;
  if (ta.lanes() != tb.lanes()) {
    LOOM_CHECK_USER(ta.lanes() == 1 || tb.lanes() == 1)
        << "operator " << op << ": cannot combine " << ta << " and " << tb
        << " (vectors of different lengths)";
    if (ta.lanes() == 1) a = Broadcast(a, tb.lanes());
    else b = Broadcast(b, ta.lanes());
    ta = a.dtype();
    tb = b.dtype();
    if (ta == tb) return;
  }
  auto convert = [](PrimExpr& e, DataType t) {
    e = cast(t, e);
  };
  // A literal adopts the other side's type when its value survives the conversion; one that
  // does not fit (an int64 constant beside an int32 variable) widens the other side instead
  // of wrapping silently.
  auto adoptable = [](const PrimExpr& literal, DataType from, DataType to) {
    if (from.is_float() && !to.is_float()) return false;
    const auto* imm = AsInt(literal);
    return !imm || !to.is_integer_like() || to.is_representable(imm->value);
  };
  bool a_literal = AsInt(a) || AsFloat(a), b_literal = AsInt(b) || AsFloat(b);
  if (a_literal && !b_literal && adoptable(a, ta, tb)) return convert(a, tb);
  if (b_literal && !a_literal && adoptable(b, tb, ta)) return convert(b, ta);
  if (ta.is_float() && !tb.is_float()) return convert(b, ta);
  if (tb.is_float() && !ta.is_float()) return convert(a, tb);
  if (ta.is_float() && tb.is_float()) {
    if (ta.bits() < tb.bits()) return convert(a, tb);
    return convert(b, ta);
  }
  LOOM_CHECK_USER(ta.is_integer_like() && tb.is_integer_like())
      << "operator " << op << ": cannot combine " << ta << " and " << tb;
  // Widen the narrower integer; at equal width a signed type wins over unsigned/bool.
  if (ta.bits() < tb.bits()) return convert(a, tb);
  if (tb.bits() < ta.bits()) return convert(b, ta);
  if (ta.is_int()) return convert(b, ta);
  return convert(a, tb);
}

// Folds a result if the exact value fits the type; nullptr-like undefined otherwise.
PrimExpr FoldInt(DataType t, bool overflowed, int64_t value) {
  if (overflowed || !t.is_representable(value)) return PrimExpr();
  return IntImm(t, value);
}

void CheckNonZeroDivisor(const PrimExpr& a, const PrimExpr& b, const char* op) {
  if (const auto* imm = AsInt(b)) {
    LOOM_CHECK_USER(imm->value != 0)
        << "division by zero: " << op << "(" << a << ", " << b << ")";
  }
}

}  // namespace

bool is_const_true(const PrimExpr& e) { return ScalarBoolValue(e, 1); }
bool is_const_false(const PrimExpr& e) { return ScalarBoolValue(e, 0); }

PrimExpr cast(DataType t, PrimExpr value) {
  LOOM_CHECK_USER(value.defined()) << "cast to " << t << " of an undefined expression";
  if (value.dtype() == t) return value;
  if (t.lanes() != value.dtype().lanes()) {
    LOOM_CHECK_USER(value.dtype().is_scalar())
        << "cannot cast " << value << " (" << value.dtype() << ") to " << t;
    return Broadcast(cast(t.element_of(), value), t.lanes());
  }
  if (t.is_scalar()) {
    if (const auto* i = AsInt(value)) {
      if (t.is_float()) return FloatImm(t, static_cast<double>(i->value));
      if (t.is_integer_like()) return IntImm(t, const_int::WrapToType(i->value, t));
    }
    if (const auto* f = AsFloat(value)) {
      if (t.is_float()) return FloatImm(t, f->value);
      double truncated = std::trunc(f->value);
      if (t.is_integer_like() && std::isfinite(truncated) && truncated >= -9.2e18 &&
          truncated <= 9.2e18 && t.is_representable(static_cast<int64_t>(truncated))) {
        return IntImm(t, static_cast<int64_t>(truncated));
      }
    }
  }
  if (const auto* b = value.as<BroadcastNode>()) {
    return Broadcast(cast(t.element_of(), b->value), t.lanes());
  }
  return Cast(t, value);
}

PrimExpr operator+(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "+");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib) {
    int64_t r;
    bool overflowed = const_int::AddOverflows(ia->value, ib->value, &r);
    if (PrimExpr f = FoldInt(a.dtype(), overflowed, r); f.defined()) return f;
  }
  if (AsFloat(a) && AsFloat(b)) return FloatImm(a.dtype(), AsFloat(a)->value + AsFloat(b)->value);
  if (IsIntValue(b, 0)) return a;
  if (IsIntValue(a, 0)) return b;
  return Add(a, b);
}

PrimExpr operator-(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "-");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib) {
    int64_t r;
    bool overflowed = const_int::SubOverflows(ia->value, ib->value, &r);
    if (PrimExpr f = FoldInt(a.dtype(), overflowed, r); f.defined()) return f;
  }
  if (AsFloat(a) && AsFloat(b)) return FloatImm(a.dtype(), AsFloat(a)->value - AsFloat(b)->value);
  if (IsIntValue(b, 0)) return a;
  return Sub(a, b);
}

PrimExpr operator-(PrimExpr a) {
  LOOM_CHECK_USER(a.defined()) << "negation of an undefined expression";
  if (const auto* f = AsFloat(a)) return FloatImm(a.dtype(), -f->value);
  return make_zero(a.dtype()) - a;
}

PrimExpr operator*(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "*");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib) {
    int64_t r;
    bool overflowed = const_int::MulOverflows(ia->value, ib->value, &r);
    if (PrimExpr f = FoldInt(a.dtype(), overflowed, r); f.defined()) return f;
  }
  if (AsFloat(a) && AsFloat(b)) return FloatImm(a.dtype(), AsFloat(a)->value * AsFloat(b)->value);
  if (IsIntValue(b, 1)) return a;
  if (IsIntValue(a, 1)) return b;
  if (IsIntValue(b, 0)) return b;
  if (IsIntValue(a, 0)) return a;
  return Mul(a, b);
}

PrimExpr truncdiv(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "truncdiv");
  CheckNonZeroDivisor(a, b, "truncdiv");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib && !(ib->value == -1 && ia->value == std::numeric_limits<int64_t>::min())) {
    if (PrimExpr f = FoldInt(a.dtype(), false, ia->value / ib->value); f.defined()) return f;
  }
  if (IsIntValue(b, 1)) return a;
  return Div(a, b);
}

PrimExpr truncmod(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "truncmod");
  CheckNonZeroDivisor(a, b, "truncmod");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib) return IntImm(a.dtype(), ib->value == -1 ? 0 : ia->value % ib->value);
  if (IsIntValue(b, 1) || IsIntValue(b, -1)) return make_zero(a.dtype());
  return Mod(a, b);
}

PrimExpr operator/(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "/");
  if (a.dtype().is_float()) {
    if (AsFloat(a) && AsFloat(b) && AsFloat(b)->value != 0.0)
      return FloatImm(a.dtype(), AsFloat(a)->value / AsFloat(b)->value);
    return Div(a, b);
  }
  return truncdiv(a, b);
}

PrimExpr operator%(PrimExpr a, PrimExpr b) { return truncmod(a, b); }

PrimExpr floordiv(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "floordiv");
  CheckNonZeroDivisor(a, b, "floordiv");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib && !(ib->value == -1 && ia->value == std::numeric_limits<int64_t>::min())) {
    if (PrimExpr f = FoldInt(a.dtype(), false, const_int::FloorDiv(ia->value, ib->value));
        f.defined())
      return f;
  }
  if (IsIntValue(b, 1)) return a;
  return FloorDiv(a, b);
}

PrimExpr floormod(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "floormod");
  CheckNonZeroDivisor(a, b, "floormod");
  const auto *ia = AsInt(a), *ib = AsInt(b);
  if (ia && ib) {
    return IntImm(a.dtype(), ib->value == -1 ? 0 : const_int::FloorMod(ia->value, ib->value));
  }
  if (IsIntValue(b, 1) || IsIntValue(b, -1)) return make_zero(a.dtype());
  return FloorMod(a, b);
}

PrimExpr min(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "min");
  if (AsInt(a) && AsInt(b)) return AsInt(a)->value <= AsInt(b)->value ? a : b;
  if (AsFloat(a) && AsFloat(b)) return AsFloat(a)->value <= AsFloat(b)->value ? a : b;
  return Min(a, b);
}

PrimExpr max(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "max");
  if (AsInt(a) && AsInt(b)) return AsInt(a)->value >= AsInt(b)->value ? a : b;
  if (AsFloat(a) && AsFloat(b)) return AsFloat(a)->value >= AsFloat(b)->value ? a : b;
  return Max(a, b);
}

namespace {
template <typename Node, typename Cmp>
PrimExpr Compare(PrimExpr a, PrimExpr b, const char* op, Cmp cmp) {
  MatchTypes(a, b, op);
  if (AsInt(a) && AsInt(b)) return IntImm(DataType::Bool(), cmp(AsInt(a)->value, AsInt(b)->value));
  if (AsFloat(a) && AsFloat(b))
    return IntImm(DataType::Bool(), cmp(AsFloat(a)->value, AsFloat(b)->value));
  return Node(a, b);
}
}  // namespace

PrimExpr operator==(PrimExpr a, PrimExpr b) {
  return Compare<EQ>(a, b, "==", [](auto x, auto y) { return x == y; });
}
PrimExpr operator!=(PrimExpr a, PrimExpr b) {
  return Compare<NE>(a, b, "!=", [](auto x, auto y) { return x != y; });
}
PrimExpr operator<(PrimExpr a, PrimExpr b) {
  return Compare<LT>(a, b, "<", [](auto x, auto y) { return x < y; });
}
PrimExpr operator<=(PrimExpr a, PrimExpr b) {
  return Compare<LE>(a, b, "<=", [](auto x, auto y) { return x <= y; });
}
PrimExpr operator>(PrimExpr a, PrimExpr b) {
  return Compare<GT>(a, b, ">", [](auto x, auto y) { return x > y; });
}
PrimExpr operator>=(PrimExpr a, PrimExpr b) {
  return Compare<GE>(a, b, ">=", [](auto x, auto y) { return x >= y; });
}

PrimExpr operator&&(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "&&");
  if (is_const_true(a)) return b;
  if (is_const_false(a)) return a;
  if (is_const_true(b)) return a;
  if (is_const_false(b)) return b;
  return And(a, b);
}

PrimExpr operator||(PrimExpr a, PrimExpr b) {
  MatchTypes(a, b, "||");
  if (is_const_true(a)) return a;
  if (is_const_false(a)) return b;
  if (is_const_true(b)) return b;
  if (is_const_false(b)) return a;
  return Or(a, b);
}

PrimExpr operator!(PrimExpr a) {
  LOOM_CHECK_USER(a.defined()) << "logical not of an undefined expression";
  if (const auto* imm = AsInt(a); imm && imm->dtype.is_bool()) {
    return IntImm(DataType::Bool(), !imm->value);
  }
  return Not(a);
}

PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
  MatchTypes(true_value, false_value, "select");
  if (is_const_true(condition) && condition.dtype().is_scalar()) return true_value;
  if (is_const_false(condition) && condition.dtype().is_scalar()) return false_value;
  return Select(condition, true_value, false_value);
}

PrimExpr call_intrin(DataType t, const std::string& op, Array<PrimExpr> args) {
  return Call(t, Op::Get(op), std::move(args));
}

PrimExpr call_extern(DataType t, const std::string& function, Array<PrimExpr> args) {
  args.insert(args.begin(), StringImm(function));
  return Call(t, Op::Get("call_extern"), std::move(args));
}

PrimExpr call_llvm_pure_intrin(DataType t, const std::string& intrinsic, Array<PrimExpr> args) {
  args.insert(args.begin(), StringImm(intrinsic));
  return Call(t, Op::Get("call_llvm_pure_intrin"), std::move(args));
}

PrimExpr call_llvm_intrin(DataType t, const std::string& intrinsic, Array<PrimExpr> args) {
  args.insert(args.begin(), StringImm(intrinsic));
  return Call(t, Op::Get("call_llvm_intrin"), std::move(args));
}

}  // namespace loom
