// Math functions on expressions: type checks, then a call to the intrinsic of that name.
#include "loom/ir/math.h"

#include "loom/ir/printer.h"
#include "loom/support/error.h"

namespace loom {

namespace {

void CheckFloat(const char* function, const PrimExpr& x, const char* role = "argument") {
  LOOM_CHECK_USER(x.defined()) << function << ": the " << role << " is undefined";
  LOOM_CHECK_USER(x.dtype().is_float())
      << function << ": expected a float " << role << ", got " << x.dtype() << " in '" << x
      << "'; cast it first, e.g. " << function << "(cast(Float(32), x))";
}

PrimExpr UnaryFloat(const char* function, PrimExpr x) {
  CheckFloat(function, x);
  DataType t = x.dtype();
  return call_intrin(t, function, {std::move(x)});
}

}  // namespace

PrimExpr exp(PrimExpr x) { return UnaryFloat("exp", std::move(x)); }
PrimExpr exp2(PrimExpr x) { return UnaryFloat("exp2", std::move(x)); }
PrimExpr log(PrimExpr x) { return UnaryFloat("log", std::move(x)); }
PrimExpr log2(PrimExpr x) { return UnaryFloat("log2", std::move(x)); }
PrimExpr log10(PrimExpr x) { return UnaryFloat("log10", std::move(x)); }
PrimExpr sqrt(PrimExpr x) { return UnaryFloat("sqrt", std::move(x)); }
PrimExpr rsqrt(PrimExpr x) { return UnaryFloat("rsqrt", std::move(x)); }
PrimExpr tanh(PrimExpr x) { return UnaryFloat("tanh", std::move(x)); }
PrimExpr sigmoid(PrimExpr x) { return UnaryFloat("sigmoid", std::move(x)); }
PrimExpr erf(PrimExpr x) { return UnaryFloat("erf", std::move(x)); }
PrimExpr sin(PrimExpr x) { return UnaryFloat("sin", std::move(x)); }
PrimExpr cos(PrimExpr x) { return UnaryFloat("cos", std::move(x)); }
PrimExpr fabs(PrimExpr x) { return UnaryFloat("fabs", std::move(x)); }
PrimExpr floor(PrimExpr x) { return UnaryFloat("floor", std::move(x)); }
PrimExpr ceil(PrimExpr x) { return UnaryFloat("ceil", std::move(x)); }
PrimExpr round(PrimExpr x) { return UnaryFloat("round", std::move(x)); }
PrimExpr trunc(PrimExpr x) { return UnaryFloat("trunc", std::move(x)); }

PrimExpr pow(PrimExpr base, PrimExpr exponent) {
  CheckFloat("pow", base, "base");
  CheckFloat("pow", exponent, "exponent");
  LOOM_CHECK_USER(base.dtype() == exponent.dtype())
      << "pow: the base is " << base.dtype() << " but the exponent is " << exponent.dtype()
      << "; cast one so both have the same type";
  DataType t = base.dtype();
  return call_intrin(t, "pow", {std::move(base), std::move(exponent)});
}

PrimExpr fma(PrimExpr a, PrimExpr b, PrimExpr c) {
  CheckFloat("fma", a, "first factor");
  CheckFloat("fma", b, "second factor");
  CheckFloat("fma", c, "addend");
  for (const PrimExpr* other : {&b, &c}) {
    LOOM_CHECK_USER(other->dtype() == a.dtype())
        << "fma: the operands must have one type, got " << a.dtype() << ", " << b.dtype()
        << " and " << c.dtype() << " in fma(" << a << ", " << b << ", " << c << "); "
        << (other->dtype().element_of() == a.dtype().element_of()
                ? "broadcast the scalar operands to the vector's lanes"
                : "cast the operands to one float type");
  }
  DataType t = a.dtype();
  return call_intrin(t, "fma", {std::move(a), std::move(b), std::move(c)});
}

PrimExpr isnan(PrimExpr x) {
  CheckFloat("isnan", x);
  DataType t = DataType::Bool(x.dtype().lanes());
  return call_intrin(t, "isnan", {std::move(x)});
}

}  // namespace loom
