#include "loom/runtime/ndarray.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"

namespace loom::runtime {

size_t ElementBytes(DataType dtype) {
  return static_cast<size_t>(dtype.bytes()) * static_cast<size_t>(dtype.lanes());
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

namespace {

// The elements of `shape`; a negative extent, or more elements or bytes of `dtype` than a
// 64-bit size holds (their byte count would wrap to a small allocation), is a loom::Error.
int64_t CountElements(const std::vector<int64_t>& shape, DataType dtype, const char* operation) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    LOOM_CHECK_USER(extent >= 0) << operation << ": shape " << ShapeString(shape)
                                 << " has a negative extent; extents must be >= 0";
    LOOM_CHECK_USER(extent == 0 || count <= INT64_MAX / extent)
        << operation << ": shape " << ShapeString(shape) << " has too many elements";
    count *= extent;
  }
  const int64_t element_bytes = static_cast<int64_t>(ElementBytes(dtype));
  LOOM_CHECK_USER(element_bytes == 0 || count <= INT64_MAX / element_bytes)
      << operation << ": shape " << ShapeString(shape) << " of " << dtype.str()
      << " needs more than 2^63 bytes";
  return count;
}

}  // namespace

NDArray NDArray::Make(const std::vector<int64_t>& shape, DataType dtype, DLDevice device,
                      void* data, std::shared_ptr<void> memory) {
  auto container = std::make_shared<Container>();
  container->shape = shape;
  container->memory = std::move(memory);
  DLTensor& t = container->tensor;
  t.data = data;
  t.device = device;
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype.to_dlpack();
  t.shape = container->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  return NDArray(std::move(container));
}

NDArray NDArray::Empty(const std::vector<int64_t>& shape, DataType dtype, DLDevice device) {
  LOOM_CHECK_USER(!dtype.is_void()) << "NDArray::Empty: dtype void has no storage";
  int64_t count = CountElements(shape, dtype, "NDArray::Empty");
  size_t nbytes = static_cast<size_t>(count) * ElementBytes(dtype);
  DeviceAPI* api = GetDeviceAPI(static_cast<DLDeviceType>(device.device_type));
  void* data = api->AllocDataSpace(device, nbytes, kCPUAllocAlignment);
  std::shared_ptr<void> memory(data, [api, device](void* ptr) { api->FreeDataSpace(device, ptr); });
  return Make(shape, dtype, device, data, std::move(memory));
}

NDArray NDArray::FromDLPack(DLManagedTensor* managed) {
  LOOM_CHECK_USER(managed != nullptr) << "NDArray::FromDLPack: the DLManagedTensor is null";
  // Own the managed tensor first, so it is released even if validation below throws.
  std::shared_ptr<void> memory(managed, [](void* ptr) {
    auto* owned = static_cast<DLManagedTensor*>(ptr);
    if (owned->deleter != nullptr) owned->deleter(owned);
  });
  const DLTensor& source = managed->dl_tensor;
  LOOM_CHECK_USER(source.ndim >= 0 && (source.ndim == 0 || source.shape != nullptr))
      << "NDArray::FromDLPack: tensor has ndim " << source.ndim << " but no shape array";
  std::vector<int64_t> shape(source.shape, source.shape + source.ndim);
  const DataType dtype = DataType::FromDLPack(source.dtype);
  CountElements(shape, dtype, "NDArray::FromDLPack");
  NDArray array = Make(shape, dtype, source.device, source.data, std::move(memory));
  array.container_->tensor.byte_offset = source.byte_offset;
  if (source.strides != nullptr) {
    array.container_->strides.assign(source.strides, source.strides + source.ndim);
    array.container_->tensor.strides = array.container_->strides.data();
  }
  return array;
}

DLManagedTensor* NDArray::ToDLPack() const {
  LOOM_ICHECK(defined()) << "ToDLPack on an undefined NDArray";
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor = container_->tensor;
  // Bool as DLPack 0.8's kDLBool, one byte per element, as NumPy and PyTorch read it (the
  // runtime's own tensors say uint1, which frameworks refuse).
  if (dtype().is_bool()) {
    managed->dl_tensor.dtype =
        DLDataType{static_cast<uint8_t>(DataType::Code::kBool), 8, managed->dl_tensor.dtype.lanes};
  }
  managed->manager_ctx = new std::shared_ptr<Container>(container_);
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<std::shared_ptr<Container>*>(self->manager_ctx);
    delete self;
  };
  return managed;
}

DataType NDArray::dtype() const { return DataType::FromDLPack(container_->tensor.dtype); }

int64_t NDArray::NumElements() const {
  int64_t count = 1;
  for (int64_t extent : container_->shape) count *= extent;
  return count;
}

