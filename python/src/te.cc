// _loom.te, part one: tensor expressions -- placeholders, computes built by a Python function of
// the index variables, reduction axes, reducers (sum, max, min, prod, comm_reducer), extern
// operations and thread axes. Schedules are in schedule.cc.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <deque>
#include <regex>
#include <sstream>

#include "ir_common.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/operation.h"

namespace loom::python {

te::Operation ToOperation(nb::handle value, const std::string& what) {
  if (nb::isinstance<OperationRef>(value)) return nb::cast<const OperationRef&>(value).op;
  if (nb::isinstance<te::Tensor>(value)) return nb::cast<const te::Tensor&>(value).op();
  LOOM_CHECK_USER(false) << what << ": expected a te.Operation or a te.Tensor, got "
                         << TypeName(value);
  throw;  // unreachable
}

Array<te::Tensor> ToTensors(nb::handle value, const std::string& what) {
  if (nb::isinstance<te::Tensor>(value)) return {nb::cast<te::Tensor>(value)};
  LOOM_CHECK_USER(nb::isinstance<nb::sequence>(value) && !nb::isinstance<nb::str>(value))
      << what << ": expected a list of te.Tensor, got " << TypeName(value);
  Array<te::Tensor> tensors;
  for (nb::handle item : value) {
    LOOM_CHECK_USER(nb::isinstance<te::Tensor>(item))
        << what << ": expected te.Tensor items, got " << TypeName(item);
    tensors.push_back(nb::cast<te::Tensor>(item));
  }
  return tensors;
}

namespace {

// Calls a Python function with positional arguments (exceptions propagate as Python's).
nb::object Call(nb::handle function, const nb::list& args) {
  nb::tuple tuple = nb::tuple(args);
  PyObject* result = PyObject_Call(function.ptr(), tuple.ptr(), nullptr);
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

bool IsSequence(nb::handle value) {
  return nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value);
}

// A compute function must take one index per dimension: checked before calling it, so the
// message names the compute rather than Python's argument error.
void CheckArity(nb::handle fcompute, size_t ndim, const std::string& name) {
  LOOM_CHECK_USER(PyCallable_Check(fcompute.ptr()))
      << "te.compute '" << name << "': fcompute must be callable (a function of the index "
      << "variables), got " << TypeName(fcompute);
  if (!nb::hasattr(fcompute, "__code__")) return;
  nb::object code = fcompute.attr("__code__");
  int argc = 0, flags = 0;
  // Not a Python function's code object: nothing to check before calling it.
  if (!nb::try_cast(code.attr("co_argcount"), argc) ||
      !nb::try_cast(code.attr("co_flags"), flags)) {
    return;
  }
  if (flags & 0x04) return;  // *args takes any number
  if (nb::hasattr(fcompute, "__self__") && !fcompute.attr("__self__").is_none()) --argc;
  int defaults = 0;
  if (nb::hasattr(fcompute, "__defaults__") && !fcompute.attr("__defaults__").is_none()) {
    defaults = static_cast<int>(nb::len(nb::object(fcompute.attr("__defaults__"))));
  }
  const int n = static_cast<int>(ndim);
  LOOM_CHECK_USER(argc - defaults <= n && n <= argc)
      << "te.compute '" << name << "': the function takes " << argc
      << " index arguments but the shape has " << ndim << " dimensions (pass one index "
      << "variable per dimension: lambda i, j: ... for a 2-d shape)";
}

std::string OperationKind(const te::Operation& op) {
  if (dynamic_cast<const te::ComputeOpNode*>(op.get())) return "compute";
  if (dynamic_cast<const te::PlaceholderOpNode*>(op.get())) return "placeholder";
  if (dynamic_cast<const te::ExternOpNode*>(op.get())) return "extern";
  return "operation";
}

std::string ShapeText(const Array<PrimExpr>& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

nb::object Compute(nb::handle shape_value, nb::handle fcompute, const std::string& name,
                   const std::string& tag) {
  Array<PrimExpr> shape = ToExprList(shape_value, "te.compute '" + name + "': shape");
  CheckArity(fcompute, shape.size(), name);
  bool multiple = false;
  std::function<Array<PrimExpr>(const Array<Var>&)> body = [&](const Array<Var>& vars) {
    nb::list args;
    for (const Var& v : vars) args.append(nb::cast(v));
    nb::object result = Call(fcompute, args);
    std::string what = "te.compute '" + name + "': the function's result";
    if (IsSequence(result)) {
      multiple = true;
      return ToExprList(result, what);
    }
    LOOM_CHECK_USER(!nb::isinstance<te::Tensor>(result))
        << what << " is a tensor; return an element of it (A[i, j]), not the tensor";
    return Array<PrimExpr>{ToExpr(result, what)};
  };
  Array<te::Tensor> outputs = te::compute(shape, body, name, tag);
  if (multiple) return nb::cast(outputs);
  return nb::cast(outputs.at(0));
}

Range ToRange(nb::handle dom, const std::string& what) {
  if (nb::isinstance<Range>(dom)) return nb::cast<Range>(dom);
  if (IsSequence(dom)) {
    LOOM_CHECK_USER(nb::len(dom) == 2)
        << what << ": a range as a tuple is (begin, end), got " << nb::len(dom) << " values";
    PrimExpr begin = ToExpr(dom[0], what), end = ToExpr(dom[1], what);
    return RangeFromBeginEnd(begin, end);
  }
  PrimExpr extent = ToExpr(dom, what);
  return Range(make_zero(extent.dtype()), extent);
}

PrimExpr Where(nb::handle where, const std::string& what) {
  return where.is_none() ? PrimExpr() : ToExpr(where, what + ": where");
}

using ReduceFn = PrimExpr (*)(const PrimExpr&, const Array<IterVar>&, PrimExpr);
using ElementwiseFn = PrimExpr (*)(PrimExpr, PrimExpr);

bool IsAxes(nb::handle axis) {
  if (nb::isinstance<IterVar>(axis)) return true;
  if (!IsSequence(axis)) return false;
  for (nb::handle item : axis) {
    if (!nb::isinstance<IterVar>(item)) return false;
  }
  return true;
}

const char* kElementwiseReducerSig =
    "def NAME(expr: loom._loom.tir.PrimExpr | int | float, axis: loom._loom.tir.IterVar | "
    "collections.abc.Sequence[loom._loom.tir.IterVar] | "
    "loom._loom.tir.PrimExpr | int | float, where: loom._loom.tir.PrimExpr | bool | None = None) "
    "-> "
    "loom._loom.tir.PrimExpr";
const char* kReducerSig =
    "def NAME(expr: loom._loom.tir.PrimExpr | int | float, axis: loom._loom.tir.IterVar | "
    "collections.abc.Sequence[loom._loom.tir.IterVar], "
    "where: loom._loom.tir.PrimExpr | bool | None = None) -> loom._loom.tir.PrimExpr";

void DefReducer(nb::module_& te, const char* name, ReduceFn reduce, ElementwiseFn elementwise,
                const char* doc) {
  std::string what = std::string("te.") + name;
  static std::deque<std::string> signatures;
  signatures.push_back(std::regex_replace(
      elementwise != nullptr ? kElementwiseReducerSig : kReducerSig, std::regex("NAME"), name));
  te.def(
      name,
      [reduce, elementwise, what](nb::handle expr, nb::handle axis, nb::handle where) {
        if (elementwise != nullptr && !IsAxes(axis)) {  // te.max(a, b): the larger value
          LOOM_CHECK_USER(where.is_none()) << what << "(a, b) takes no where";
          PrimExpr a = ToExpr(expr, what);
          PrimExpr b = ToExprLike(axis, a.dtype(), what);
          return elementwise(a, b);
        }
        return reduce(ToExpr(expr, what), ToIterVars(axis, what + ": axis"), Where(where, what));
      },
      nb::arg("expr"), nb::arg("axis"), nb::arg("where") = nb::none(),
      nb::sig(signatures.back().c_str()), doc);
}

// A user-defined reducer: fcombine(x, y) (tuples of Vars for a tuple reducer) and
// fidentity(*dtypes) (one identity per value).
class Reducer {
 public:
  Reducer(nb::object fcombine, nb::object fidentity, std::string name)
      : fcombine_(std::move(fcombine)), fidentity_(std::move(fidentity)), name_(std::move(name)) {}

  nb::object operator()(nb::handle sources, nb::handle axis, nb::handle where) const {
    std::string what = "reducer '" + name_ + "'";
    LOOM_CHECK_USER(fcombine_.is_valid() && fidentity_.is_valid())
        << what << ": the reducer was cleared by Python's garbage collector";
    bool tuple = IsSequence(sources);
    Array<PrimExpr> values = ToExprList(sources, what);
    auto combine = [&](const Array<Var>& lhs, const Array<Var>& rhs) {
      nb::list args;
      if (lhs.size() == 1) {
        args.append(nb::cast(lhs[0]));
        args.append(nb::cast(rhs[0]));
      } else {
        args.append(nb::tuple(nb::cast(lhs)));
        args.append(nb::tuple(nb::cast(rhs)));
      }
      return ToExprList(Call(fcombine_, args), what + ": fcombine's result");
    };
    auto identity = [&](const Array<DataType>& dtypes) {
      nb::list args;
      for (DataType t : dtypes) args.append(nb::cast(t.str()));
      return ToExprList(Call(fidentity_, args), what + ": fidentity's result");
    };
    te::CommReducerBuilder builder(combine, identity, name_);
    Array<PrimExpr> result = builder(values, ToIterVars(axis, what + ": axis"), Where(where, what));
    if (tuple) return nb::tuple(nb::cast(result));
    return nb::cast(result.at(0));
  }
  const std::string& name() const { return name_; }

  // Cyclic garbage collection: the reducer holds Python functions, which may hold the reducer
  // (a module-level reducer, its lambdas and the module's globals form a cycle).
  static int Traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self)) return 0;
    const Reducer* r = nb::inst_ptr<Reducer>(self);
    Py_VISIT(r->fcombine_.ptr());
    Py_VISIT(r->fidentity_.ptr());
    return 0;
  }
  static int Clear(PyObject* self) {
    if (!nb::inst_ready(self)) return 0;
    Reducer* r = nb::inst_ptr<Reducer>(self);
    // Py_CLEAR's order: null the members first, then release what they held.
    nb::object fcombine = std::move(r->fcombine_), fidentity = std::move(r->fidentity_);
    return 0;
  }

