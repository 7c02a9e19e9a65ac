// DataType: scalar or vector element type, shared by the runtime (tensors) and the compiler
// (IR). It is a thin value type over DLPack's DLDataType so that tensors cross library
// boundaries without conversion. DLPack 0.6 has no bool code; Loom uses code 6 (the value
// later DLPack versions assign to kDLBool) and converts to uint1 when exporting.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace loom {

class DataType {
 public:
  enum class Code : uint8_t {
    kInt = kDLInt,
    kUInt = kDLUInt,
    kFloat = kDLFloat,
    kHandle = kDLOpaqueHandle,
    kBFloat = kDLBfloat,
    kBool = 6,
  };

  // The default value is "void": bits == 0 (used for calls that return nothing).
  constexpr DataType() = default;
  // Throws loom::Error for combinations that do not exist (int3, float8, 0 lanes, ...).
  DataType(Code code, int bits, int lanes = 1);

  static DataType Int(int bits, int lanes = 1) { return {Code::kInt, bits, lanes}; }
  static DataType UInt(int bits, int lanes = 1) { return {Code::kUInt, bits, lanes}; }
  static DataType Float(int bits, int lanes = 1) { return {Code::kFloat, bits, lanes}; }
  static DataType BFloat16(int lanes = 1) { return {Code::kBFloat, 16, lanes}; }
  static DataType Bool(int lanes = 1) { return {Code::kBool, 1, lanes}; }
  static DataType Handle() { return {Code::kHandle, 64, 1}; }
  static constexpr DataType Void() { return DataType(); }
  // Parses "int32", "uint8x16", "float16", "bfloat16", "bool", "handle", "void".
  static DataType Parse(const std::string& text);

  Code code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  int bytes() const { return (bits_ + 7) / 8; }

  bool is_int() const { return code_ == Code::kInt; }
  bool is_uint() const { return code_ == Code::kUInt; }
  bool is_float() const { return code_ == Code::kFloat || code_ == Code::kBFloat; }
  bool is_bfloat16() const { return code_ == Code::kBFloat; }
  bool is_bool() const { return code_ == Code::kBool; }
  bool is_handle() const { return code_ == Code::kHandle && bits_ != 0; }
  bool is_void() const { return bits_ == 0; }
  // Integer-valued: int, uint or bool (bool takes part in integer arithmetic as 0/1).
  bool is_integer_like() const { return is_int() || is_uint() || is_bool(); }
  bool is_scalar() const { return lanes_ == 1; }
  bool is_vector() const { return lanes_ > 1; }

  DataType element_of() const { return with_lanes(1); }
  DataType with_lanes(int lanes) const;
  DataType with_bits(int bits) const;

  // Value range of integer types (bool: [0,1]).
  int64_t min_int_value() const;
  int64_t max_int_value() const;   // uint64 saturates at INT64_MAX
  bool is_representable(int64_t value) const;

  DLDataType to_dlpack() const;
  static DataType FromDLPack(DLDataType t);

  bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }

  std::string str() const;

 private:
  Code code_ = Code::kHandle;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 1;
};

std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace loom

template <>
struct std::hash<loom::DataType> {
  size_t operator()(const loom::DataType& t) const {
    return (static_cast<size_t>(t.code()) << 24) ^ (static_cast<size_t>(t.bits()) << 16) ^
           static_cast<size_t>(t.lanes());
  }
};
