// _loom.nd: Loom's NDArray in Python, exchanged with NumPy, PyTorch and any other DLPack
// framework without copying, both ways: np.from_dlpack(a) and torch.from_dlpack(a) view a
// Loom array's memory; from_dlpack(x) makes a Loom array over x's.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sstream>

#include "bindings.h"
#include "loom/support/error.h"

namespace loom::python {
namespace {

using runtime::NDArray;

// The names DLPack capsules carry (the DLPack Python specification): a fresh one, and one a
// consumer has taken ownership of.
constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// A producer's deleter may release Python objects (NumPy's drops its array), and the last
// reference to an imported array can die on a thread without the GIL (a model run): the
// deleter then runs under the GIL.
DLManagedTensor* WithGilDeleter(DLManagedTensor* producer) {
  auto* wrapper = new DLManagedTensor{};
  wrapper->dl_tensor = producer->dl_tensor;
  wrapper->manager_ctx = producer;
  wrapper->deleter = [](DLManagedTensor* self) {
    auto* original = static_cast<DLManagedTensor*>(self->manager_ctx);
    if (original->deleter != nullptr && Py_IsInitialized()) {
      PyGILState_STATE state = PyGILState_Ensure();
      original->deleter(original);
      PyGILState_Release(state);
    }
    delete self;
  };
  return wrapper;
}

// Takes the DLManagedTensor out of a capsule nobody has consumed yet.
NDArray FromCapsule(nb::handle capsule, const std::string& what) {
  LOOM_CHECK_USER(PyCapsule_CheckExact(capsule.ptr()))
      << what << ": __dlpack__() returned " << nb::inst_name(capsule).c_str()
      << ", not a DLPack capsule";
  const char* name = PyCapsule_GetName(capsule.ptr());
  const std::string capsule_name = name != nullptr ? name : "";
  LOOM_CHECK_USER(capsule_name != kUsedCapsuleName)
      << what << ": the DLPack capsule was already consumed (a capsule can be imported once; "
      << "call __dlpack__() again for another)";
  LOOM_CHECK_USER(capsule_name == kCapsuleName)
      << what << ": a DLPack capsule named '" << capsule_name << "'; Loom takes DLPack 0.6 "
      << "capsules ('" << kCapsuleName << "'), which __dlpack__() gives without max_version";
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  return NDArray::FromDLPack(WithGilDeleter(managed));
}

// The capsule's destructor: a capsule nobody consumed still owns its tensor.
void DeleteUnconsumedCapsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

std::string DeviceText(DLDevice device) {
  const char* name = device.device_type == kDLCPU      ? "cpu"
                     : device.device_type == kDLCUDA   ? "cuda"
                     : device.device_type == kDLOpenCL ? "opencl"
                                                       : "device";
  return std::string(name) + ":" + std::to_string(device.device_id);
}

std::string Repr(const NDArray& a) {
  std::ostringstream out;
  out << "loom.nd.NDArray(shape=" << runtime::ShapeString(a.Shape())
      << ", dtype=" << a.dtype().str() << ", device=" << DeviceText(a.device()) << ")";
  return out.str();
}

// `a` exported as a DLPack capsule sharing its memory (the DLPack Python protocol: NumPy's
// and PyTorch's from_dlpack call this). Streams concern GPU producers; a host array has none
// to synchronize. `copy=True` exports a copy.
nb::object Export(const NDArray& a, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                  nb::handle copy) {
  (void)stream;
  (void)max_version;  // the legacy (unversioned) capsule: what DLPack 0.6 consumers take
  if (!dl_device.is_none()) {
    std::pair<int, int> device;
    LOOM_CHECK_USER(nb::try_cast(dl_device, device))
        << "NDArray.__dlpack__: dl_device must be a (device type, device id) pair, got "
        << nb::inst_name(dl_device).c_str();
    auto [type, id] = device;
    LOOM_CHECK_USER(type == a.device().device_type && id == a.device().device_id)
        << "NDArray.__dlpack__: the array is on " << DeviceText(a.device())
        << "; export it where it is, or copy it with .numpy()";
  }
  NDArray source = a;
  if (!copy.is_none()) {
    LOOM_CHECK_USER(PyBool_Check(copy.ptr()))
        << "NDArray.__dlpack__: copy must be True, False or None, got "
        << nb::inst_name(copy).c_str();
    if (copy.ptr() == Py_True) source = a.CopyTo(a.device());
  }
  PyObject* capsule = PyCapsule_New(source.ToDLPack(), kCapsuleName, DeleteUnconsumedCapsule);
  if (capsule == nullptr) throw nb::python_error();
  return nb::steal(capsule);
}

// A NumPy array holding a host copy of `a`; a dtype NumPy has no type for (bfloat16, vector
// lanes, 1- and 4-bit integers, handles) is a loom::Error.
nb::object ToNumpy(const NDArray& a) {
  const DataType dtype = a.dtype();
  const bool numeric =
      (dtype.is_int() || dtype.is_uint() || dtype.is_float()) && !dtype.is_bfloat16() &&
      (dtype.bits() == 8 || dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64) &&
      !(dtype.is_float() && dtype.bits() == 8);
  LOOM_CHECK_USER(dtype.lanes() == 1 && (numeric || dtype.is_bool()))
      << "NDArray.numpy(): NumPy has no " << dtype.str() << " type; read the array through "
      << "DLPack (torch.from_dlpack) or a kernel that converts it";
  NDArray host = a.CopyTo(runtime::kHostDevice);
  auto* owner = new NDArray(host);
  nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<NDArray*>(p); });
  const std::vector<int64_t> extents = host.Shape();
  std::vector<size_t> shape(extents.begin(), extents.end());
  const DLDataType t = host->dtype;
  const nb::dlpack::dtype type =
      dtype.is_bool() ? nb::dtype<bool>() : nb::dlpack::dtype{t.code, t.bits, t.lanes};
  return nb::ndarray<nb::numpy>(host.data(), shape.size(), shape.data(), keep, nullptr, type)
      .cast();
}

