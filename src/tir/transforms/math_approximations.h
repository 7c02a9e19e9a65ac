// Branch-free float32 approximations of the math intrinsics, built as TIR expressions over
// any number of lanes (what LowerMathIntrinsics substitutes for the calls; see
// include/loom/tir/transform.h for the contract and docs/math.md for accuracy and method).
// Each takes float32 (scalar or vector) operands and returns an expression of their type;
// operands are bound once with Let, so they may be arbitrary expressions.
#pragma once

#include "loom/ir/node.h"

namespace loom::tir::math_approx {

PrimExpr Exp(const PrimExpr& x);
PrimExpr Exp2(const PrimExpr& x);
PrimExpr Log(const PrimExpr& x);
PrimExpr Log2(const PrimExpr& x);
PrimExpr Tanh(const PrimExpr& x);
PrimExpr Sigmoid(const PrimExpr& x);
PrimExpr Erf(const PrimExpr& x);
// Computed in float64 lanes internally: the error of log2(x) is multiplied by y.
PrimExpr Pow(const PrimExpr& x, const PrimExpr& y);

}  // namespace loom::tir::math_approx