 private:
  nb::object fcombine_, fidentity_;
  std::string name_;
};

PyType_Slot reducer_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&Reducer::Traverse)},
                               {Py_tp_clear, reinterpret_cast<void*>(&Reducer::Clear)},
                               {0, nullptr}};

nb::object Extern(nb::handle shape, nb::handle inputs, nb::handle fcompute, const std::string& name,
                  nb::handle dtype, const std::string& tag) {
  std::string what = "te.extern '" + name + "'";
  Array<te::Tensor> ins = ToTensors(inputs, what + ": inputs");
  bool multiple = IsSequence(shape) && nb::len(shape) > 0 && IsSequence(shape[0]);
  Array<Array<PrimExpr>> shapes;
  if (multiple) {
    for (nb::handle s : shape) shapes.push_back(ToExprList(s, what + ": shape"));
  } else {
    shapes.push_back(ToExprList(shape, what + ": shape"));
  }
  Array<DataType> dtypes;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (dtype.is_none()) {
      dtypes.push_back(ins.empty() ? DataType::Float(32) : ins[0].dtype());
    } else if (nb::isinstance<nb::str>(dtype)) {
      dtypes.push_back(ParseDtype(nb::cast<std::string>(dtype), what));
    } else {
      LOOM_CHECK_USER(IsSequence(dtype) && nb::len(dtype) == shapes.size())
          << what << ": dtype is a name or one name per output (" << shapes.size() << "), got "
          << TypeName(dtype);
      nb::object item = dtype[i];
      LOOM_CHECK_USER(nb::isinstance<nb::str>(item))
          << what << ": dtype [" << i << "]: expected a dtype name (\"float32\"), got "
          << TypeName(item);
      dtypes.push_back(ParseDtype(nb::cast<std::string>(item), what));
    }
  }
  auto body = [&](const Array<Buffer>& in_buffers, const Array<Buffer>& out_buffers) {
    nb::list args;
    args.append(nb::cast(in_buffers));
    args.append(nb::cast(out_buffers));
    nb::object result = Call(fcompute, args);
    if (nb::isinstance<Stmt>(result)) return nb::cast<Stmt>(result);
    return Stmt(Evaluate(ToExpr(result, what + ": fcompute's result (a Stmt or a call)")));
  };
  Array<te::Tensor> outputs = te::extern_op(shapes, dtypes, ins, body, name, tag);
  if (multiple) return nb::cast(outputs);
  return nb::cast(outputs.at(0));
}

}  // namespace

