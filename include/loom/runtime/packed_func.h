// PackedFunc: one type-erased calling convention for everything callable through the
// runtime - compiled kernels, registered helpers, module entry points. Arguments travel as
// the (LoomValue, type code) arrays of c_backend_api.h, so a C++ lambda and a function
// emitted by codegen are interchangeable behind the same handle.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/data_type.h"
#include "loom/runtime/ndarray.h"

namespace loom::runtime {

// "int", "DLTensor*", ... for messages; "type code <n>" for unknown codes.
std::string ArgTypeName(int32_t type_code);

// One argument slot, read through typed accessors that throw loom::Error naming the
// argument's position and both types on a mismatch.
class ArgValue {
 public:
  ArgValue(LoomValue value, int32_t type_code, int index)
      : value_(value), type_code_(type_code), index_(index) {}

  int32_t type_code() const { return type_code_; }
  const LoomValue& value() const { return value_; }

  int64_t AsInt() const;         // int or uint
  double AsFloat() const;        // float, or int/uint converted
  bool AsBool() const;           // int or uint, nonzero is true
  std::string AsString() const;  // str
  DataType AsDataType() const;   // DataType, or a str such as "float32"
  DLDevice AsDevice() const;
  DLTensor* AsDLTensor() const;  // DLTensor handle (null is an error)
  void* AsHandle() const;        // opaque handle, DLTensor handle or nullptr

 private:
  [[noreturn]] void Mismatch(const char* expected) const;

  LoomValue value_;
  int32_t type_code_;
  int index_;
};

// A read-only view of the argument arrays of one call.
class PackedArgs {
 public:
  PackedArgs(const LoomValue* values, const int32_t* type_codes, int num_args)
      : values_(values), type_codes_(type_codes), num_args_(num_args) {}

  int size() const { return num_args_; }
  const LoomValue* values() const { return values_; }
  const int32_t* type_codes() const { return type_codes_; }
  // Throws loom::Error when `index` is past the last argument.
  ArgValue operator[](int index) const;

 private:
  const LoomValue* values_;
  const int32_t* type_codes_;
  int num_args_;
};

// The value a call returns: nothing (kLoomNullptr) until set. Strings and arrays are owned,
// so the value outlives the callee's temporaries.
class RetValue {
 public:
  RetValue() = default;
  // Copies re-point a string value at their own storage.
  RetValue(const RetValue& other);
  RetValue(RetValue&& other) noexcept;
  RetValue& operator=(const RetValue& other);
  RetValue& operator=(RetValue&& other) noexcept;

  int32_t type_code() const { return type_code_; }
  bool is_none() const { return type_code_ == kLoomNullptr; }

  void SetInt(int64_t value);
  void SetFloat(double value);
  void SetString(std::string value);
  void SetDataType(DataType value);
  void SetDevice(DLDevice value);
  void SetHandle(void* value);
  // Returns an array; callers read it back with AsNDArray (or AsDLTensor for the raw view).
  void SetNDArray(NDArray value);
  // Adopts a raw (value, type code) pair written by a C function; a string is copied.
  void SetFromC(LoomValue value, int32_t type_code);

  // Typed reads, with the same conversions and errors as ArgValue (position "return value").
  int64_t AsInt() const { return AsArg().AsInt(); }
  double AsFloat() const { return AsArg().AsFloat(); }
  bool AsBool() const { return AsArg().AsBool(); }
  std::string AsString() const { return AsArg().AsString(); }
  DataType AsDataType() const { return AsArg().AsDataType(); }
  DLDevice AsDevice() const { return AsArg().AsDevice(); }
  DLTensor* AsDLTensor() const { return AsArg().AsDLTensor(); }
  void* AsHandle() const { return AsArg().AsHandle(); }
  // The array set with SetNDArray; any other value is a loom::Error.
  NDArray AsNDArray() const;
  // The raw slot, as a C caller sees it (a string points into this object).
  LoomValue value() const { return value_; }

 private:
  ArgValue AsArg() const { return ArgValue(value_, type_code_, -1); }

  LoomValue value_{};
  int32_t type_code_ = kLoomNullptr;
  std::string string_;
  NDArray array_;
};

class PackedFunc {
 public:
  using Body = std::function<void(PackedArgs args, RetValue* ret)>;

