#include "loom/runtime/packed_func.h"

#include <map>
#include <mutex>

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom::runtime {

std::string ArgTypeName(int32_t type_code) {
  switch (type_code) {
    case kLoomArgInt: return "int";
    case kLoomArgUInt: return "uint";
    case kLoomArgFloat: return "float";
    case kLoomOpaqueHandle: return "handle";
    case kLoomNullptr: return "nullptr";
    case kLoomDataType: return "DataType";
    case kLoomDevice: return "DLDevice";
    case kLoomDLTensorHandle: return "DLTensor*";
    case kLoomStr: return "str";
    default: return "type code " + std::to_string(type_code);
  }
}

void ArgValue::Mismatch(const char* expected) const {
  std::string where =
      index_ < 0 ? std::string("return value") : "argument #" + std::to_string(index_);
  LOOM_THROW << "packed function " << where << ": expected " << expected << " but got "
             << ArgTypeName(type_code_);
}

int64_t ArgValue::AsInt() const {
  if (type_code_ != kLoomArgInt && type_code_ != kLoomArgUInt) Mismatch("int");
  return value_.v_int64;
}

double ArgValue::AsFloat() const {
  if (type_code_ == kLoomArgFloat) return value_.v_float64;
  if (type_code_ == kLoomArgInt) return static_cast<double>(value_.v_int64);
  if (type_code_ == kLoomArgUInt) return static_cast<double>(static_cast<uint64_t>(value_.v_int64));
  Mismatch("float");
}

bool ArgValue::AsBool() const { return AsInt() != 0; }

std::string ArgValue::AsString() const {
  if (type_code_ != kLoomStr) Mismatch("str");
  return value_.v_str == nullptr ? std::string() : std::string(value_.v_str);
}

DataType ArgValue::AsDataType() const {
  if (type_code_ == kLoomDataType) return DataType::FromDLPack(value_.v_type);
  if (type_code_ == kLoomStr && value_.v_str != nullptr) return DataType::Parse(value_.v_str);
  Mismatch("DataType");
}

DLDevice ArgValue::AsDevice() const {
  if (type_code_ != kLoomDevice) Mismatch("DLDevice");
  return value_.v_device;
}

DLTensor* ArgValue::AsDLTensor() const {
  if (type_code_ != kLoomDLTensorHandle || value_.v_handle == nullptr) Mismatch("DLTensor*");
  return static_cast<DLTensor*>(value_.v_handle);
}

void* ArgValue::AsHandle() const {
  if (type_code_ == kLoomNullptr) return nullptr;
  if (type_code_ != kLoomOpaqueHandle && type_code_ != kLoomDLTensorHandle) Mismatch("handle");
  return value_.v_handle;
}

ArgValue PackedArgs::operator[](int index) const {
  LOOM_CHECK_USER(index >= 0 && index < num_args_)
      << "packed function: argument #" << index << " was requested but the call passed "
      << num_args_ << " argument" << (num_args_ == 1 ? "" : "s");
  return ArgValue(values_[index], type_codes_[index], index);
}

RetValue::RetValue(const RetValue& other) { *this = other; }

RetValue::RetValue(RetValue&& other) noexcept { *this = std::move(other); }

RetValue& RetValue::operator=(const RetValue& other) {
  value_ = other.value_;
  type_code_ = other.type_code_;
  string_ = other.string_;
  array_ = other.array_;
  if (type_code_ == kLoomStr) value_.v_str = string_.c_str();
  return *this;
}

RetValue& RetValue::operator=(RetValue&& other) noexcept {
  value_ = other.value_;
  type_code_ = other.type_code_;
  string_ = std::move(other.string_);
  array_ = std::move(other.array_);
  if (type_code_ == kLoomStr) value_.v_str = string_.c_str();
  return *this;
}

void RetValue::SetInt(int64_t value) {
  *this = RetValue();
  value_.v_int64 = value;
  type_code_ = kLoomArgInt;
}

void RetValue::SetFloat(double value) {
  *this = RetValue();
  value_.v_float64 = value;
  type_code_ = kLoomArgFloat;
}

void RetValue::SetString(std::string value) {
  *this = RetValue();
  string_ = std::move(value);
  value_.v_str = string_.c_str();
  type_code_ = kLoomStr;
}

void RetValue::SetDataType(DataType value) {
  *this = RetValue();
  value_.v_type = value.to_dlpack();
  type_code_ = kLoomDataType;
}

void RetValue::SetDevice(DLDevice value) {
  *this = RetValue();
  value_.v_device = value;
  type_code_ = kLoomDevice;
}

void RetValue::SetHandle(void* value) {
  *this = RetValue();
  value_.v_handle = value;
  type_code_ = value == nullptr ? kLoomNullptr : kLoomOpaqueHandle;
}

void RetValue::SetNDArray(NDArray value) {
  *this = RetValue();
  LOOM_ICHECK(value.defined()) << "SetNDArray with an undefined NDArray";
  array_ = std::move(value);
  value_.v_handle = array_.tensor();
  type_code_ = kLoomDLTensorHandle;
}

void RetValue::SetFromC(LoomValue value, int32_t type_code) {
  if (type_code == kLoomStr) {
    SetString(value.v_str == nullptr ? std::string() : std::string(value.v_str));
    return;
  }
  *this = RetValue();
  value_ = value;
  type_code_ = type_code;
}

NDArray RetValue::AsNDArray() const {
  LOOM_CHECK_USER(array_.defined())
      << "packed function return value: expected an NDArray but got "
      << (type_code_ == kLoomDLTensorHandle ? "a DLTensor* the runtime does not own"
                                            : ArgTypeName(type_code_));
  return array_;
}

void PackedFunc::CallPacked(PackedArgs args, RetValue* ret) const {
  LOOM_CHECK_USER(defined())
      << "called an empty PackedFunc; check that the function lookup that produced it "
         "succeeded (Module::GetFunction returns an empty function for unknown names)";
  (*body_)(args, ret);
}

PackedFunc WrapPackedCFunc(LoomBackendPackedCFunc func, std::shared_ptr<void> keep_alive) {
  LOOM_ICHECK(func != nullptr) << "WrapPackedCFunc of a null function pointer";
  return PackedFunc([func, keep_alive = std::move(keep_alive)](
                        PackedArgs args, RetValue* ret) {
    LoomValue ret_value{};
    int32_t ret_code = kLoomNullptr;
    LoomAPISetLastError("");
    int32_t status = func(args.values(), args.type_codes(), args.size(), &ret_value, &ret_code,
                          nullptr);
    if (status != 0) {
      std::string message = LoomGetLastError();
      if (message.empty()) {
        message = "the function failed with status " + std::to_string(status) +
                  " without recording a message";
      }
      throw Error(message);
    }
    ret->SetFromC(ret_value, ret_code);
  });
}

namespace {

class FunctionTable {
 public:
  static FunctionTable& Global() {
    static FunctionTable table;
    return table;
  }

  std::mutex mutex;
  std::map<std::string, PackedFunc> functions;
};

}  // namespace

void Registry::Register(const std::string& name, PackedFunc func, bool override) {
  LOOM_CHECK_USER(func.defined())
      << "Registry::Register('" << name << "'): the function is empty";
  FunctionTable& table = FunctionTable::Global();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto [it, inserted] = table.functions.emplace(name, func);
  if (inserted) return;
  LOOM_CHECK_USER(override) << "Registry::Register('" << name
                            << "'): a function is already registered under this name; pass "
                               "override=true to replace it";
  it->second = std::move(func);
}

std::optional<PackedFunc> Registry::Get(const std::string& name) {
  FunctionTable& table = FunctionTable::Global();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.functions.find(name);
  if (it == table.functions.end()) return std::nullopt;
  return it->second;
}

bool Registry::Remove(const std::string& name) {
  FunctionTable& table = FunctionTable::Global();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.functions.erase(name) > 0;
}

std::vector<std::string> Registry::ListNames() {
  FunctionTable& table = FunctionTable::Global();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<std::string> names;
  names.reserve(table.functions.size());
  for (const auto& entry : table.functions) names.push_back(entry.first);
  return names;
}

RetValue PackedFunc::CallWithArrays(const std::vector<NDArray>& arrays) const {
  std::vector<LoomValue> values(arrays.size());
  std::vector<int32_t> codes(arrays.size(), kLoomDLTensorHandle);
  for (size_t i = 0; i < arrays.size(); ++i) values[i].v_handle = arrays[i].tensor();
  RetValue ret;
  CallPacked(PackedArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
  return ret;
}

}  // namespace loom::runtime
