// Math functions on expressions, named as in TVM's tir/te: exp(x), sigmoid(x), pow(x, y), ...
// Each builds a call to the built-in intrinsic of the same name (src/ir/op.cc), typed like its
// float argument; code generators decide how to compute it (hardware instruction, LLVM
// intrinsic, or Loom's polynomial approximation). An integer or boolean argument is a
// loom::Error naming the function: cast it to a float type first, as the message says.
// Literal arguments take float32, and a literal exponent of pow takes the base's type.
#pragma once

#include "loom/ir/expr_ops.h"

namespace loom {

PrimExpr exp(PrimExpr x);
PrimExpr exp2(PrimExpr x);
PrimExpr log(PrimExpr x);
PrimExpr log2(PrimExpr x);
PrimExpr log10(PrimExpr x);
PrimExpr sqrt(PrimExpr x);
PrimExpr rsqrt(PrimExpr x);
PrimExpr tanh(PrimExpr x);
PrimExpr sigmoid(PrimExpr x);
PrimExpr erf(PrimExpr x);
PrimExpr sin(PrimExpr x);
PrimExpr cos(PrimExpr x);
PrimExpr fabs(PrimExpr x);
PrimExpr floor(PrimExpr x);
PrimExpr ceil(PrimExpr x);
PrimExpr round(PrimExpr x);
PrimExpr trunc(PrimExpr x);
// Base and exponent must have the same float type.
PrimExpr pow(PrimExpr base, PrimExpr exponent);
inline PrimExpr pow(PrimExpr base, double exponent) {
  DataType t = base.dtype();
  return pow(std::move(base), make_const(t, exponent));
}
// A boolean per lane: whether x is NaN.
PrimExpr isnan(PrimExpr x);
// a * b + c rounded once (a fused multiply-add, IEEE fusedMultiplyAdd): the three must have
// the same float type, lanes included. float16/bfloat16 compute it in float32 and round the
// result to their type, as every other operation on them.
PrimExpr fma(PrimExpr a, PrimExpr b, PrimExpr c);

}  // namespace loom
