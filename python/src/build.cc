// _loom.build: lowering a schedule to a PrimFunc, compiling PrimFuncs for a target, and calling
// the compiled functions with tensors of any DLPack framework, checked against the function's
// parameters before the call. Compiling and running release the GIL: they read only immutable
// IR (lowered PrimFuncs) and the arrays of the call. Lowering holds it: it reads the Schedule
// and its Stages, which Python code on another thread may be changing (s[C].reorder(...)).
#include "loom/target/build.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <sstream>
#include <utility>

#include "ir_common.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"

namespace loom::python {
namespace {

using runtime::NDArray;

// One compiled function and the PrimFunc it was compiled from (its parameters' types).
class Function {
 public:
  Function(runtime::Module module, PrimFunc func, std::string name)
      : module_(std::move(module)), func_(std::move(func)), name_(std::move(name)) {
    packed_ = module_.GetRequiredFunction(name_);
  }

  const std::string& name() const { return name_; }
  const PrimFunc& func() const { return func_; }

  // The parameters as "A: float32[64, 64]".
  std::string Signature() const {
    std::ostringstream out;
    out << name_ << "(";
    for (size_t i = 0; i < func_->params.size(); ++i) {
      const Var& p = func_->params[i];
      out << (i ? ", " : "");
      if (Buffer b = BufferOf(p); b.defined()) {
        out << b->name << ": " << b->dtype << "[";
        for (size_t d = 0; d < b->shape.size(); ++d) out << (d ? ", " : "") << b->shape[d];
        out << "]";
      } else {
        out << p.name() << ": " << p.dtype();
      }
    }
    out << ")";
    return out.str();
  }

  void Call(nb::args args) const {
    const size_t n = func_->params.size();
    LOOM_CHECK_USER(args.size() == n)
        << name_ << "(): takes " << n << " argument" << (n == 1 ? "" : "s") << ", got "
        << args.size() << "; the function is " << Signature();
    std::vector<NDArray> arrays;                      // alive for the call
    std::vector<std::pair<NDArray, NDArray>> staged;  // (argument, its aligned copy)
    std::vector<LoomValue> values(n);
    std::vector<int32_t> codes(n);
    std::map<const Object*, int64_t> sizes;  // symbolic dimensions bound so far
    for (size_t i = 0; i < n; ++i) {
      const Var& param = func_->params[i];
      Buffer buffer = BufferOf(param);
      std::string what = name_ + "(): argument " + std::to_string(i) + " ('" +
                         (buffer.defined() ? buffer->name : param.name()) + "')";
      if (!buffer.defined()) {
        nb::handle value = args[i];
        LOOM_CHECK_USER(!param.dtype().is_handle())
            << what << ": the parameter is a handle; it cannot be passed from Python";
        if (param.dtype().is_float()) {
          values[i].v_float64 = ScalarFloatArg(value, param.dtype(), what);
          codes[i] = kLoomArgFloat;
        } else {
          values[i].v_int64 = ScalarIntArg(value, param.dtype(), what);
          codes[i] = kLoomArgInt;
        }
        continue;
      }
      NDArray array = ToNDArray(args[i], what);
      CheckArray(array, buffer, what, &sizes);
      arrays.push_back(array);
      // The compiled code assumes the buffer's alignment (64 bytes), which Loom's and
      // PyTorch's allocators give but NumPy's need not: such an array is staged through an
      // aligned copy, written back after the call.
      auto address = reinterpret_cast<uintptr_t>(array.data()) + array->byte_offset;
      if (address % static_cast<uintptr_t>(buffer->data_alignment) != 0) {
        NDArray aligned = NDArray::Empty(array.Shape(), array.dtype());
        aligned.CopyFrom(array);
        staged.emplace_back(array, aligned);
        arrays.push_back(aligned);
      }
      values[i].v_handle = arrays.back().tensor();
      codes[i] = kLoomDLTensorHandle;
    }
    nb::gil_scoped_release release;
    runtime::RetValue ret;
    packed_.CallPacked(runtime::PackedArgs(values.data(), codes.data(), static_cast<int>(n)), &ret);
    for (const auto& [original, aligned] : staged) original.CopyFrom(aligned);
  }

 private:
  Buffer BufferOf(const Var& param) const {
    for (const auto& [var, buffer] : func_->buffer_map) {
      if (var.same_as(param)) return buffer;
    }
    return Buffer();
  }