// A shape given as an int or a sequence of ints, each within int64.
std::vector<int64_t> ShapeOf(nb::handle shape) {
  std::vector<int64_t> extents;
  int64_t extent = 0;
  if (nb::try_cast(shape, extent)) return {extent};
  LOOM_CHECK_USER(nb::try_cast(shape, extents))
      << "loom.nd.empty: the shape must be an int or a sequence of ints within 64 bits, got "
      << nb::str(shape).c_str();
  return extents;
}

}  // namespace

runtime::NDArray ToNDArray(nb::handle value, const std::string& what) {
  if (nb::isinstance<NDArray>(value)) return nb::cast<NDArray>(value);
  if (PyCapsule_CheckExact(value.ptr())) return FromCapsule(value, what);
  LOOM_CHECK_USER(nb::hasattr(value, "__dlpack__"))
      << what << ": expected a tensor (a loom.nd.NDArray, or an object with __dlpack__ such as a "
      << "NumPy array or a PyTorch tensor), got " << nb::inst_name(value).c_str()
      << " (convert it with loom.nd.array or numpy.asarray)";
  return FromCapsule(value.attr("__dlpack__")(), what);
}

void BindNd(nb::module_& m) {
  nb::module_ nd = m.def_submodule("nd", "Tensors in Loom's memory, exchanged through DLPack");
  nb::class_<NDArray>(nd, "NDArray",
                      "A tensor (runtime::NDArray): its memory is shared, never copied, with "
                      "what from_dlpack imports or __dlpack__ exports")
      .def_prop_ro("shape",
                   [](const NDArray& a) {
                     nb::list shape;
                     for (int64_t d : a.Shape()) shape.append(d);
                     return nb::tuple(shape);
                   })
      .def_prop_ro("dtype", [](const NDArray& a) { return a.dtype().str(); })
      .def_prop_ro("device", [](const NDArray& a) { return DeviceText(a.device()); })
      .def_prop_ro("ndim", [](const NDArray& a) { return a->ndim; })
      .def_prop_ro("size", &NDArray::NumElements)
      .def_prop_ro("nbytes", &NDArray::NumBytes)
      .def_prop_ro(
          "data_ptr",
          [](const NDArray& a) { return reinterpret_cast<uintptr_t>(a.data()) + a->byte_offset; },
          "The address of the first element (to check that two views share memory)")
      .def("numpy", &ToNumpy, "A NumPy array holding a copy of this one")
      .def(
          "__array__",
          [](const NDArray& a, nb::handle dtype, nb::handle copy) {
            (void)copy;  // always a copy: the array stays valid however NumPy keeps it
            nb::object array = ToNumpy(a);
            return dtype.is_none() ? array : array.attr("astype")(dtype);
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def(
          "copyfrom",
          [](const NDArray& self, nb::handle source) {
            NDArray from = ToNDArray(source, "NDArray.copyfrom");
            LOOM_CHECK_USER(from.Shape() == self.Shape() && from.dtype() == self.dtype())
                << "NDArray.copyfrom: the source is " << from.dtype().str() << " "
                << runtime::ShapeString(from.Shape()) << ", this array " << self.dtype().str()
                << " " << runtime::ShapeString(self.Shape());
            self.CopyFrom(from);
            return self;
          },
          nb::arg("source"), "Copies a tensor of the same shape and dtype into this array")
      .def("__dlpack__", &Export, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
           nb::arg("copy") = nb::none(), "A DLPack capsule over this array's memory")
      .def("__dlpack_device__",
           [](const NDArray& a) {
             return std::make_pair(static_cast<int>(a.device().device_type), a.device().device_id);
           })
      .def("__repr__", &Repr);

  nd.def(
      "empty",
      [](nb::handle shape, const std::string& dtype) {
        return NDArray::Empty(ShapeOf(shape), DataType::Parse(dtype));
      },
      nb::arg("shape"), nb::arg("dtype") = "float32",
      "A new host array (64-byte aligned, contents unset)");
  nd.def(
      "from_dlpack", [](nb::handle value) { return ToNDArray(value, "loom.nd.from_dlpack"); },
      nb::arg("tensor"),
      "A Loom array over `tensor`'s memory (anything with __dlpack__, or a DLPack capsule); "
      "no copy is made");
}

}  // namespace loom::python
