// Elementwise operators: one compute per operator over the (broadcast) output shape.
#include "loom/topi/elementwise.h"

#include "topi/topi_util.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "loom/ir/math.h"
#include "loom/ir/printer.h"

namespace loom::topi {

namespace {

constexpr const char* kElemwise = "elemwise";
constexpr const char* kBroadcast = "broadcast";

enum class Operands { kNumeric, kInteger, kFloat, kBool };


void CheckOperand(const te::Tensor& x, Operands kind, const std::string& op) {
  DataType t = x.dtype();
  switch (kind) {
    case Operands::kFloat:
      detail::CheckFloat(x, op);
      break;
    case Operands::kInteger:
      LOOM_CHECK_USER(t.is_int() || t.is_uint())
          << op << ": '" << x.name() << "' is " << t.str()
          << "; the operator takes integer tensors";
      break;
    case Operands::kBool:
      LOOM_CHECK_USER(t.is_bool()) << op << ": '" << x.name() << "' is " << t.str()
                                   << "; the operator takes bool tensors";
      break;
    case Operands::kNumeric:
      LOOM_CHECK_USER(!t.is_bool()) << op << ": '" << x.name()
                                    << "' is bool; the operator takes numeric tensors";
      break;
  }
}

te::Tensor Unary(const te::Tensor& x, const std::string& op, Operands kind,
                 const std::function<PrimExpr(PrimExpr)>& f) {
  CheckOperand(x, kind, op);
  return te::compute(
      x.shape(), [&](const Array<Var>& i) { return f(x(i)); }, op, kElemwise);
}

// x read at the output index `out` of a broadcast.
PrimExpr BroadcastRead(const te::Tensor& x, const Array<Var>& out) {
  return x(detail::BroadcastIndex(x.shape(), Array<PrimExpr>(out.begin(), out.end())));
}

te::Tensor Binary(const te::Tensor& a, const te::Tensor& b, const std::string& op,
                  Operands kind, const std::function<PrimExpr(PrimExpr, PrimExpr)>& f) {
  CheckOperand(a, kind, op);
  CheckOperand(b, kind, op);
  LOOM_CHECK_USER(a.dtype() == b.dtype())
      << op << ": operand types differ ('" << a.name() << "' is " << a.dtype().str() << ", '"
      << b.name() << "' is " << b.dtype().str() << "); cast one operand to the other's type";
  Array<PrimExpr> shape = BroadcastShape(a.shape(), b.shape(), op);
  return te::compute(
      shape, [&](const Array<Var>& i) { return f(BroadcastRead(a, i), BroadcastRead(b, i)); },
      op, kBroadcast);
}

PrimExpr Constant(DataType t, double value) { return make_const(t, value); }




}  // namespace

Array<PrimExpr> BroadcastShape(const Array<PrimExpr>& a, const Array<PrimExpr>& b,
                               const std::string& op) {
  size_t rank = std::max(a.size(), b.size());
  Array<PrimExpr> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    // Dimension d of the output, counted from the right in each operand.
    bool in_a = d < a.size(), in_b = d < b.size();
    PrimExpr x = in_a ? a[a.size() - 1 - d] : PrimExpr();
    PrimExpr y = in_b ? b[b.size() - 1 - d] : PrimExpr();
    PrimExpr out;
    if (!in_a || (in_b && detail::IsUnitExtent(x))) {
      out = y;
    } else if (!in_b || detail::IsUnitExtent(y)) {
      out = x;
    } else {
      LOOM_CHECK_USER(detail::SameExtent(x, y)) << op << ": shapes " << detail::ShapeText(a) << " and " << detail::ShapeText(b)
                             << " do not broadcast (dimension " << x << " against " << y
                             << "); each pair of trailing dimensions must be equal or 1";
      out = x;
    }
    shape[rank - 1 - d] = out;
  }
  return shape;
}

te::Tensor negative(const te::Tensor& x) {
  return Unary(x, "negative", Operands::kNumeric, [](PrimExpr v) { return make_zero(v.dtype()) - v; });
}
te::Tensor abs(const te::Tensor& x) {
  return Unary(x, "abs", Operands::kNumeric, [](PrimExpr v) {
    if (v.dtype().is_float()) return loom::fabs(v);
    if (v.dtype().is_uint()) return v;
    return select(v < make_zero(v.dtype()), make_zero(v.dtype()) - v, v);
  });
}
te::Tensor sign(const te::Tensor& x) {
  return Unary(x, "sign", Operands::kNumeric, [](PrimExpr v) {
    DataType t = v.dtype();
    PrimExpr zero = make_zero(t);
    return select(v > zero, Constant(t, 1), select(v < zero, Constant(t, -1), zero));
  });
}

