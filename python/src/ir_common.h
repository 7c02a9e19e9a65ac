// What the compiler's bindings (ir.cc, arith.cc, te.cc, schedule.cc, build.cc) share: how a
// PrimExpr reaches Python as its most specific class (Var, IntImm, FloatImm), how Python
// values become expressions, and the wrappers of te's shared_ptr objects. Every file that
// returns a PrimExpr to Python includes this header, so all of them convert alike.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <typeinfo>
#include <vector>

#include "bindings.h"
#include "loom/ir/node.h"
#include "loom/te/schedule.h"

namespace loom::python {

// An operation of te (a shared_ptr to a const node), as one Python class: te.Operation.
// Equality and hashing are by identity, as the C++ handles compare.
struct OperationRef {
  te::Operation op;
};

// A declared tensor intrinsic (te.TensorIntrin).
struct TensorIntrinRef {
  te::TensorIntrin intrin;
};

// What kind of number a Python value is: a bool (bool, numpy.bool_), an integer (int, or
// anything operator.index accepts: numpy.int64, ...), a float (float, numpy.float32, ...), or
// none of them (expressions are none).
enum class NumberKind { kNone, kBool, kInt, kFloat };
NumberKind NumberKindOf(nb::handle value);
// An expression or an iteration variable (which stands for its variable).
bool IsExprLike(nb::handle value);
// A number of any NumberKind.
bool IsLiteral(nb::handle value);
// The value of an integer (NumberKind kInt or kBool); loom::Error naming `what` when it is not
// one or does not fit in int64.
int64_t ToInt64(nb::handle value, const std::string& what);
// The value of a number as a double; loom::Error naming `what` when it is not one or is too
// large for a float64.
double ToDouble(nb::handle value, const std::string& what);
// A scalar argument of a float type `dtype` (any number), or of an integer type (an integer
// that fits `dtype`); loom::Error naming `what` otherwise.
double ScalarFloatArg(nb::handle value, DataType dtype, const std::string& what);
int64_t ScalarIntArg(nb::handle value, DataType dtype, const std::string& what);

// `value` as an expression: a PrimExpr, an IterVar (its variable), a bool (bool), an integer
// (int32, or int64 when it does not fit) or a float (float32), Python's or NumPy's. Anything
// else is a loom::Error naming `what`.
PrimExpr ToExpr(nb::handle value, const std::string& what);
// A literal next to an operand of type `like` takes that type, as in C++ (`x + 1` keeps x's
// type; a float literal next to an integer is float32). Expressions convert as ToExpr.
PrimExpr ToExprLike(nb::handle value, DataType like, const std::string& what);
// A shape or index list: one expression-like value or a sequence of them.
Array<PrimExpr> ToExprList(nb::handle value, const std::string& what);
// Axes: one IterVar or a sequence of them (loom::Error naming `what` otherwise).
Array<IterVar> ToIterVars(nb::handle value, const std::string& what);
// A dtype from its name ("float32"); loom::Error naming `what` when it is not one.
DataType ParseDtype(const std::string& text, const std::string& what);
// The Python type name of `value`, for messages.
std::string TypeName(nb::handle value);

// An operation from a te.Operation or a te.Tensor (its operation); loom::Error naming `what`
// otherwise (te.cc).
te::Operation ToOperation(nb::handle value, const std::string& what);
// Tensors from a sequence of te.Tensor (te.cc).
Array<te::Tensor> ToTensors(nb::handle value, const std::string& what);

// The symbol a function is built as: its "global_symbol" attribute, else "main" (ir.cc).
std::string PrimFuncNameOf(const PrimFunc& func);

}  // namespace loom::python

namespace nanobind::detail {

// A PrimExpr returned to Python becomes a Var, IntImm or FloatImm object when it is one, so
// that `.name` and `.value` work on what simplification or indexing returns. The handles are
// layout-identical (a handle adds no data to PrimExpr), so the object is moved as that class.
template <>
struct type_hook<loom::PrimExpr> {
  static const std::type_info* get(const loom::PrimExpr* expr) {
    if (expr != nullptr) {
      if (expr->as<loom::VarNode>()) return &typeid(loom::Var);
      if (expr->as<loom::IntImmNode>()) return &typeid(loom::IntImm);
      if (expr->as<loom::FloatImmNode>()) return &typeid(loom::FloatImm);
    }
    return &typeid(loom::PrimExpr);
  }
};

}  // namespace nanobind::detail
