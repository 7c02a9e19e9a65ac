// Elementwise operators with ONNX semantics: unary functions, binary operators with NumPy
// broadcasting, where, cast. Each returns a compute tensor (tag "elemwise" or "broadcast"),
// to be scheduled with schedule_injective (loom/topi/schedule.h) or fused into a consumer.
//
//   te::Tensor y = topi::relu(topi::add(x, bias));   // bias of shape {C, 1, 1} broadcasts
//
// Binary operators take operands of one dtype, as ONNX does: mixed dtypes are a loom::Error
// naming the operator and both types (insert a cast). Shapes broadcast from the right; a
// pair of dimensions must be equal or one of them 1 (a symbolic dimension must be equal to
// its partner, or be matched by a 1).
#pragma once

#include <string>

#include "loom/te/operation.h"

namespace loom::topi {

// ---- unary: float operands unless noted (integer ones are a loom::Error naming the op).
te::Tensor negative(const te::Tensor& x);   // any numeric type
te::Tensor abs(const te::Tensor& x);        // any numeric type
te::Tensor sign(const te::Tensor& x);       // any numeric type: -1, 0 or 1
te::Tensor exp(const te::Tensor& x);
te::Tensor log(const te::Tensor& x);
te::Tensor sqrt(const te::Tensor& x);
te::Tensor rsqrt(const te::Tensor& x);
te::Tensor reciprocal(const te::Tensor& x);
te::Tensor sigmoid(const te::Tensor& x);
te::Tensor tanh(const te::Tensor& x);
te::Tensor erf(const te::Tensor& x);
te::Tensor sin(const te::Tensor& x);
te::Tensor cos(const te::Tensor& x);
te::Tensor floor(const te::Tensor& x);
te::Tensor ceil(const te::Tensor& x);
te::Tensor round(const te::Tensor& x);  // half to even, as ONNX Round
// x * 0.5 * (1 + erf(x / sqrt(2))) (ONNX Gelu, approximate="none").
te::Tensor gelu(const te::Tensor& x);
te::Tensor relu(const te::Tensor& x);  // any numeric type
te::Tensor leaky_relu(const te::Tensor& x, double alpha = 0.01);
te::Tensor elu(const te::Tensor& x, double alpha = 1.0);
te::Tensor selu(const te::Tensor& x, double alpha = 1.67326319217681884765625,
                double gamma = 1.05070102214813232421875);
te::Tensor softplus(const te::Tensor& x);  // log(1 + exp(x)), without overflow
te::Tensor hard_sigmoid(const te::Tensor& x, double alpha = 0.2, double beta = 0.5);
te::Tensor hard_swish(const te::Tensor& x);  // x * hard_sigmoid(x, 1/6, 1/2)
// min(max(x, lo), hi); any numeric type. lo > hi is a loom::Error.
te::Tensor clip(const te::Tensor& x, double lo, double hi);
te::Tensor logical_not(const te::Tensor& x);  // bool
// Conversion to `dtype` (float to integer truncates toward zero; out-of-range values are
// undefined, as in ONNX).
te::Tensor cast(const te::Tensor& x, DataType dtype);

// ---- binary, broadcasting; one dtype for both operands.
te::Tensor add(const te::Tensor& a, const te::Tensor& b);
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b);
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b);
// Floats: IEEE division. Integers: truncating, as ONNX Div; a zero divisor, undefined in
// ONNX, gives 0 rather than a trap, as does the remainder below (and the smallest signed
// value divided by -1 wraps to itself).
te::Tensor divide(const te::Tensor& a, const te::Tensor& b);
// ONNX Mod: integers take the sign of the divisor (fmod = false); floats need fmod = true
// and take the sign of the dividend (C fmod).
te::Tensor mod(const te::Tensor& a, const te::Tensor& b, bool fmod = false);
te::Tensor power(const te::Tensor& a, const te::Tensor& b);  // float
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b);
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b);
// x * slope where x < 0 (ONNX PRelu; slope broadcasts to x).
te::Tensor prelu(const te::Tensor& x, const te::Tensor& slope);
// Comparisons give bool tensors.
te::Tensor equal(const te::Tensor& a, const te::Tensor& b);
te::Tensor less(const te::Tensor& a, const te::Tensor& b);
te::Tensor less_equal(const te::Tensor& a, const te::Tensor& b);
te::Tensor greater(const te::Tensor& a, const te::Tensor& b);
te::Tensor greater_equal(const te::Tensor& a, const te::Tensor& b);
// a shifted by b bits, of integer operands of one type; right_shift is arithmetic on signed
// types (the sign fills in) and logical on unsigned ones. A shift by a negative amount or by
// the type's width or more gives an unspecified value (as in C and LLVM).
te::Tensor left_shift(const te::Tensor& a, const te::Tensor& b);
te::Tensor right_shift(const te::Tensor& a, const te::Tensor& b);
// Bool operands.
te::Tensor logical_and(const te::Tensor& a, const te::Tensor& b);
te::Tensor logical_or(const te::Tensor& a, const te::Tensor& b);
te::Tensor logical_xor(const te::Tensor& a, const te::Tensor& b);
// condition ? a : b, all three broadcast together; condition is bool, a and b share a dtype.
te::Tensor where(const te::Tensor& condition, const te::Tensor& a, const te::Tensor& b);

// The broadcast shape of `a` and `b` (NumPy rules), or a loom::Error naming `op` and both
// shapes.
Array<PrimExpr> BroadcastShape(const Array<PrimExpr>& a, const Array<PrimExpr>& b,
                               const std::string& op);

}  // namespace loom::topi
