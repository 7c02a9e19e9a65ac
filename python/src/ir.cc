// _loom.tir: expressions and their operators as Python writes them (`x * 4 + y`, `i // 8`,
// `tir.exp(v)`), the IR objects lowering returns (Range, IterVar, Buffer, Stmt, PrimFunc),
// Loom's text form of all of them, structural equality, and the TIR interpreter.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>

#include "ir_common.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/math.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/te/operation.h"
#include "loom/te/tensor_intrin.h"
#include "loom/tir/interpreter.h"

namespace loom::python {

namespace {

// ---------------------------------------------------------------- operators

using Binary = PrimExpr (*)(PrimExpr, PrimExpr);

PrimExpr TrueDiv(PrimExpr a, PrimExpr b) {
  LOOM_CHECK_USER(a.dtype().is_float() || b.dtype().is_float())
      << "(" << a << ") / (" << b << "): `/` is true division, defined on float expressions "
      << "only, and both operands are " << a.dtype() << " / " << b.dtype()
      << "; use `//` (floor division, as Python's) or loom.tir.truncdiv (C division), or cast "
      << "an operand to a float type first (expr.astype(\"float32\"))";
  return a / b;
}

// &, |, ^, ~ are logical on booleans and bitwise on integers; << and >> shift integers.
PrimExpr Bitwise(const char* op, const char* logical, PrimExpr a, PrimExpr b) {
  if (a.dtype().is_bool() && b.dtype().is_bool() && logical != nullptr) {
    return std::string(logical) == "and" ? (a && b) : (a || b);
  }
  LOOM_CHECK_USER(a.dtype().is_integer_like() && b.dtype().is_integer_like())
      << op << "(" << a << ", " << b << "): needs integer (or, for & and |, boolean) operands, "
      << "got " << a.dtype() << " and " << b.dtype();
  if (a.dtype() != b.dtype()) {  // widen as arithmetic does
    PrimExpr zero_sum = a + b;
    a = cast(zero_sum.dtype(), a);
    b = cast(zero_sum.dtype(), b);
  }
  return call_intrin(a.dtype(), op, {a, b});
}

struct BinaryOp {
  const char* name;
  Binary fn;
  bool reflected;  // also bind __r<name>__
};

const BinaryOp kBinaryOps[] = {
    {"add", [](PrimExpr a, PrimExpr b) { return a + b; }, true},
    {"sub", [](PrimExpr a, PrimExpr b) { return a - b; }, true},
    {"mul", [](PrimExpr a, PrimExpr b) { return a * b; }, true},
    {"truediv", TrueDiv, true},
    {"floordiv", [](PrimExpr a, PrimExpr b) { return floordiv(a, b); }, true},
    {"mod", [](PrimExpr a, PrimExpr b) { return floormod(a, b); }, true},
    {"pow", [](PrimExpr a, PrimExpr b) { return pow(a, b); }, true},
    {"lt", [](PrimExpr a, PrimExpr b) { return a < b; }, false},
    {"le", [](PrimExpr a, PrimExpr b) { return a <= b; }, false},
    {"gt", [](PrimExpr a, PrimExpr b) { return a > b; }, false},
    {"ge", [](PrimExpr a, PrimExpr b) { return a >= b; }, false},
    {"eq", [](PrimExpr a, PrimExpr b) { return a == b; }, false},
    {"ne", [](PrimExpr a, PrimExpr b) { return a != b; }, false},
    {"and", [](PrimExpr a, PrimExpr b) { return Bitwise("bitwise_and", "and", a, b); }, true},
    {"or", [](PrimExpr a, PrimExpr b) { return Bitwise("bitwise_or", "or", a, b); }, true},
    {"xor", [](PrimExpr a, PrimExpr b) { return Bitwise("bitwise_xor", nullptr, a, b); }, true},
    {"lshift", [](PrimExpr a, PrimExpr b) { return Bitwise("shift_left", nullptr, a, b); }, true},
    {"rshift", [](PrimExpr a, PrimExpr b) { return Bitwise("shift_right", nullptr, a, b); }, true},
};

// Strings outliving the bindings (nb::sig keeps a pointer).
const char* Keep(std::string text) {
  static std::deque<std::string> kept;
  kept.push_back(std::move(text));
  return kept.back().c_str();
}

nb::object NotImplemented() { return nb::borrow(Py_NotImplemented); }

// Binds the arithmetic, comparison and bitwise operators on a class whose objects are
// expressions (PrimExpr, or an IterVar standing for its variable).
template <typename T, typename Get>
void BindOperators(nb::class_<T>& cls, Get get, bool comparisons_build_exprs) {
  for (const BinaryOp& op : kBinaryOps) {
    Binary fn = op.fn;
    std::string name = op.name;
    if (!comparisons_build_exprs && (name == "eq" || name == "ne")) continue;
    for (bool reflected : {false, true}) {
      if (reflected && !op.reflected) continue;
      std::string method = std::string(reflected ? "__r" : "__") + name + "__";
      cls.def(
          Keep(method),
          [fn, reflected, method, get](const T& self, nb::handle other) -> nb::object {
            if (!IsExprLike(other) && !IsLiteral(other)) return NotImplemented();
            PrimExpr a = get(self);
            PrimExpr b = ToExprLike(other, a.dtype(), method);
            return nb::cast(reflected ? fn(b, a) : fn(a, b));
          },
          nb::arg("other"), nb::is_operator(),
          // == and != build expressions (TVM's semantics) and take any object (anything
          // else than an expression or a number is NotImplemented: x == None is False).
          nb::sig(Keep("def " + method +
                       (name == "eq" || name == "ne"
                            ? "(self, other: object) -> PrimExpr"
                            : "(self, other: PrimExpr | IterVar | int | float) -> PrimExpr"))));
    }
  }
  cls.def("__neg__", [get](const T& self) { return -get(self); });
  cls.def("__invert__", [get](const T& self) {
    PrimExpr a = get(self);
    if (a.dtype().is_bool()) return !a;
    LOOM_CHECK_USER(a.dtype().is_integer_like())
        << "~(" << a << "): needs an integer or boolean operand, got " << a.dtype();
    return call_intrin(a.dtype(), "bitwise_not", {a});
  });
  cls.def("__bool__", [get](const T& self) -> bool {
    PrimExpr a = get(self);
    if (const auto* imm = a.as<IntImmNode>()) return imm->value != 0;
    if (const auto* imm = a.as<FloatImmNode>()) return imm->value != 0;
    LOOM_CHECK_USER(false)
        << "the expression `" << a << "` has no Python truth value: it is only known when the "
        << "compiled code runs. Put the condition into the IR (loom.tir.if_then_else, "
        << "loom.tir.select; combine conditions with & and | or tir.all / tir.any), or decide "
        << "it now with loom.arith.Analyzer().can_prove(...)";
    return false;
  });
  cls.def("__hash__", [get](const T& self) { return std::hash<const void*>()(get(self).get()); });
  cls.def(
      "astype",
      [get](const T& self, const std::string& dtype) {
        return cast(ParseDtype(dtype, "astype"), get(self));
      },
      nb::arg("dtype"), "The expression converted to `dtype` (a Cast, folded on constants)");
}

template <typename T>
std::string Script(const T& node) {
  return ToScript(node);
}

// Any IR object Python holds, for printing and structural comparison.
ObjectRef ToObject(nb::handle value, const char* what) {
  if (nb::isinstance<PrimExpr>(value)) return nb::cast<PrimExpr>(value);
  if (nb::isinstance<Stmt>(value)) return nb::cast<Stmt>(value);
  if (nb::isinstance<PrimFunc>(value)) return nb::cast<PrimFunc>(value);
  if (nb::isinstance<IterVar>(value)) return nb::cast<IterVar>(value);
  if (nb::isinstance<Range>(value)) return nb::cast<Range>(value);
  if (nb::isinstance<Buffer>(value)) return nb::cast<Buffer>(value);
  if (IsLiteral(value)) return ToExpr(value, what);
  LOOM_CHECK_USER(false) << what << ": expected an IR object (PrimExpr, Stmt, PrimFunc, IterVar, "
                         << "Range, Buffer), got " << TypeName(value);
  throw;  // unreachable
}

std::pair<PrimExpr, PrimExpr> Operands(nb::handle a, nb::handle b, const std::string& what) {
  if (IsExprLike(a)) {
    PrimExpr x = ToExpr(a, what);
    return {x, ToExprLike(b, x.dtype(), what)};
  }
  if (IsExprLike(b)) {
    PrimExpr y = ToExpr(b, what);
    return {ToExprLike(a, y.dtype(), what), y};
  }
  return {ToExpr(a, what), ToExpr(b, what)};
}

const char* kOperandType = "PrimExpr | IterVar | int | float";

void DefBinary(nb::module_& m, const char* name, Binary fn, const char* doc) {
  m.def(
      name,
      [fn, name = std::string(name)](nb::handle a, nb::handle b) {
        auto [x, y] = Operands(a, b, name);
        return fn(x, y);
      },
      nb::arg("a"), nb::arg("b"),
      nb::sig(Keep(std::string("def ") + name + "(a: " + kOperandType + ", b: " + kOperandType +
                   ") -> PrimExpr")),
      doc);
}

void DefUnary(nb::module_& m, const char* name, PrimExpr (*fn)(PrimExpr), const char* doc) {
  m.def(
      name, [fn, name = std::string(name)](nb::handle x) { return fn(ToExpr(x, name)); },
      nb::arg("x"),
      nb::sig(Keep(std::string("def ") + name + "(x: " + kOperandType + ") -> PrimExpr")), doc);
}

// ---------------------------------------------------------------- interpreter

// Runs `func` on host copies of the arrays (the interpreter owns its memory), then copies
// every array back, so the caller's arrays hold the results as after a compiled call.
void Interpret(const PrimFunc& func, nb::args args) {
  LOOM_CHECK_USER(args.size() == func->params.size())
      << "interpret: the function takes " << func->params.size() << " arguments, got "
      << args.size();
  std::vector<tir::Argument> interp_args;
  std::vector<std::pair<runtime::NDArray, tir::HostArray>> arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& param = func->params[i];
    bool is_buffer = false;
    for (const auto& [var, buffer] : func->buffer_map) is_buffer |= var.same_as(param);
    std::string what = "interpret: argument " + std::to_string(i) + " ('" + param.name() + "')";
    if (!is_buffer && !param.dtype().is_handle()) {
      nb::handle value = args[i];
      interp_args.push_back(
          param.dtype().is_float()
              ? tir::Value::Float(param.dtype(), ScalarFloatArg(value, param.dtype(), what))
              : tir::Value::Int(param.dtype(), ScalarIntArg(value, param.dtype(), what)));
      continue;
    }
    runtime::NDArray array = ToNDArray(args[i], what);
    LOOM_CHECK_USER(array.device().device_type == kDLCPU)
        << what << ": the interpreter runs on host arrays; this one is not on the CPU";
    LOOM_CHECK_USER(array.IsContiguous())
        << what << ": the array is not contiguous (pass a contiguous copy, e.g. "
        << "numpy.ascontiguousarray)";
    tir::HostArray host(array.dtype(), array.Shape(), param.name());
    array.CopyToBytes(host.memory()->data(), array.NumBytes());
    arrays.emplace_back(array, host);
    interp_args.push_back(host);
  }
  {
    nb::gil_scoped_release release;
    tir::Interpreter().Run(func, interp_args);
  }
  for (auto& [array, host] : arrays) array.CopyFromBytes(host.memory()->data(), array.NumBytes());
}

std::string PrimFuncName(const PrimFunc& f) {
  auto it = f->attrs.find("global_symbol");
  if (it != f->attrs.end()) {
    if (const auto* s = it->second.as<StringImmNode>()) return s->value;
  }
  return "main";
}

std::string IterVarRepr(const IterVar& iv) {
  std::ostringstream out;
  out << "IterVar(" << iv->var.name() << ", ";
  if (iv->dom.defined()) {
    out << "range(" << iv->dom->min << ", " << iv->dom->min + iv->dom->extent << ")";
  } else {
    out << "no range";
  }
  out << ", " << IterVarTypeName(iv->iter_type);
  if (!iv->thread_tag.empty()) out << ", \"" << iv->thread_tag << "\"";
  out << ")";
  return out.str();
}

}  // namespace

