// How Python values become expressions, numbers and iteration variables for the compiler's
// bindings (declared in ir_common.h): Python and NumPy numbers, expressions, sequences of them,
// each checked with a loom::Error naming the argument.
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir_common.h"
#include "loom/ir/expr_ops.h"

namespace loom::python {

std::string TypeName(nb::handle value) { return nb::inst_name(value).c_str(); }

bool IsExprLike(nb::handle value) {
  return nb::isinstance<PrimExpr>(value) || nb::isinstance<IterVar>(value);
}

namespace {

// numpy.floating / numpy.bool_, when NumPy is imported (a NumPy scalar implies it is).
bool IsNumpyScalarOf(nb::handle value, const char* numpy_type) {
  if (std::strncmp(Py_TYPE(value.ptr())->tp_name, "numpy.", 6) != 0) return false;
  PyObject* modules = PyImport_GetModuleDict();
  PyObject* numpy = modules ? PyDict_GetItemString(modules, "numpy") : nullptr;
  if (numpy == nullptr) return false;
  PyObject* type = PyObject_GetAttrString(numpy, numpy_type);
  if (type == nullptr) {
    PyErr_Clear();
    return false;
  }
  int result = PyObject_IsInstance(value.ptr(), type);
  Py_DECREF(type);
  if (result < 0) PyErr_Clear();
  return result == 1;
}

PrimExpr IntLiteral(nb::handle value, const std::string& what) {
  int64_t v = ToInt64(value, what);
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    return IntImm(DataType::Int(32), v);
  }
  return IntImm(DataType::Int(64), v);
}

}  // namespace

bool IsLiteral(nb::handle value) { return NumberKindOf(value) != NumberKind::kNone; }

NumberKind NumberKindOf(nb::handle value) {
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) return NumberKind::kBool;
  if (PyLong_Check(o)) return NumberKind::kInt;
  if (PyFloat_Check(o)) return NumberKind::kFloat;
  if (IsExprLike(value)) return NumberKind::kNone;
  if (IsNumpyScalarOf(value, "bool_")) return NumberKind::kBool;
  // Anything operator.index accepts (numpy.int64, ...) is an integer; a sequence with
  // __index__ (a NumPy array) is not one.
  if (PyIndex_Check(o) && !PySequence_Check(o)) return NumberKind::kInt;
  if (IsNumpyScalarOf(value, "floating")) return NumberKind::kFloat;
  return NumberKind::kNone;
}

int64_t ToInt64(nb::handle value, const std::string& what) {
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    LOOM_CHECK_USER(false) << what << ": expected an integer, got " << TypeName(value);
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  bool failed = overflow != 0 || (v == -1 && PyErr_Occurred());
  PyErr_Clear();
  Py_DECREF(index);
  LOOM_CHECK_USER(!failed) << what << ": the integer " << nb::str(value).c_str()
                           << " does not fit in int64";
  return v;
}

double ToDouble(nb::handle value, const std::string& what) {
  double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    LOOM_CHECK_USER(false) << what << ": expected a number that fits in a float64, got "
                           << TypeName(value) << " " << nb::str(value).c_str();
  }
  return v;
}

double ScalarFloatArg(nb::handle value, DataType dtype, const std::string& what) {
  NumberKind kind = NumberKindOf(value);
  LOOM_CHECK_USER(kind != NumberKind::kNone)
      << what << ": expected a number of type " << dtype << ", got " << TypeName(value);
  return ToDouble(value, what);
}

int64_t ScalarIntArg(nb::handle value, DataType dtype, const std::string& what) {
  NumberKind kind = NumberKindOf(value);
  LOOM_CHECK_USER(kind != NumberKind::kNone)
      << what << ": expected a number of type " << dtype << ", got " << TypeName(value);
  LOOM_CHECK_USER(kind != NumberKind::kFloat)
      << what << ": expected an integer (" << dtype << "), got a float (" << nb::str(value).c_str()
      << ")";
  int64_t v = ToInt64(value, what);
  LOOM_CHECK_USER(dtype.element_of().is_representable(v))
      << what << ": " << v << " does not fit in " << dtype;
  return v;
}

PrimExpr ToExpr(nb::handle value, const std::string& what) {
  if (nb::isinstance<PrimExpr>(value)) return nb::cast<PrimExpr>(value);
  if (nb::isinstance<IterVar>(value)) return nb::cast<IterVar>(value)->var;
  switch (NumberKindOf(value)) {
    case NumberKind::kBool:
      return PyObject_IsTrue(value.ptr()) == 1 ? const_true() : const_false();
    case NumberKind::kInt:
      return IntLiteral(value, what);
    case NumberKind::kFloat:
      return PrimExpr(static_cast<float>(ToDouble(value, what)));
    case NumberKind::kNone:
      break;
  }
  LOOM_CHECK_USER(false) << what << ": expected an expression (loom.tir.PrimExpr, an IterVar, "
                         << "a Python or NumPy int, float or bool), got " << TypeName(value);
  throw;  // unreachable
}

PrimExpr ToExprLike(nb::handle value, DataType like, const std::string& what) {
  NumberKind kind = NumberKindOf(value);
  if (kind == NumberKind::kNone || kind == NumberKind::kBool) return ToExpr(value, what);
  if (kind == NumberKind::kFloat) {
    double v = ToDouble(value, what);
    return like.is_float() ? make_const(like, v) : PrimExpr(static_cast<float>(v));
  }
  PrimExpr literal = IntLiteral(value, what);
  int64_t v = literal.as<IntImmNode>()->value;
  if (like.is_float()) return make_const(like, v);
  if ((like.is_int() || like.is_uint()) && like.element_of().is_representable(v)) {
    return make_const(like, v);
  }
  return literal;
}

Array<PrimExpr> ToExprList(nb::handle value, const std::string& what) {
  if (IsExprLike(value) || IsLiteral(value)) return {ToExpr(value, what)};
  LOOM_CHECK_USER(nb::isinstance<nb::sequence>(value) && !nb::isinstance<nb::str>(value))
      << what << ": expected an expression or a sequence of them, got " << TypeName(value);
  Array<PrimExpr> result;
  size_t index = 0;
  for (nb::handle item : value) {
    result.push_back(ToExpr(item, what + " [" + std::to_string(index++) + "]"));
  }
  return result;
}

Array<IterVar> ToIterVars(nb::handle value, const std::string& what) {
  if (nb::isinstance<IterVar>(value)) return {nb::cast<IterVar>(value)};
  bool sequence = nb::isinstance<nb::sequence>(value) && !nb::isinstance<nb::str>(value);
  Array<IterVar> result;
  if (sequence) {
    for (nb::handle item : value) {
      LOOM_CHECK_USER(nb::isinstance<IterVar>(item))
          << what << ": expected IterVars (from te.reduce_axis, op.axis or a schedule "
          << "primitive), got " << TypeName(item) << " in the sequence";
      result.push_back(nb::cast<IterVar>(item));
    }
    return result;
  }
  LOOM_CHECK_USER(false) << what << ": expected an IterVar or a sequence of IterVars, got "
                         << TypeName(value);
  throw;  // unreachable
}

DataType ParseDtype(const std::string& text, const std::string& what) {
  try {
    return DataType::Parse(text);
  } catch (const Error& error) {
    LOOM_CHECK_USER(false) << what << ": '" << text << "' is not a dtype (" << error.what()
                           << "); use names such as \"float32\", \"int8\", \"bool\"";
    throw;
  }
}

}  // namespace loom::python
