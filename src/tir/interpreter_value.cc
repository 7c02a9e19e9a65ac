// Host memory, host arrays and the interpreter's scalar codecs: how a lane of each dtype is
// wrapped, rounded, and laid out in memory (little-endian, as on every host Loom targets).
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "loom/ir/expr_ops.h"
#include "loom/runtime/float_codec.h"
#include "tir/interpreter_internal.h"

namespace loom::tir {

namespace {

constexpr size_t kAlignment = 64;

}  // namespace

// ---------------------------------------------------------------- memory and arrays

HostMemory::HostMemory(std::string name, int64_t nbytes) : name_(std::move(name)), nbytes_(nbytes) {
  LOOM_CHECK_USER(nbytes >= 0) << "cannot allocate '" << name_ << "' with " << nbytes << " bytes";
  size_t rounded = (static_cast<size_t>(nbytes) + kAlignment - 1) / kAlignment * kAlignment;
  data_ = static_cast<std::byte*>(
      ::operator new(rounded == 0 ? kAlignment : rounded, std::align_val_t{kAlignment}));
  std::memset(data_, 0, rounded == 0 ? kAlignment : rounded);
}

HostMemory::~HostMemory() { ::operator delete(data_, std::align_val_t{kAlignment}); }

void HostMemory::CheckRange(int64_t byte_offset, int64_t size) const {
  LOOM_CHECK_USER(byte_offset >= 0 && size >= 0 && byte_offset <= nbytes_ - size)
      << "access to bytes [" << byte_offset << ", " << byte_offset + size << ") of '" << name_
      << "', which has " << nbytes_ << " bytes";
}

HostArray::HostArray(DataType dtype, std::vector<int64_t> shape, std::string name)
    : dtype_(dtype), shape_(std::move(shape)) {
  LOOM_CHECK_USER(dtype.is_scalar() && !dtype.is_void() && !dtype.is_handle())
      << "cannot create host array '" << name << "' of type " << dtype
      << ": use a scalar int, uint, float or bool type";
  for (int64_t extent : shape_) {
    LOOM_CHECK_USER(extent >= 0) << "cannot create host array '" << name
                                 << "' with negative extent " << extent;
  }
  memory_ = std::make_shared<HostMemory>(std::move(name), NumElements() * ElementBytes());
}

int64_t HostArray::NumElements() const {
  int64_t n = 1;
  for (int64_t extent : shape_) n *= extent;
  return n;
}

double HostArray::GetFloat(int64_t i) const {
  memory_->CheckRange(i * ElementBytes(), ElementBytes());
  Value v = detail::EmptyValue(dtype_);
  detail::LoadLane(memory_->data() + i * ElementBytes(), dtype_, &v);
  return v.AsFloat();
}

void HostArray::SetFloat(int64_t i, double value) {
  memory_->CheckRange(i * ElementBytes(), ElementBytes());
  LOOM_CHECK_USER(dtype_.is_float() || (std::isfinite(value) && std::fabs(value) < 0x1p63))
      << "cannot store " << value << " into element " << i << " of the " << dtype_
      << " array '" << memory_->name() << "'";
  Value v = dtype_.is_float() ? Value::Float(dtype_, value)
                              : Value::Int(dtype_, static_cast<int64_t>(value));
  detail::StoreLane(memory_->data() + i * ElementBytes(), dtype_, v, 0);
}

int64_t HostArray::GetInt(int64_t i) const {
  memory_->CheckRange(i * ElementBytes(), ElementBytes());
  Value v = detail::EmptyValue(dtype_);
  detail::LoadLane(memory_->data() + i * ElementBytes(), dtype_, &v);
  return v.AsInt();
}

void HostArray::SetInt(int64_t i, int64_t value) {
  memory_->CheckRange(i * ElementBytes(), ElementBytes());
  Value v = dtype_.is_float() ? Value::Float(dtype_, static_cast<double>(value))
                              : Value::Int(dtype_, value);
  detail::StoreLane(memory_->data() + i * ElementBytes(), dtype_, v, 0);
}

HostArray HostArray::Copy() const {
  HostArray copy(dtype_, shape_, memory_->name());
  std::memcpy(copy.memory_->data(), memory_->data(), static_cast<size_t>(memory_->nbytes()));
  return copy;
}

// ---------------------------------------------------------------- values

Value Value::Int(DataType t, int64_t value) {
  LOOM_CHECK_USER(t.is_integer_like()) << "Value::Int of non-integer type " << t;
  Value v = detail::EmptyValue(t);
  v.ints.assign(t.lanes(), detail::WrapArith(value, t));
  return v;
}

Value Value::Float(DataType t, double value) {
  LOOM_CHECK_USER(t.is_float()) << "Value::Float of non-float type " << t;
  Value v = detail::EmptyValue(t);
  v.floats.assign(t.lanes(), RoundToFloatType(value, t));
  return v;
}

Value Value::Handle(std::shared_ptr<HostMemory> memory) {
  Value v;
  v.dtype = DataType::Handle();
  v.memory = std::move(memory);
  return v;
}

int64_t Value::AsInt(int lane) const {
  LOOM_ICHECK(dtype.is_integer_like() && lane >= 0 && lane < static_cast<int>(ints.size()))
      << "reading lane " << lane << " of a " << dtype << " value as an integer";
  return ints[lane];
}

double Value::AsFloat(int lane) const {
  if (dtype.is_float()) {
    LOOM_ICHECK(lane >= 0 && lane < static_cast<int>(floats.size())) << "lane " << lane;
    return floats[lane];
  }
  int64_t i = AsInt(lane);
  if (dtype.is_uint() && dtype.bits() == 64) return static_cast<double>(static_cast<uint64_t>(i));
  return static_cast<double>(i);
}

namespace detail {

int64_t WrapArith(int64_t value, DataType t) {
  if (t.is_bool()) return value & 1;
  return const_int::WrapToType(value, t);
}

Value EmptyValue(DataType t) {
  Value v;
  v.dtype = t;
  return v;
}

void PushInt(Value* v, int64_t value) { v->ints.push_back(WrapArith(value, v->dtype)); }
void PushFloat(Value* v, double value) { v->floats.push_back(RoundToFloatType(value, v->dtype)); }

void StoreLane(std::byte* at, DataType t, const Value& value, int lane) {
  if (t.is_float()) {
    double f = value.floats.at(lane);
    if (t.bits() == 64) {
      std::memcpy(at, &f, 8);
    } else if (t.bits() == 32) {
      float single = static_cast<float>(f);
      std::memcpy(at, &single, 4);
    } else {
      uint16_t bits = t.is_bfloat16() ? FloatToBFloat16Bits(static_cast<float>(f))
                                      : FloatToHalfBits(static_cast<float>(f));
      std::memcpy(at, &bits, 2);
    }
    return;
  }
  LOOM_ICHECK(t.is_integer_like()) << "storing a lane of type " << t;
  uint64_t bits = static_cast<uint64_t>(value.ints.at(lane));
  std::memcpy(at, &bits, static_cast<size_t>(t.bytes()));
}

void LoadLane(const std::byte* at, DataType t, Value* into) {
  if (t.is_float()) {
    if (t.bits() == 64) {
      double f;
      std::memcpy(&f, at, 8);
      into->floats.push_back(f);
    } else if (t.bits() == 32) {
      float single;
      std::memcpy(&single, at, 4);
      into->floats.push_back(single);
    } else {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      into->floats.push_back(t.is_bfloat16() ? BFloat16BitsToFloat(bits) : HalfBitsToFloat(bits));
    }
    return;
  }
  LOOM_ICHECK(t.is_integer_like()) << "loading a lane of type " << t;
  uint64_t bits = 0;
  std::memcpy(&bits, at, static_cast<size_t>(t.bytes()));
  // Memory may hold any bit pattern (an alias of another type): normalise it to the type.
  into->ints.push_back(t.is_bool() ? static_cast<int64_t>(bits != 0)
                                   : const_int::WrapToType(static_cast<int64_t>(bits), t));
}

}  // namespace detail
}  // namespace loom::tir