  void CheckArray(const NDArray& array, const Buffer& buffer, const std::string& what,
                  std::map<const Object*, int64_t>* sizes) const {
    std::vector<int64_t> shape = array.Shape();
    std::string expected = buffer->dtype.str() + "[";
    for (size_t d = 0; d < buffer->shape.size(); ++d) {
      std::ostringstream dim;
      dim << buffer->shape[d];
      expected += (d ? ", " : "") + dim.str();
    }
    expected += "]";
    LOOM_CHECK_USER(array.device().device_type == kDLCPU)
        << what << ": the array is not in host memory; " << name_ << " runs on the CPU";
    LOOM_CHECK_USER(array.dtype() == buffer->dtype)
        << what << ": expected dtype " << buffer->dtype << ", got " << array.dtype()
        << " (the parameter is " << expected << "; convert with .astype)";
    LOOM_CHECK_USER(shape.size() == buffer->shape.size())
        << what << ": expected " << buffer->shape.size() << " dimensions (" << expected
        << "), got shape " << runtime::ShapeString(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      const PrimExpr& extent = buffer->shape[d];
      int64_t value = 0;
      bool matches = true;
      if (IsConstInt(extent, &value)) {
        matches = shape[d] == value;
      } else if (const auto* var = extent.as<VarNode>()) {
        auto [it, inserted] = sizes->emplace(var, shape[d]);
        matches = inserted || it->second == shape[d];
        value = it->second;
      }
      LOOM_CHECK_USER(matches) << what << ": expected shape " << expected << ", got "
                               << runtime::ShapeString(shape) << " (dimension " << d << " is "
                               << shape[d] << ", not " << value << ")";
    }
    LOOM_CHECK_USER(array.IsContiguous())
        << what << ": the array is not contiguous (a strided view); pass a contiguous one "
        << "(numpy.ascontiguousarray(x), x.contiguous() in PyTorch)";
  }

  runtime::Module module_;
  PrimFunc func_;
  std::string name_;
  runtime::PackedFunc packed_;
};

// What loom.build returns: the compiled functions by name.
class Module {
 public:
  Module(runtime::Module module, std::map<std::string, PrimFunc> funcs, Target target)
      : module_(std::move(module)), funcs_(std::move(funcs)), target_(std::move(target)) {}

  Function Get(const std::string& name) const {
    auto it = funcs_.find(name);
    LOOM_CHECK_USER(it != funcs_.end())
        << "the module has no function '" << name << "'; it has " << Names();
    return Function(module_, it->second, name);
  }
  nb::object GetAttr(const std::string& name) const {
    if (funcs_.count(name) == 0) {
      throw nb::attribute_error(
          ("the module has no function or attribute '" + name + "'; its functions: " + Names())
              .c_str());
    }
    return nb::cast(Get(name));
  }
  void Call(nb::args args) const {
    LOOM_CHECK_USER(funcs_.size() == 1)
        << "the module has several functions (" << Names() << "); call one: mod[\"name\"](...)";
    Get(funcs_.begin()->first).Call(args);
  }
  std::vector<std::string> FunctionNames() const {
    std::vector<std::string> names;
    for (const auto& [name, func] : funcs_) names.push_back(name);
    return names;
  }
  std::string Names() const {
    std::string text;
    for (const auto& [name, func] : funcs_) text += (text.empty() ? "" : ", ") + name;
    return text;
  }
  std::string target() const { return target_.str(); }
  // "llvm -mcpu=znver4": the kind and CPU, without the feature list.
  std::string ShortTarget() const {
    std::string cpu = target_.cpu();
    return target_.kind() + (cpu.empty() ? "" : " -mcpu=" + cpu);
  }
  void Export(const std::string& path) const {
    nb::gil_scoped_release release;
    ExportLibrary(module_, path);
  }