#define LOOM_TOPI_FLOAT_UNARY(NAME)                                                      \
  te::Tensor NAME(const te::Tensor& x) {                                                 \
    return Unary(x, #NAME, Operands::kFloat, [](PrimExpr v) { return loom::NAME(v); }); \
  }
LOOM_TOPI_FLOAT_UNARY(exp)
LOOM_TOPI_FLOAT_UNARY(log)
LOOM_TOPI_FLOAT_UNARY(sqrt)
LOOM_TOPI_FLOAT_UNARY(rsqrt)
LOOM_TOPI_FLOAT_UNARY(sigmoid)
LOOM_TOPI_FLOAT_UNARY(tanh)
LOOM_TOPI_FLOAT_UNARY(erf)
LOOM_TOPI_FLOAT_UNARY(sin)
LOOM_TOPI_FLOAT_UNARY(cos)
LOOM_TOPI_FLOAT_UNARY(floor)
LOOM_TOPI_FLOAT_UNARY(ceil)
LOOM_TOPI_FLOAT_UNARY(round)
#undef LOOM_TOPI_FLOAT_UNARY

te::Tensor reciprocal(const te::Tensor& x) {
  return Unary(x, "reciprocal", Operands::kFloat,
               [](PrimExpr v) { return Constant(v.dtype(), 1) / v; });
}
te::Tensor gelu(const te::Tensor& x) {
  return Unary(x, "gelu", Operands::kFloat, [](PrimExpr v) {
    DataType t = v.dtype();
    return v * Constant(t, 0.5) * (Constant(t, 1) + loom::erf(v * Constant(t, M_SQRT1_2)));
  });
}
te::Tensor relu(const te::Tensor& x) {
  return Unary(x, "relu", Operands::kNumeric, [](PrimExpr v) { return max(v, make_zero(v.dtype())); });
}
te::Tensor leaky_relu(const te::Tensor& x, double alpha) {
  return Unary(x, "leaky_relu", Operands::kFloat, [alpha](PrimExpr v) {
    return select(v < make_zero(v.dtype()), v * Constant(v.dtype(), alpha), v);
  });
}
te::Tensor elu(const te::Tensor& x, double alpha) {
  return Unary(x, "elu", Operands::kFloat, [alpha](PrimExpr v) {
    DataType t = v.dtype();
    return select(v < make_zero(t), Constant(t, alpha) * (loom::exp(v) - Constant(t, 1)), v);
  });
}
te::Tensor selu(const te::Tensor& x, double alpha, double gamma) {
  return Unary(x, "selu", Operands::kFloat, [alpha, gamma](PrimExpr v) {
    DataType t = v.dtype();
    PrimExpr negative_part = Constant(t, alpha) * (loom::exp(v) - Constant(t, 1));
    return Constant(t, gamma) * select(v <= make_zero(t), negative_part, v);
  });
}
te::Tensor softplus(const te::Tensor& x) {
  // max(v, 0) + log(1 + exp(-|v|)): exp never overflows, and large v gives v exactly.
  return Unary(x, "softplus", Operands::kFloat, [](PrimExpr v) {
    DataType t = v.dtype();
    return max(v, make_zero(t)) + loom::log(Constant(t, 1) + loom::exp(-loom::fabs(v)));
  });
}
te::Tensor hard_sigmoid(const te::Tensor& x, double alpha, double beta) {
  return Unary(x, "hard_sigmoid", Operands::kFloat, [alpha, beta](PrimExpr v) {
    DataType t = v.dtype();
    return max(make_zero(t), min(Constant(t, 1), Constant(t, alpha) * v + Constant(t, beta)));
  });
}
te::Tensor hard_swish(const te::Tensor& x) {
  return Unary(x, "hard_swish", Operands::kFloat, [](PrimExpr v) {
    DataType t = v.dtype();
    return v * max(make_zero(t), min(Constant(t, 1), v * Constant(t, 1.0 / 6) + Constant(t, 0.5)));
  });
}
te::Tensor clip(const te::Tensor& x, double lo, double hi) {
  LOOM_CHECK_USER(lo <= hi) << "clip of '" << x.name() << "': min " << lo
                            << " is greater than max " << hi;
  return Unary(x, "clip", Operands::kNumeric, [lo, hi](PrimExpr v) {
    return min(max(v, Constant(v.dtype(), lo)), Constant(v.dtype(), hi));
  });
}
te::Tensor logical_not(const te::Tensor& x) {
  return Unary(x, "logical_not", Operands::kBool, [](PrimExpr v) { return !v; });
}
te::Tensor cast(const te::Tensor& x, DataType dtype) {
  return te::compute(
      x.shape(), [&](const Array<Var>& i) { return loom::cast(dtype, x(i)); }, "cast", kElemwise);
}

te::Tensor add(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "add", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x + y; });
}
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "subtract", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x - y; });
}
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "multiply", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x * y; });
}
namespace {

// x `divide`d by y for integers, without the divisions the processor traps on: a zero
// divisor (undefined in ONNX) gives 0, and a signed divisor of -1 negates (wrapping, so the
// smallest value divided by -1 is itself) or leaves no remainder.
PrimExpr IntegerDivision(const PrimExpr& x, const PrimExpr& y, bool remainder,
                         PrimExpr (*divide)(PrimExpr, PrimExpr)) {
  const DataType t = x.dtype();
  const PrimExpr zero = make_zero(t);
  if (!t.is_int()) return select(y == zero, zero, divide(x, select(y == zero, Constant(t, 1), y)));
  const PrimExpr minus_one = Constant(t, -1);
  const PrimExpr safe = select(y == zero || y == minus_one, Constant(t, 1), y);
  return select(y == zero, zero,
                select(y == minus_one, remainder ? zero : zero - x, divide(x, safe)));
}

}  // namespace

