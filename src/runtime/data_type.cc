#include "loom/runtime/data_type.h"

#include <limits>

#include "loom/support/error.h"

namespace loom {

namespace {
bool ValidBits(DataType::Code code, int bits) {
  switch (code) {
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      return bits >= 1 && bits <= 64;
    case DataType::Code::kFloat:
      return bits == 16 || bits == 32 || bits == 64;
    case DataType::Code::kBFloat:
      return bits == 16;
    case DataType::Code::kBool:
      return bits == 1;
    case DataType::Code::kHandle:
      return bits == 64;
  }
  return false;
}

const char* CodeName(DataType::Code code) {
  switch (code) {
    case DataType::Code::kInt: return "int";
    case DataType::Code::kUInt: return "uint";
    case DataType::Code::kFloat: return "float";
    case DataType::Code::kBFloat: return "bfloat";
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kHandle: return "handle";
  }
  return "?";
}
}  // namespace

DataType::DataType(Code code, int bits, int lanes) {
  LOOM_CHECK_USER(ValidBits(code, bits))
      << "invalid data type: " << CodeName(code) << bits
      << " does not exist (int/uint take 1-64 bits, float 16/32/64, bfloat 16)";
  LOOM_CHECK_USER(lanes >= 1 && lanes <= 65535)
      << "invalid data type: vector lanes must be in [1, 65535], got " << lanes;
  code_ = code;
  bits_ = static_cast<uint8_t>(bits);
  lanes_ = static_cast<uint16_t>(lanes);
}

DataType DataType::with_lanes(int lanes) const {
  if (is_void()) return *this;
  return DataType(code_, bits_, lanes);
}

DataType DataType::with_bits(int bits) const { return DataType(code_, bits, lanes_); }

int64_t DataType::min_int_value() const {
  LOOM_ICHECK(is_integer_like()) << "min_int_value of " << str();
  if (!is_int()) return 0;
  if (bits_ == 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (bits_ - 1));
}

int64_t DataType::max_int_value() const {
  LOOM_ICHECK(is_integer_like()) << "max_int_value of " << str();
  if (is_bool()) return 1;
  if (is_int()) {
    if (bits_ == 64) return std::numeric_limits<int64_t>::max();
    return (int64_t{1} << (bits_ - 1)) - 1;
  }
  if (bits_ >= 63) return std::numeric_limits<int64_t>::max();
  return (int64_t{1} << bits_) - 1;
}

bool DataType::is_representable(int64_t value) const {
  return value >= min_int_value() && value <= max_int_value();
}

DLDataType DataType::to_dlpack() const {
  DLDataType t;
  t.code = is_bool() ? static_cast<uint8_t>(kDLUInt) : static_cast<uint8_t>(code_);
  t.bits = bits_;
  t.lanes = lanes_;
  return t;
}

DataType DataType::FromDLPack(DLDataType t) {
  // Loom's own export (uint1), and DLPack 0.8's kDLBool (one byte per element: NumPy's and
  // PyTorch's bool tensors).
  if ((t.code == kDLUInt && t.bits == 1) ||
      (t.code == static_cast<uint8_t>(Code::kBool) && t.bits == 8)) {
    return Bool(t.lanes);
  }
  LOOM_CHECK_USER(t.code <= static_cast<uint8_t>(Code::kBool) && t.code != kDLComplex)
      << "unsupported DLPack type code " << int(t.code);
  return DataType(static_cast<Code>(t.code), t.bits, t.lanes);
}

std::string DataType::str() const {
  if (is_void()) return "void";
  std::string s;
  if (code_ == Code::kBool) {
    s = "bool";
  } else if (code_ == Code::kHandle) {
    s = "handle";
  } else {
    s = std::string(CodeName(code_)) + std::to_string(bits_);
  }
  if (lanes_ > 1) s += "x" + std::to_string(lanes_);
  return s;
}

DataType DataType::Parse(const std::string& text) {
  if (text == "void") return Void();
  std::string base = text;
  int lanes = 1;
  if (auto x = text.find('x'); x != std::string::npos) {
    base = text.substr(0, x);
    std::string lane_text = text.substr(x + 1);
    LOOM_CHECK_USER(!lane_text.empty() &&
                    lane_text.find_first_not_of("0123456789") == std::string::npos)
        << "cannot parse data type '" << text << "': lanes after 'x' must be a number";
    lanes = std::stoi(lane_text);
  }
  if (base == "bool") return Bool(lanes);
  if (base == "handle") return Handle().with_lanes(lanes);
  struct Prefix {
    const char* name;
    Code code;
  };
  for (Prefix p : {Prefix{"bfloat", Code::kBFloat}, Prefix{"float", Code::kFloat},
                   Prefix{"uint", Code::kUInt}, Prefix{"int", Code::kInt}}) {
    std::string name = p.name;
    if (base.rfind(name, 0) == 0) {
      std::string bits = base.substr(name.size());
      LOOM_CHECK_USER(!bits.empty() && bits.size() <= 2 &&
                      bits.find_first_not_of("0123456789") == std::string::npos)
          << "cannot parse data type '" << text << "': expected bit width after '" << name
          << "'";
      return DataType(p.code, std::stoi(bits), lanes);
    }
  }
  LOOM_THROW << "cannot parse data type '" << text
             << "': expected int<N>, uint<N>, float<N>, bfloat16, bool or handle, "
                "optionally followed by x<lanes>";
}

std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.str(); }

}  // namespace loom