 private:
  runtime::Module module_;
  std::map<std::string, PrimFunc> funcs_;
  Target target_;
};

PrimFunc Lower(const te::Schedule& schedule, nb::handle args, const std::string& name,
               bool unflattened) {
  Array<te::Tensor> tensors = ToTensors(args, unflattened ? "schedule_to_primfunc" : "lower");
  // The GIL stays held: the schedule's stages are mutable and shared with Python, and the
  // schedule primitives (which run holding the GIL) change them in place.
  return unflattened ? te::ScheduleToPrimFunc(schedule, tensors, name)
                     : te::lower(schedule, tensors, name);
}

Module Build(const std::vector<PrimFunc>& funcs, const std::string& target_text) {
  LOOM_CHECK_USER(!funcs.empty()) << "build: no functions to build";
  std::map<std::string, PrimFunc> by_name;
  IRModule ir;
  for (const PrimFunc& f : funcs) {
    std::string name = PrimFuncNameOf(f);
    LOOM_CHECK_USER(by_name.emplace(name, f).second)
        << "build: two functions are named '" << name << "' (lower them with distinct names)";
    ir.Add(name, f);
  }
  nb::gil_scoped_release release;
  Target target = Target::Parse(target_text);
  runtime::Module module = build(ir, target);
  return Module(module, by_name, target);
}

}  // namespace

void BindBuild(nb::module_& m) {
  nb::module_ b = m.def_submodule("build", "Lowering schedules and compiling functions");

  nb::class_<Function>(b, "Function",
                       "A compiled function: call it with one tensor per tensor parameter "
                       "(loom.nd.NDArray, NumPy array, PyTorch tensor: passed without copying)")
      .def("__call__", &Function::Call, nb::sig("def __call__(self, *args: object) -> None"),
           "Runs the function (without the GIL); outputs are written into the arrays given")
      .def_prop_ro("name", &Function::name)
      .def_prop_ro("func", &Function::func, "The PrimFunc it was compiled from")
      .def("__repr__",
           [](const Function& f) { return "loom.build.Function(" + f.Signature() + ")"; });

  nb::class_<Module>(b, "Module", "Compiled functions (loom.build's result): mod[name], mod.name")
      .def("__getitem__", &Module::Get, nb::arg("name"))
      .def("get_function", &Module::Get, nb::arg("name"))
      .def("__getattr__", &Module::GetAttr, nb::arg("name"),
           nb::sig("def __getattr__(self, name: str) -> Function"))
      .def("__call__", &Module::Call, nb::sig("def __call__(self, *args: object) -> None"),
           "Calls the module's only function")
      .def("__contains__",
           [](const Module& m, const std::string& name) {
             for (const std::string& n : m.FunctionNames()) {
               if (n == name) return true;
             }
             return false;
           })
      .def_prop_ro("function_names", &Module::FunctionNames)
      .def_prop_ro("target", &Module::target, "The canonical target string it was built for")
      .def("export_library", &Module::Export, nb::arg("path"),
           "Writes the module as a shared library (runtime.load_module loads it)")
      .def("__repr__", [](const Module& m) {
        return "loom.build.Module(functions=[" + m.Names() + "], target=\"" + m.ShortTarget() +
               "\")";
      });

  b.def(
      "lower",
      [](const te::Schedule& s, nb::handle args, const std::string& name) {
        return Lower(s, args, name, false);
      },
      nb::arg("schedule"), nb::arg("args"), nb::arg("name") = "main",
      nb::sig("def lower(schedule: loom._loom.te.Schedule, args: "
              "collections.abc.Sequence[loom._loom.te.Tensor], name: str = 'main') -> "
              "loom._loom.tir.PrimFunc"),
      "The function computing the schedule's outputs, lowered by the TIR pipeline (flat "
      "buffers, vector code): what build compiles. args: inputs and outputs in parameter order");
  b.def(
      "schedule_to_primfunc",
      [](const te::Schedule& s, nb::handle args, const std::string& name) {
        return Lower(s, args, name, true);
      },
      nb::arg("schedule"), nb::arg("args"), nb::arg("name") = "main",
      nb::sig("def schedule_to_primfunc(schedule: loom._loom.te.Schedule, args: "
              "collections.abc.Sequence[loom._loom.te.Tensor], name: str = 'main') -> "
              "loom._loom.tir.PrimFunc"),
      "The schedule's loop nest before the TIR pipeline (tensors still N-dimensional): what "
      "tests of a schedule's loop structure compare");
  b.def("build", &Build, nb::arg("funcs"), nb::arg("target") = "llvm",
        "Compiles lowered functions for `target` (\"llvm\", \"llvm -mcpu=...\", \"c\") into "
        "one module, each under its name");
}

}  // namespace loom::python