te::Tensor divide(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "divide", Operands::kNumeric, [](PrimExpr x, PrimExpr y) {
    if (x.dtype().is_float()) return x / y;
    return IntegerDivision(x, y, false, [](PrimExpr n, PrimExpr d) { return truncdiv(n, d); });
  });
}
te::Tensor mod(const te::Tensor& a, const te::Tensor& b, bool fmod) {
  LOOM_CHECK_USER(fmod || !a.dtype().is_float())
      << "mod of '" << a.name() << "': float operands need fmod = true (the result takes "
      << "the sign of the dividend), as ONNX Mod requires";
  return Binary(a, b, "mod", Operands::kNumeric, [fmod](PrimExpr x, PrimExpr y) {
    if (x.dtype().is_float()) return truncmod(x, y);
    if (fmod) {
      return IntegerDivision(x, y, true, [](PrimExpr n, PrimExpr d) { return truncmod(n, d); });
    }
    return IntegerDivision(x, y, true, [](PrimExpr n, PrimExpr d) { return floormod(n, d); });
  });
}
te::Tensor power(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "power", Operands::kFloat, [](PrimExpr x, PrimExpr y) { return loom::pow(x, y); });
}
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "maximum", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return max(x, y); });
}
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "minimum", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return min(x, y); });
}
te::Tensor prelu(const te::Tensor& x, const te::Tensor& slope) {
  return Binary(x, slope, "prelu", Operands::kFloat, [](PrimExpr v, PrimExpr s) {
    return select(v < make_zero(v.dtype()), v * s, v);
  });
}
te::Tensor equal(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "equal", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x == y; });
}
te::Tensor less(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "less", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x < y; });
}
te::Tensor less_equal(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "less_equal", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x <= y; });
}
te::Tensor greater(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "greater", Operands::kNumeric, [](PrimExpr x, PrimExpr y) { return x > y; });
}
te::Tensor greater_equal(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "greater_equal", Operands::kNumeric,
                [](PrimExpr x, PrimExpr y) { return x >= y; });
}
te::Tensor left_shift(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "left_shift", Operands::kInteger, [](PrimExpr x, PrimExpr y) {
    return call_intrin(x.dtype(), "shift_left", {x, y});
  });
}
te::Tensor right_shift(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "right_shift", Operands::kInteger, [](PrimExpr x, PrimExpr y) {
    return call_intrin(x.dtype(), "shift_right", {x, y});
  });
}
te::Tensor logical_and(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "logical_and", Operands::kBool, [](PrimExpr x, PrimExpr y) { return x && y; });
}
te::Tensor logical_or(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "logical_or", Operands::kBool, [](PrimExpr x, PrimExpr y) { return x || y; });
}
te::Tensor logical_xor(const te::Tensor& a, const te::Tensor& b) {
  return Binary(a, b, "logical_xor", Operands::kBool, [](PrimExpr x, PrimExpr y) { return x != y; });
}
te::Tensor where(const te::Tensor& condition, const te::Tensor& a, const te::Tensor& b) {
  CheckOperand(condition, Operands::kBool, "where");
  LOOM_CHECK_USER(a.dtype() == b.dtype())
      << "where: the branches' types differ ('" << a.name() << "' is " << a.dtype().str()
      << ", '" << b.name() << "' is " << b.dtype().str() << "); cast one to the other's type";
  Array<PrimExpr> shape =
      BroadcastShape(BroadcastShape(condition.shape(), a.shape(), "where"), b.shape(), "where");
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        return select(BroadcastRead(condition, i), BroadcastRead(a, i), BroadcastRead(b, i));
      },
      "where", kBroadcast);
}

}  // namespace loom::topi