size_t NDArray::NumBytes() const {
  return static_cast<size_t>(NumElements()) * ElementBytes(dtype());
}

bool NDArray::IsContiguous() const {
  if (container_->strides.empty()) return true;
  int64_t expected = 1;
  for (size_t i = container_->shape.size(); i-- > 0;) {
    // Extent-1 dimensions never step, so their stride is irrelevant.
    if (container_->shape[i] != 1 && container_->strides[i] != expected) return false;
    expected *= container_->shape[i];
  }
  return true;
}

void NDArray::CheckCompactFor(const char* operation) const {
  LOOM_ICHECK(defined()) << operation << " on an undefined NDArray";
  LOOM_CHECK_USER(IsContiguous())
      << operation << ": the array (shape " << ShapeString(container_->shape)
      << ") is strided, not compact; copy it into a compact array first";
}

void NDArray::CopyFromBytes(const void* data, size_t nbytes) const {
  CheckCompactFor("NDArray::CopyFromBytes");
  LOOM_CHECK_USER(nbytes == NumBytes())
      << "NDArray::CopyFromBytes: got " << nbytes << " bytes but the array (shape "
      << ShapeString(container_->shape) << ", " << dtype() << ") holds " << NumBytes();
  CopyDataFromTo(data, 0, container_->tensor.data, container_->tensor.byte_offset, nbytes,
                 kHostDevice, device());
}

void NDArray::CopyToBytes(void* data, size_t nbytes) const {
  CheckCompactFor("NDArray::CopyToBytes");
  LOOM_CHECK_USER(nbytes == NumBytes())
      << "NDArray::CopyToBytes: asked for " << nbytes << " bytes but the array (shape "
      << ShapeString(container_->shape) << ", " << dtype() << ") holds " << NumBytes();
  CopyDataFromTo(container_->tensor.data, container_->tensor.byte_offset, data, 0, nbytes,
                 device(), kHostDevice);
  GetDeviceAPI(static_cast<DLDeviceType>(device().device_type))->StreamSync(device());
}

void NDArray::CopyTo(const NDArray& other) const { other.CopyFrom(*this); }

void NDArray::CopyFrom(const NDArray& other) const {
  CheckCompactFor("NDArray::CopyFrom (destination)");
  LOOM_CHECK_USER(other.defined()) << "NDArray::CopyFrom: the source array is undefined";
  other.CheckCompactFor("NDArray::CopyFrom (source)");
  LOOM_CHECK_USER(other.Shape() == Shape() && other.dtype() == dtype())
      << "NDArray::CopyFrom: source is " << ShapeString(other.Shape()) << " " << other.dtype()
      << " but destination is " << ShapeString(Shape()) << " " << dtype()
      << "; shapes and dtypes must match";
  CopyDataFromTo(other->data, other->byte_offset, container_->tensor.data,
                 container_->tensor.byte_offset, NumBytes(), other.device(), device());
}

NDArray NDArray::CopyTo(DLDevice target) const {
  NDArray copy = Empty(Shape(), dtype(), target);
  copy.CopyFrom(*this);
  return copy;
}

NDArray NDArray::CreateView(const std::vector<int64_t>& shape, DataType dtype) const {
  CheckCompactFor("NDArray::CreateView");
  int64_t count = CountElements(shape, dtype, "NDArray::CreateView");
  size_t view_bytes = static_cast<size_t>(count) * ElementBytes(dtype);
  LOOM_CHECK_USER(view_bytes <= NumBytes())
      << "NDArray::CreateView: a " << ShapeString(shape) << " " << dtype << " view needs "
      << view_bytes << " bytes but the array holds only " << NumBytes();
  NDArray view = Make(shape, dtype, device(), container_->tensor.data, container_->memory);
  view.container_->tensor.byte_offset = container_->tensor.byte_offset;
  return view;
}

std::pair<std::string, std::vector<int64_t>> ParseNamedShape(const std::string& text) {
  auto fail = [&](const std::string& why) {
    LOOM_THROW << "invalid input shape '" << text << "': " << why
               << "; expected name=d0xd1x... (for example input=1x3x224x224)";
  };
  size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) fail("no 'name='");
  std::string name = text.substr(0, equals);
  std::string dims = text.substr(equals + 1);
  std::vector<int64_t> shape;
  size_t begin = 0;
  while (begin <= dims.size()) {
    size_t end = std::min(dims.find('x', begin), dims.size());
    std::string dim = dims.substr(begin, end - begin);
    if (dim.empty() || dim.size() > 18 ||
        !std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      fail("dimension '" + dim + "' is not a non-negative integer");
    }
    shape.push_back(std::stoll(dim));
    begin = end + 1;
  }
  return {name, shape};
}

}  // namespace loom::runtime