std::string PrimFuncNameOf(const PrimFunc& f) { return PrimFuncName(f); }

void BindIr(nb::module_& m) {
  nb::module_ tir = m.def_submodule(
      "tir",
      "Loom's IR: expressions, their operators and math functions, functions lowering "
      "produces, and the TIR interpreter");

  auto expr = nb::class_<PrimExpr>(tir, "PrimExpr",
                                   "An expression of the IR (immutable). Operators build new "
                                   "expressions: + - * // % (floor division and modulo), / on "
                                   "floats, comparisons, & | ^ ~ << >>.");
  expr.def("__init__",
           [](PrimExpr* self, nb::int_ v) { new (self) PrimExpr(ToExpr(v, "PrimExpr")); })
      .def("__init__", [](PrimExpr* self, double v) { new (self) PrimExpr(static_cast<float>(v)); })
      .def("__init__", [](PrimExpr* self, const IterVar& iv) { new (self) PrimExpr(iv->var); })
      .def_prop_ro(
          "dtype", [](const PrimExpr& e) { return e.dtype().str(); },
          "The type, as a name: \"int32\", \"float32x8\", ...")
      .def_prop_ro(
          "kind", [](const PrimExpr& e) { return std::string(NodeKindName(e.kind())); },
          "The node kind: \"Add\", \"Var\", \"BufferLoad\", ...")
      .def(
          "same_as", [](const PrimExpr& a, const PrimExpr& b) { return a.same_as(b); },
          nb::arg("other"), "Whether both are the very same node (identity)")
      .def("script", &Script<PrimExpr>, "Loom's text of the expression")
      .def("__str__", &Script<PrimExpr>)
      .def("__repr__", &Script<PrimExpr>)
      .def("__int__",
           [](const PrimExpr& e) {
             const auto* imm = e.as<IntImmNode>();
             LOOM_CHECK_USER(imm != nullptr)
                 << "int(" << e << "): only an integer constant has a Python value";
             return imm->value;
           })
      .def("__float__", [](const PrimExpr& e) {
        if (const auto* imm = e.as<IntImmNode>()) return static_cast<double>(imm->value);
        const auto* imm = e.as<FloatImmNode>();
        LOOM_CHECK_USER(imm != nullptr) << "float(" << e << "): only a constant has a Python value";
        return imm->value;
      });
  BindOperators(
      expr, [](const PrimExpr& e) { return e; }, true);
  nb::implicitly_convertible<nb::int_, PrimExpr>();
  nb::implicitly_convertible<double, PrimExpr>();

  nb::class_<Var, PrimExpr>(tir, "Var", "A variable: equal only to itself (names print)")
      .def(
          "__init__",
          [](Var* self, const std::string& name, const std::string& dtype) {
            new (self) Var(name, ParseDtype(dtype, "tir.Var"));
          },
          nb::arg("name") = "v", nb::arg("dtype") = "int32")
      .def_prop_ro("name", [](const Var& v) { return v.name(); });
  nb::class_<IntImm, PrimExpr>(tir, "IntImm", "An integer (or boolean) constant")
      .def(
          "__init__",
          [](IntImm* self, const std::string& dtype, int64_t value) {
            new (self) IntImm(ParseDtype(dtype, "tir.IntImm"), value);
          },
          nb::arg("dtype"), nb::arg("value"))
      .def_prop_ro("value", [](const IntImm& e) { return e->value; });
  nb::class_<FloatImm, PrimExpr>(tir, "FloatImm", "A floating-point constant")
      .def(
          "__init__",
          [](FloatImm* self, const std::string& dtype, double value) {
            new (self) FloatImm(ParseDtype(dtype, "tir.FloatImm"), value);
          },
          nb::arg("dtype"), nb::arg("value"))
      .def_prop_ro("value", [](const FloatImm& e) { return e->value; });

  tir.def(
      "SizeVar",
      [](const std::string& name, const std::string& dtype) {
        return SizeVar(name, ParseDtype(dtype, "tir.SizeVar"));
      },
      nb::arg("name") = "n", nb::arg("dtype") = "int32",
      "A variable known to be non-negative (a symbolic tensor dimension)");
  tir.def(
      "const",
      [](nb::handle value, std::optional<std::string> dtype) -> PrimExpr {
        NumberKind kind = NumberKindOf(value);
        LOOM_CHECK_USER(kind != NumberKind::kNone)
            << "tir.const: expected a Python (or NumPy) int, float or bool, got "
            << TypeName(value);
        if (!dtype) return ToExpr(value, "tir.const");
        DataType t = ParseDtype(*dtype, "tir.const");
        const std::string what =
            "tir.const(" + std::string(nb::str(value).c_str()) + ", '" + *dtype + "')";
        if (t.is_float()) return make_const(t, ToDouble(value, what));
        LOOM_CHECK_USER(!t.is_handle() && !t.is_void())
            << what << ": a constant has a numeric or bool type";
        int64_t v = 0;
        if (kind == NumberKind::kFloat) {
          // An integer type truncates a float, as a C cast does, when the result fits.
          double d = std::trunc(ToDouble(value, what));
          LOOM_CHECK_USER(std::isfinite(d) && d >= -9.2e18 && d <= 9.2e18)
              << what << ": the value does not fit in " << t;
          v = static_cast<int64_t>(d);
        } else {
          v = ToInt64(value, what);
        }
        LOOM_CHECK_USER(t.element_of().is_representable(v))
            << what << ": " << v << " does not fit in " << t.element_of();
        return make_const(t, v);
      },
      nb::arg("value"), nb::arg("dtype") = nb::none(),
      nb::sig("def const(value: int | float | bool, dtype: str | None = None) -> PrimExpr"),
      "A constant; without dtype an int is int32 (int64 if it does not fit), a float float32");

  nb::class_<Range>(tir, "Range", "The integers [min, min + extent)")
      .def(
          "__init__",
          [](Range* self, nb::handle begin, nb::handle end) {
            if (end.is_none()) {
              new (self) Range(make_zero(ToExpr(begin, "Range").dtype()), ToExpr(begin, "Range"));
            } else {
              auto [b, e] = Operands(begin, end, "Range");
              new (self) Range(RangeFromBeginEnd(b, e));
            }
          },
          nb::arg("begin"), nb::arg("end") = nb::none(),
          nb::sig("def __init__(self, begin: PrimExpr | int, end: PrimExpr | int | None = None) "
                  "-> None"),
          "Range(begin, end) is [begin, end); Range(n) is [0, n)")
      .def_static(
          "from_min_extent",
          [](nb::handle min, nb::handle extent) {
            auto [a, b] = Operands(min, extent, "Range.from_min_extent");
            return Range(a, b);
          },
          nb::arg("min"), nb::arg("extent"),
          nb::sig("def from_min_extent(min: PrimExpr | int, extent: PrimExpr | int) -> Range"))
      .def_prop_ro("min", [](const Range& r) { return r->min; })
      .def_prop_ro("extent", [](const Range& r) { return r->extent; })
      .def("__repr__", [](const Range& r) {
        std::ostringstream out;
        out << "Range(min=" << r->min << ", extent=" << r->extent << ")";
        return out.str();
      });

  auto iter_var = nb::class_<IterVar>(
      tir, "IterVar",
      "An iteration variable: a loop of a stage (axis, reduce axis, split/fuse result) or a "
      "thread axis. Usable as an expression (its variable).");
  iter_var.def_prop_ro("var", [](const IterVar& iv) { return iv->var; })
      .def_prop_ro("dom",
                   [](const IterVar& iv) -> std::optional<Range> {
                     if (!iv->dom.defined()) return std::nullopt;
                     return iv->dom;
                   })
      .def_prop_ro("iter_type", [](const IterVar& iv) { return IterVarTypeName(iv->iter_type); })
      .def_prop_ro("thread_tag", [](const IterVar& iv) { return iv->thread_tag; })
      .def_prop_ro("name", [](const IterVar& iv) { return iv->var.name(); })
      .def_prop_ro("dtype", [](const IterVar& iv) { return iv->var.dtype().str(); })
      .def(
          "same_as", [](const IterVar& a, const IterVar& b) { return a.same_as(b); },
          nb::arg("other"))
      .def("__repr__", &IterVarRepr);
  // An IterVar compares by identity (`axis in stage.leaf_iter_vars` works); compare its
  // variable (iv.var == 0) to build a condition.
  BindOperators(
      iter_var, [](const IterVar& iv) { return PrimExpr(iv->var); }, false);
  iter_var.def("__eq__", [](const IterVar& a, nb::handle b) {
    return nb::isinstance<IterVar>(b) && a.same_as(nb::cast<IterVar>(b));
  });
  iter_var.def("__ne__", [](const IterVar& a, nb::handle b) {
    return !(nb::isinstance<IterVar>(b) && a.same_as(nb::cast<IterVar>(b)));
  });
  nb::implicitly_convertible<IterVar, PrimExpr>();

  nb::class_<Stmt>(tir, "Stmt", "A statement of the IR")
      .def_prop_ro("kind", [](const Stmt& s) { return std::string(NodeKindName(s.kind())); })
      .def("script", &Script<Stmt>)
      .def("__str__", &Script<Stmt>)
      .def("__repr__", &Script<Stmt>);

  nb::class_<Buffer>(tir, "Buffer",
                     "A region of memory with a shape, a dtype and (possibly symbolic) strides")
      .def_prop_ro("name", [](const Buffer& b) { return b->name; })
      .def_prop_ro("dtype", [](const Buffer& b) { return b->dtype.str(); })
      .def_prop_ro("shape", [](const Buffer& b) { return b->shape; })
      .def_prop_ro("strides", [](const Buffer& b) { return b->strides; })
      .def_prop_ro("elem_offset", [](const Buffer& b) { return b->elem_offset; })
      .def_prop_ro("data", [](const Buffer& b) { return b->data; })
      .def_prop_ro("scope", [](const Buffer& b) { return b->scope; })
      .def_prop_ro("offset_factor", [](const Buffer& b) { return b->offset_factor; })
      .def(
          "__getitem__",
          [](const Buffer& b, nb::handle indices) {
            return PrimExpr(BufferLoad(b, ToExprList(indices, "Buffer[" + b->name + "]")));
          },
          nb::arg("indices"), "The element as an expression (a BufferLoad)")
      .def(
          "access_ptr", [](const Buffer& b, int access) { return te::access_ptr(b, access); },
          nb::arg("access") = 0,
          "The address of the buffer's first element, as a handle to pass to call_extern; "
          "access: 1 read, 2 write, 3 both, 0 unknown")
      .def("__repr__", [](const Buffer& b) {
        std::ostringstream out;
        out << "Buffer(" << b->name << ", " << b->dtype << ", [";
        for (size_t i = 0; i < b->shape.size(); ++i) out << (i ? ", " : "") << b->shape[i];
        out << "], scope=\"" << b->scope << "\")";
        return out.str();
      });

  nb::class_<PrimFunc>(tir, "PrimFunc",
                       "A function of the IR (loom.lower's result); str() is its text")
      .def_prop_ro("name", &PrimFuncName, "The symbol it is built as (\"global_symbol\")")
      .def_prop_ro("params", [](const PrimFunc& f) { return f->params; })
      .def_prop_ro(
          "buffers",
          [](const PrimFunc& f) {
            std::vector<Buffer> buffers;
            for (const Var& p : f->params) {
              for (const auto& [var, buffer] : f->buffer_map) {
                if (var.same_as(p)) buffers.push_back(buffer);
              }
            }
            return buffers;
          },
          "The buffers of the parameters that are tensors, in parameter order")
      .def_prop_ro("body", [](const PrimFunc& f) { return f->body; })
      .def("script", &Script<PrimFunc>, "The function as TVMScript-like text (what str() gives)")
      .def("__str__", &Script<PrimFunc>)
      .def("__repr__", [](const PrimFunc& f) {
        std::string text = "PrimFunc(" + PrimFuncName(f) + "(";
        for (size_t i = 0; i < f->params.size(); ++i) {
          text += (i ? ", " : "") + f->params[i].name();
        }
        return text + "))";
      });

  // Arithmetic functions beyond the operators.
  DefBinary(
      tir, "floordiv", [](PrimExpr a, PrimExpr b) { return floordiv(a, b); },
      "Floor division: rounds toward -inf (Python's //)");
  DefBinary(
      tir, "floormod", [](PrimExpr a, PrimExpr b) { return floormod(a, b); },
      "The remainder of floordiv: has the divisor's sign (Python's %)");
  DefBinary(
      tir, "truncdiv", [](PrimExpr a, PrimExpr b) { return truncdiv(a, b); },
      "Truncated division: rounds toward 0 (C's /)");
  DefBinary(
      tir, "truncmod", [](PrimExpr a, PrimExpr b) { return truncmod(a, b); },
      "The remainder of truncdiv: has the dividend's sign (C's %)");
  DefBinary(tir, "div", TrueDiv, "True division (float operands)");
  DefBinary(
      tir, "min", [](PrimExpr a, PrimExpr b) { return min(a, b); }, "The smaller value");
  DefBinary(
      tir, "max", [](PrimExpr a, PrimExpr b) { return max(a, b); }, "The larger value");
  DefBinary(
      tir, "pow", [](PrimExpr a, PrimExpr b) { return pow(a, b); },
      "base ** exponent (float operands of one type)");
  DefBinary(
      tir, "logical_and", [](PrimExpr a, PrimExpr b) { return a && b; }, "a and b");
  DefBinary(
      tir, "logical_or", [](PrimExpr a, PrimExpr b) { return a || b; }, "a or b");
  DefUnary(
      tir, "logical_not", [](PrimExpr a) { return !a; }, "not a");
  tir.def(
      "all",
      [](nb::args conditions) {
        LOOM_CHECK_USER(conditions.size() > 0) << "tir.all: give at least one condition";
        PrimExpr result = ToExpr(conditions[0], "tir.all");
        for (size_t i = 1; i < conditions.size(); ++i)
          result = result && ToExpr(conditions[i], "tir.all");
        return result;
      },
      nb::sig("def all(*conditions: PrimExpr | bool) -> PrimExpr"), "c0 and c1 and ...");
  tir.def(
      "any",
      [](nb::args conditions) {
        LOOM_CHECK_USER(conditions.size() > 0) << "tir.any: give at least one condition";
        PrimExpr result = ToExpr(conditions[0], "tir.any");
        for (size_t i = 1; i < conditions.size(); ++i)
          result = result || ToExpr(conditions[i], "tir.any");
        return result;
      },
      nb::sig("def any(*conditions: PrimExpr | bool) -> PrimExpr"), "c0 or c1 or ...");
  auto ternary = [](nb::handle c, nb::handle t, nb::handle f, const char* what) {
    PrimExpr cond = ToExpr(c, what);
    auto [x, y] = Operands(t, f, what);
    return std::make_tuple(cond, x, y);
  };
  tir.def(
      "select",
      [ternary](nb::handle c, nb::handle t, nb::handle f) {
        auto [cond, x, y] = ternary(c, t, f, "tir.select");
        return select(cond, x, y);
      },
      nb::arg("condition"), nb::arg("true_value"), nb::arg("false_value"),
      nb::sig("def select(condition: PrimExpr | bool, true_value: PrimExpr | int | float, "
              "false_value: PrimExpr | int | float) -> PrimExpr"),
      "condition ? true_value : false_value, evaluating both");
  tir.def(
      "if_then_else",
      [ternary](nb::handle c, nb::handle t, nb::handle f) {
        auto [cond, x, y] = ternary(c, t, f, "tir.if_then_else");
        return te::if_then_else(cond, x, y);
      },
      nb::arg("condition"), nb::arg("true_value"), nb::arg("false_value"),
      nb::sig("def if_then_else(condition: PrimExpr | bool, true_value: PrimExpr | int | float, "
              "false_value: PrimExpr | int | float) -> PrimExpr"),
      "condition ? true_value : false_value, evaluating only the chosen branch");
  tir.def(
      "cast",
      [](const std::string& dtype, nb::handle value) {
        return cast(ParseDtype(dtype, "tir.cast"), ToExpr(value, "tir.cast"));
      },
      nb::arg("dtype"), nb::arg("value"),
      nb::sig("def cast(dtype: str, value: PrimExpr | int | float) -> PrimExpr"),
      "value converted to dtype (C++ order: cast(dtype, value); or value.astype(dtype))");

  struct Math {
    const char* name;
    PrimExpr (*fn)(PrimExpr);
  };
  const Math kMath[] = {{"exp", loom::exp},     {"exp2", loom::exp2},   {"log", loom::log},
                        {"log2", loom::log2},   {"log10", loom::log10}, {"sqrt", loom::sqrt},
                        {"rsqrt", loom::rsqrt}, {"tanh", loom::tanh},   {"sigmoid", loom::sigmoid},
                        {"erf", loom::erf},     {"sin", loom::sin},     {"cos", loom::cos},
                        {"fabs", loom::fabs},   {"floor", loom::floor}, {"ceil", loom::ceil},
                        {"round", loom::round}, {"trunc", loom::trunc}, {"isnan", loom::isnan}};
  for (const Math& f : kMath) {
    DefUnary(tir, f.name, f.fn,
             "The math intrinsic of the same name on a float expression (cast integers first)");
  }
  tir.def(
      "fma",
      [](nb::handle a, nb::handle b, nb::handle c) {
        return fma(ToExpr(a, "tir.fma"), ToExpr(b, "tir.fma"), ToExpr(c, "tir.fma"));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"),
      nb::sig("def fma(a: PrimExpr, b: PrimExpr, c: PrimExpr) -> PrimExpr"),
      "a * b + c rounded once");
  tir.def(
      "call_intrin",
      [](const std::string& dtype, const std::string& op, nb::args args) {
        return call_intrin(ParseDtype(dtype, "tir.call_intrin"), op,
                           ToExprList(args, "tir.call_intrin(" + op + ")"));
      },
      nb::arg("dtype"), nb::arg("op"), nb::arg("args"),
      nb::sig("def call_intrin(dtype: str, op: str, *args: PrimExpr | int | float) -> PrimExpr"),
      "A call of the registered intrinsic `op`");
  tir.def(
      "call_extern",
      [](const std::string& dtype, const std::string& function, nb::args args) {
        return call_extern(ParseDtype(dtype, "tir.call_extern"), function,
                           ToExprList(args, "tir.call_extern(" + function + ")"));
      },
      nb::arg("dtype"), nb::arg("function"), nb::arg("args"),
      nb::sig("def call_extern(dtype: str, function: str, *args: PrimExpr | int | float) -> "
              "PrimExpr"),
      "A call of the external C function `function`");
  tir.def(
      "Evaluate", [](nb::handle value) { return Stmt(Evaluate(ToExpr(value, "tir.Evaluate"))); },
      nb::arg("value"), nb::sig("def Evaluate(value: PrimExpr | int) -> Stmt"),
      "A statement evaluating an expression (a call) for its effect");
  tir.def(
      "SeqStmt", [](const std::vector<Stmt>& seq) { return Stmt(SeqStmt(seq)); }, nb::arg("seq"),
      "Statements run one after the other");

  tir.def(
      "structural_equal",
      [](nb::handle a, nb::handle b, bool map_free_vars) {
        return StructuralEqual(ToObject(a, "structural_equal"), ToObject(b, "structural_equal"),
                               map_free_vars);
      },
      nb::arg("lhs"), nb::arg("rhs"), nb::arg("map_free_vars") = false,
      nb::sig("def structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> "
              "bool"),
      "Same tree shape, with variables defined inside corresponding one to one (free "
      "variables too with map_free_vars); names are ignored");
  tir.def(
      "structural_hash",
      [](nb::handle a, bool map_free_vars) {
        return StructuralHash(ToObject(a, "structural_hash"), map_free_vars);
      },
      nb::arg("node"), nb::arg("map_free_vars") = false,
      nb::sig("def structural_hash(node: object, map_free_vars: bool = False) -> int"),
      "A hash agreeing with structural_equal");
  tir.def(
      "script", [](nb::handle node) { return ToScript(ToObject(node, "tir.script")); },
      nb::arg("node"), nb::sig("def script(node: object) -> str"), "Loom's text of any IR object");
  tir.def("interpret", &Interpret, nb::arg("func"), nb::arg("args"),
          nb::sig("def interpret(func: PrimFunc, *args: object) -> None"),
          "Runs `func` with the TIR interpreter (every loop serially, exact semantics): one "
          "tensor (NumPy array, torch tensor, loom.nd.NDArray) per buffer parameter and a "
          "number per scalar one. Results are written back into the arrays given.");
}

}  // namespace loom::python