void BindTe(nb::module_& m) {
  nb::module_ te =
      m.def_submodule("te",
                      "Tensor expressions and their schedules: placeholder, compute, reduce_axis, "
                      "create_schedule and the stage primitives");

  nb::class_<OperationRef>(te, "Operation",
                           "What computes a tensor: a placeholder, a compute or an extern")
      .def_prop_ro("name", [](const OperationRef& o) { return o.op->name; })
      .def_prop_ro("tag", [](const OperationRef& o) { return o.op->tag; })
      .def_prop_ro(
          "kind", [](const OperationRef& o) { return OperationKind(o.op); },
          "The kind of operation: placeholder, compute or extern")
      .def_prop_ro("num_outputs", [](const OperationRef& o) { return o.op->num_outputs(); })
      .def(
          "output",
          [](const OperationRef& o, int i) {
            LOOM_CHECK_USER(i >= 0 && i < o.op->num_outputs())
                << "operation '" << o.op->name << "' has " << o.op->num_outputs()
                << " outputs; output(" << i << ") does not exist";
            return o.op->output(i);
          },
          nb::arg("index"))
      .def_prop_ro("input_tensors", [](const OperationRef& o) { return o.op->InputTensors(); })
      .def_prop_ro(
          "axis",
          [](const OperationRef& o) {
            auto* c = dynamic_cast<const te::ComputeOpNode*>(o.op.get());
            return c ? c->axis : Array<IterVar>{};
          },
          "A compute's data-parallel axes, one per dimension (empty otherwise)")
      .def_prop_ro(
          "reduce_axis",
          [](const OperationRef& o) {
            auto* c = dynamic_cast<const te::ComputeOpNode*>(o.op.get());
            return c ? c->reduce_axis : Array<IterVar>{};
          },
          "A compute's reduction axes")
      .def_prop_ro(
          "body",
          [](const OperationRef& o) {
            auto* c = dynamic_cast<const te::ComputeOpNode*>(o.op.get());
            return c ? c->body : Array<PrimExpr>{};
          },
          "A compute's expressions, one per output")
      .def("__eq__",
           [](const OperationRef& a, nb::handle b) {
             return nb::isinstance<OperationRef>(b) && nb::cast<const OperationRef&>(b).op == a.op;
           })
      .def("__ne__",
           [](const OperationRef& a, nb::handle b) {
             return !(nb::isinstance<OperationRef>(b) &&
                      nb::cast<const OperationRef&>(b).op == a.op);
           })
      .def("__hash__", [](const OperationRef& o) { return std::hash<const void*>()(o.op.get()); })
      .def("__repr__", [](const OperationRef& o) {
        return "Operation(" + OperationKind(o.op) + " '" + o.op->name + "')";
      });

  nb::class_<te::Tensor>(te, "Tensor",
                         "An output of an operation. T[i, j] (or T(i, j)) reads an element.")
      .def_prop_ro("op", [](const te::Tensor& t) { return OperationRef{t.op()}; })
      .def_prop_ro("value_index", &te::Tensor::value_index)
      .def_prop_ro("shape", [](const te::Tensor& t) { return t.shape(); })
      .def_prop_ro("ndim", &te::Tensor::ndim)
      .def_prop_ro("dtype", [](const te::Tensor& t) { return t.dtype().str(); })
      .def_prop_ro("name", [](const te::Tensor& t) { return t.name(); })
      .def_prop_ro(
          "buffer", [](const te::Tensor& t) { return t.buffer(); },
          "The tensor's storage (what lowered functions take)")
      .def(
          "__getitem__",
          [](const te::Tensor& t, nb::handle indices) {
            return t(ToExprList(indices, "tensor '" + t.name() + "': index"));
          },
          nb::arg("indices"),
          nb::sig("def __getitem__(self, indices: loom._loom.tir.PrimExpr | loom._loom.tir.IterVar "
                  "| int | "
                  "tuple[loom._loom.tir.PrimExpr | loom._loom.tir.IterVar | int, ...]) -> "
                  "loom._loom.tir.PrimExpr"))
      .def(
          "__call__",
          [](const te::Tensor& t, nb::args indices) {
            return t(ToExprList(indices, "tensor '" + t.name() + "': index"));
          },
          nb::sig("def __call__(self, *indices: loom._loom.tir.PrimExpr | loom._loom.tir.IterVar | "
                  "int) -> loom._loom.tir.PrimExpr"))
      .def("__eq__",
           [](const te::Tensor& a, nb::handle b) {
             return nb::isinstance<te::Tensor>(b) && nb::cast<const te::Tensor&>(b) == a;
           })
      .def("__ne__",
           [](const te::Tensor& a, nb::handle b) {
             return !(nb::isinstance<te::Tensor>(b) && nb::cast<const te::Tensor&>(b) == a);
           })
      .def("__hash__",
           [](const te::Tensor& t) {
             return std::hash<const void*>()(t.op().get()) ^ static_cast<size_t>(t.value_index());
           })
      .def("__repr__", [](const te::Tensor& t) {
        std::string text = "Tensor(shape=" + ShapeText(t.shape()) + ", op.name=" + t.op()->name;
        if (t.op()->num_outputs() > 1) text += ", value_index=" + std::to_string(t.value_index());
        return text + ", dtype=" + t.dtype().str() + ")";
      });

  te.def(
      "placeholder",
      [](nb::handle shape, const std::string& dtype, const std::string& name) {
        return te::placeholder(ToExprList(shape, "te.placeholder '" + name + "': shape"),
                               ParseDtype(dtype, "te.placeholder '" + name + "'"), name);
      },
      nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("name") = "placeholder",
      nb::sig("def placeholder(shape: collections.abc.Sequence[loom._loom.tir.PrimExpr | int] | "
              "loom._loom.tir.PrimExpr | int, dtype: str = "
              "'float32', name: str = 'placeholder') -> Tensor"),
      "An input tensor");
  // Two signatures for the stubs (one implementation: the first always matches): a function
  // returning a tuple makes a list of tensors, one returning an expression a tensor.
  const char* compute_doc =
      "A tensor whose element at (i, j, ...) is fcompute(i, j, ...), called once with the "
      "index variables; a function returning a tuple makes one tensor per value (a list)";
  te.def("compute", &Compute, nb::arg("shape"), nb::arg("fcompute"), nb::arg("name") = "compute",
         nb::arg("tag") = "",
         nb::sig("def compute(shape: collections.abc.Sequence[loom._loom.tir.PrimExpr | int] | "
                 "loom._loom.tir.PrimExpr | int, fcompute: collections.abc.Callable[..., "
                 "tuple[loom._loom.tir.PrimExpr, ...] | list[loom._loom.tir.PrimExpr]], name: "
                 "str = 'compute', tag: str = '') -> list[Tensor]"),
         compute_doc);
  te.def("compute", &Compute, nb::arg("shape"), nb::arg("fcompute"), nb::arg("name") = "compute",
         nb::arg("tag") = "",
         nb::sig("def compute(shape: collections.abc.Sequence[loom._loom.tir.PrimExpr | int] | "
                 "loom._loom.tir.PrimExpr | int, fcompute: collections.abc.Callable[..., "
                 "loom._loom.tir.PrimExpr | int | float], name: str = 'compute', tag: str = '') "
                 "-> Tensor"),
         compute_doc);
  te.def(
      "reduce_axis",
      [](nb::handle dom, const std::string& name) {
        return te::reduce_axis(ToRange(dom, "te.reduce_axis '" + name + "'"), name);
      },
      nb::arg("dom"), nb::arg("name") = "k",
      nb::sig("def reduce_axis(dom: tuple[loom._loom.tir.PrimExpr | int, loom._loom.tir.PrimExpr | "
              "int] | loom._loom.tir.Range | loom._loom.tir.PrimExpr | "
              "int, name: str = 'k') -> loom._loom.tir.IterVar"),
      "A reduction axis over dom: (begin, end), a Range, or n for [0, n)");
  te.def(
      "thread_axis",
      [](nb::handle dom_or_tag, const std::string& tag) {
        std::string t = tag;
        nb::handle dom;
        if (nb::isinstance<nb::str>(dom_or_tag)) {
          t = nb::cast<std::string>(dom_or_tag);
        } else {
          dom = dom_or_tag;
        }
        IterVar iv = te::thread_axis(t);
        if (!dom.is_valid() || dom.is_none()) return iv;
        return IterVar(ToRange(dom, "te.thread_axis"), iv->var, iv->iter_type, iv->thread_tag);
      },
      nb::arg("dom"), nb::arg("tag") = "",
      nb::sig("def thread_axis(dom: str | tuple[int, int] | loom._loom.tir.Range | int, tag: str = "
              "'') -> "
              "loom._loom.tir.IterVar"),
      "A thread axis to bind loops to: thread_axis(\"threadIdx.x\"), "
      "thread_axis((0, 2), \"vthread\")");

  DefReducer(te, "sum", te::sum, nullptr, "The sum of expr over the axes where `where` holds");
  DefReducer(te, "prod", te::prod, nullptr, "The product of expr over the axes");
  DefReducer(
      te, "max", te::max, [](PrimExpr a, PrimExpr b) { return max(a, b); },
      "The largest value of expr over the axes; te.max(a, b) is the larger of two values");
  DefReducer(
      te, "min", te::min, [](PrimExpr a, PrimExpr b) { return min(a, b); },
      "The smallest value of expr over the axes; te.min(a, b) is the smaller of two");

  nb::class_<Reducer>(te, "CommReducer", "A commutative reducer made by te.comm_reducer",
                      nb::type_slots(reducer_slots))
      .def("__call__", &Reducer::operator(), nb::arg("expr"), nb::arg("axis"),
           nb::arg("where") = nb::none(),
           nb::sig(
               "def __call__(self, expr: loom._loom.tir.PrimExpr | "
               "collections.abc.Sequence[loom._loom.tir.PrimExpr], axis: loom._loom.tir.IterVar | "
               "collections.abc.Sequence[loom._loom.tir.IterVar], where: loom._loom.tir.PrimExpr | "
               "None = None) -> loom._loom.tir.PrimExpr | "
               "tuple[loom._loom.tir.PrimExpr, ...]"),
           "The reduction of expr (a tuple of values for a tuple reducer: a tuple of "
           "reductions, the bodies of a multi-output compute)")
      .def_prop_ro("name", &Reducer::name)
      .def("__repr__", [](const Reducer& r) { return "CommReducer('" + r.name() + "')"; });
  te.def(
      "comm_reducer",
      [](nb::callable fcombine, nb::callable fidentity, const std::string& name) {
        return Reducer(fcombine, fidentity, name);
      },
      nb::arg("fcombine"), nb::arg("fidentity"), nb::arg("name") = "reducer",
      "A reducer from fcombine(x, y) (tuples of variables for several values) and "
      "fidentity(*dtypes) (the identity per value)");

  te.def(
      "min_value",
      [](const std::string& dtype) { return te::min_value(ParseDtype(dtype, "min_value")); },
      nb::arg("dtype"), "The smallest value of a type (the identity of max)");
  te.def(
      "max_value",
      [](const std::string& dtype) { return te::max_value(ParseDtype(dtype, "max_value")); },
      nb::arg("dtype"), "The largest value of a type (the identity of min)");
  te.def("extern", &Extern, nb::arg("shape"), nb::arg("inputs"), nb::arg("fcompute"),
         nb::arg("name") = "extern", nb::arg("dtype") = nb::none(), nb::arg("tag") = "",
         nb::sig(
             "def extern(shape: collections.abc.Sequence[loom._loom.tir.PrimExpr | int] | "
             "collections.abc.Sequence[collections.abc.Sequence[loom._loom.tir.PrimExpr | int]], "
             "inputs: collections.abc.Sequence[Tensor], fcompute: "
             "collections.abc.Callable[[list[loom._loom.tir.Buffer], list[loom._loom.tir.Buffer]], "
             "loom._loom.tir.Stmt | loom._loom.tir.PrimExpr], name: str = 'extern', dtype: str | "
             "collections.abc.Sequence[str] | None = "
             "None, tag: str = '') -> Tensor | list[Tensor]"),
         "Tensors computed by code outside the compiler: fcompute(input_buffers, "
         "output_buffers) returns the statement (typically tir.call_extern with "
         "buffer.access_ptr()); several shapes make several outputs");
}

}  // namespace loom::python