  // An empty function: defined() is false and calling it is a loom::Error.
  PackedFunc() = default;
  explicit PackedFunc(Body body) : body_(std::make_shared<Body>(std::move(body))) {}

  bool defined() const { return body_ != nullptr; }
  explicit operator bool() const { return defined(); }

  void CallPacked(PackedArgs args, RetValue* ret) const;
  // Calls with `arrays` as the arguments, as their DLTensors (for argument lists whose length
  // is known only at run time: a kernel's inputs then outputs).
  RetValue CallWithArrays(const std::vector<NDArray>& arrays) const;

  // Packs C++ values: integers (and bool), floating point, DLTensor*, NDArray, std::string /
  // const char*, DataType, DLDevice, void* and nullptr. NDArray arguments are passed as their
  // DLTensor and stay alive for the call because the caller holds them.
  template <typename... Args>
  RetValue operator()(Args&&... args) const {
    constexpr int kNum = static_cast<int>(sizeof...(Args));
    LoomValue values[kNum == 0 ? 1 : kNum];
    int32_t codes[kNum == 0 ? 1 : kNum];
    [[maybe_unused]] int index = 0;
    ((Pack(values[index], codes[index], std::forward<Args>(args)), ++index), ...);
    RetValue ret;
    CallPacked(PackedArgs(values, codes, kNum), &ret);
    return ret;
  }

 private:
  template <typename T>
  static void Pack(LoomValue& value, int32_t& code, T&& arg) {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<U, bool> || std::is_integral_v<U> || std::is_enum_v<U>) {
      value.v_int64 = static_cast<int64_t>(arg);
      code = kLoomArgInt;
    } else if constexpr (std::is_floating_point_v<U>) {
      value.v_float64 = static_cast<double>(arg);
      code = kLoomArgFloat;
    } else if constexpr (std::is_same_v<U, DLTensor*>) {
      value.v_handle = arg;
      code = kLoomDLTensorHandle;
    } else if constexpr (std::is_same_v<U, NDArray>) {
      value.v_handle = arg.tensor();
      code = kLoomDLTensorHandle;
    } else if constexpr (std::is_same_v<U, std::string>) {
      value.v_str = arg.c_str();
      code = kLoomStr;
    } else if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*> ||
                         (std::is_array_v<U> &&
                          std::is_same_v<std::remove_cv_t<std::remove_extent_t<U>>, char>)) {
      value.v_str = arg;
      code = kLoomStr;
    } else if constexpr (std::is_same_v<U, DataType>) {
      value.v_type = arg.to_dlpack();
      code = kLoomDataType;
    } else if constexpr (std::is_same_v<U, DLDataType>) {
      value.v_type = arg;
      code = kLoomDataType;
    } else if constexpr (std::is_same_v<U, DLDevice>) {
      value.v_device = arg;
      code = kLoomDevice;
    } else if constexpr (std::is_same_v<U, std::nullptr_t>) {
      value.v_handle = nullptr;
      code = kLoomNullptr;
    } else if constexpr (std::is_pointer_v<U>) {
      value.v_handle = const_cast<void*>(static_cast<const void*>(arg));
      code = kLoomOpaqueHandle;
    } else {
      static_assert(sizeof(U) == 0, "PackedFunc: this argument type cannot be packed");
    }
  }

  std::shared_ptr<Body> body_;
};

// Turns a compiled function into a PackedFunc. `keep_alive` owns whatever holds the code (a
// loaded library, a JIT session) and is kept until the last copy of the PackedFunc dies. A
// nonzero return becomes a loom::Error carrying the message the function recorded with
// LoomAPISetLastError.
PackedFunc WrapPackedCFunc(LoomBackendPackedCFunc func, std::shared_ptr<void> keep_alive);

// Process-wide functions by name, for helpers the compiler or executors look up at run time.
class Registry {
 public:
  // Registering a taken name is a loom::Error unless `override` is true.
  static void Register(const std::string& name, PackedFunc func, bool override = false);
  // std::nullopt when nothing is registered under `name`.
  static std::optional<PackedFunc> Get(const std::string& name);
  // Returns whether a function was removed.
  static bool Remove(const std::string& name);
  // Sorted.
  static std::vector<std::string> ListNames();
};

}  // namespace loom::runtime
