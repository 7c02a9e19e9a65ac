// Building expressions the way one writes them: `x * 4 + y`, `floordiv(i, 8)`, `min(a, b)`.
// These builders match operand types (literals take the other operand's type, narrower
// integers widen, integers meet floats as floats, scalars broadcast to vectors) and fold
// constants at construction. Folding never overflows silently: when the exact result does
// not fit the type, the node is built unfolded. A constant division by zero is a user error.
// The raw node constructors (Add(a, b), ...) do neither: they are for passes and patterns.
#pragma once

#include <type_traits>

#include "loom/ir/node.h"

namespace loom {

PrimExpr make_const(DataType t, int64_t value);
PrimExpr make_const(DataType t, double value);
PrimExpr make_zero(DataType t);
PrimExpr const_true(int lanes = 1);
PrimExpr const_false(int lanes = 1);
bool is_const_true(const PrimExpr& e);   // IntImm bool 1 (or Broadcast of it)
bool is_const_false(const PrimExpr& e);

// Casts integers and floats; folds constants (integer narrowing wraps as two's complement).
PrimExpr cast(DataType t, PrimExpr value);

PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a);
PrimExpr operator*(PrimExpr a, PrimExpr b);
// Truncated (C) division and remainder on integers; true division on floats.
PrimExpr operator/(PrimExpr a, PrimExpr b);
PrimExpr operator%(PrimExpr a, PrimExpr b);
PrimExpr truncdiv(PrimExpr a, PrimExpr b);
PrimExpr truncmod(PrimExpr a, PrimExpr b);
// Floored division: the quotient rounds toward -inf and the remainder has the divisor's sign.
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);

PrimExpr operator==(PrimExpr a, PrimExpr b);
PrimExpr operator!=(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr operator&&(PrimExpr a, PrimExpr b);
PrimExpr operator||(PrimExpr a, PrimExpr b);
PrimExpr operator!(PrimExpr a);

PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);

namespace detail {
// A floating-point literal next to an operand of type t: in t when t is a float type, else
// float32 (so that `i * 0.5f` is a float32 product, as with PrimExpr(0.5f)).
inline PrimExpr FloatLiteral(DataType t, double value) {
  return t.is_float() ? make_const(t, value) : PrimExpr(static_cast<float>(value));
}
template <typename T>
inline constexpr bool kFloatLiteral = std::is_floating_point_v<T>;
}  // namespace detail

// Literal overloads keep `x + 1` and `y * 0.5f` in x's and y's type (an int64 x gives an
// int64 sum, a float16 y a float16 product). Floating-point literals have overloads of their
// own: converted to int they would silently turn `y * 0.5f` into `y * 0`.
#define LOOM_LITERAL_OVERLOADS(OP)                                                           \
  inline PrimExpr OP(PrimExpr a, int b) { return OP(a, make_const(a.dtype(), int64_t{b})); } \
  inline PrimExpr OP(int a, PrimExpr b) { return OP(make_const(b.dtype(), int64_t{a}), b); } \
  template <typename F, std::enable_if_t<detail::kFloatLiteral<F>, int> = 0>                 \
  inline PrimExpr OP(PrimExpr a, F b) {                                                      \
    return OP(a, detail::FloatLiteral(a.dtype(), b));                                        \
  }                                                                                          \
  template <typename F, std::enable_if_t<detail::kFloatLiteral<F>, int> = 0>                 \
  inline PrimExpr OP(F a, PrimExpr b) {                                                      \
    return OP(detail::FloatLiteral(b.dtype(), a), b);                                        \
  }
LOOM_LITERAL_OVERLOADS(operator+)
LOOM_LITERAL_OVERLOADS(operator-)
LOOM_LITERAL_OVERLOADS(operator*)
LOOM_LITERAL_OVERLOADS(operator/)
LOOM_LITERAL_OVERLOADS(operator%)
LOOM_LITERAL_OVERLOADS(truncdiv)
LOOM_LITERAL_OVERLOADS(truncmod)
LOOM_LITERAL_OVERLOADS(floordiv)
LOOM_LITERAL_OVERLOADS(floormod)
LOOM_LITERAL_OVERLOADS(min)
LOOM_LITERAL_OVERLOADS(max)
LOOM_LITERAL_OVERLOADS(operator==)
LOOM_LITERAL_OVERLOADS(operator!=)
LOOM_LITERAL_OVERLOADS(operator<)
LOOM_LITERAL_OVERLOADS(operator<=)
LOOM_LITERAL_OVERLOADS(operator>)
LOOM_LITERAL_OVERLOADS(operator>=)
#undef LOOM_LITERAL_OVERLOADS

// Calls a registered intrinsic (op.h lists them): call_intrin(Float(32), "exp", {x}).
PrimExpr call_intrin(DataType t, const std::string& op, Array<PrimExpr> args);
// Calls an external function by name.
PrimExpr call_extern(DataType t, const std::string& function, Array<PrimExpr> args);
// Calls the LLVM intrinsic `intrinsic` (its full name, with the type suffix of an overloaded
// one: "llvm.x86.avx512.vpdpbusd.512", "llvm.fshl.i32"), which must have no side effects.
// LLVM codegen checks the name and the types (t and the arguments' types) against LLVM's
// declaration of it; the interpreter cannot run it.
PrimExpr call_llvm_pure_intrin(DataType t, const std::string& intrinsic, Array<PrimExpr> args);
// call_llvm_pure_intrin for an intrinsic with side effects (on memory, or on registers LLVM
// does not model as values, as AMX's tiles): never removed, merged or reordered.
PrimExpr call_llvm_intrin(DataType t, const std::string& intrinsic, Array<PrimExpr> args);

// Exact integer arithmetic helpers shared with arith/ (std::nullopt on overflow).
namespace const_int {
bool AddOverflows(int64_t a, int64_t b, int64_t* out);
bool SubOverflows(int64_t a, int64_t b, int64_t* out);
bool MulOverflows(int64_t a, int64_t b, int64_t* out);
int64_t FloorDiv(int64_t a, int64_t b);  // b != 0, and not (INT64_MIN, -1)
int64_t FloorMod(int64_t a, int64_t b);  // b != 0
// Two's-complement wrap of value into an integer type of `bits` bits.
int64_t WrapToType(int64_t value, DataType t);
}  // namespace const_int

}  // namespace loom
