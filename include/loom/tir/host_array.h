// Host memory for the TIR interpreter: raw aligned bytes (what a handle points to) and a
// typed, shaped array over them (what a buffer parameter is bound to). This is the minimal
// stand-in for the runtime's NDArray; the interpreter only needs dtype, shape and bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loom/runtime/data_type.h"
#include "loom/support/error.h"

namespace loom::tir {

// Zero-filled bytes, 64-byte aligned, owned by whoever holds a shared_ptr to them.
class HostMemory {
 public:
  HostMemory(std::string name, int64_t nbytes);
  ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  const std::string& name() const { return name_; }

  // `count` elements of T starting at element `first`; loom::Error when they are not all
  // inside the memory (external functions reach buffers through this).
  template <typename T>
  T* As(int64_t first, int64_t count) {
    CheckRange(first * static_cast<int64_t>(sizeof(T)), count * static_cast<int64_t>(sizeof(T)));
    return reinterpret_cast<T*>(data_) + first;
  }

  // loom::Error unless [byte_offset, byte_offset + size) lies inside the memory.
  void CheckRange(int64_t byte_offset, int64_t size) const;

 private:
  std::string name_;
  int64_t nbytes_;
  std::byte* data_;
};

// A row-major array of scalar elements.
class HostArray {
 public:
  HostArray() = default;
  HostArray(DataType dtype, std::vector<int64_t> shape, std::string name = "array");

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t NumElements() const;
  const std::shared_ptr<HostMemory>& memory() const { return memory_; }

  // The elements as T; an internal error when T's size is not the element size.
  template <typename T>
  T* data() const {
    LOOM_ICHECK(sizeof(T) == static_cast<size_t>(ElementBytes()))
        << "HostArray of " << dtype_ << " viewed with an element type of " << sizeof(T)
        << " bytes";
    return reinterpret_cast<T*>(memory_->data());
  }

  // Element i (row-major) converted to or from double / int64 with the dtype's semantics
  // (floats round to the dtype's precision, integers wrap), for dtype-generic test code.
  double GetFloat(int64_t i) const;
  void SetFloat(int64_t i, double value);
  int64_t GetInt(int64_t i) const;
  void SetInt(int64_t i, int64_t value);

  // A deep copy (fresh memory with the same bytes).
  HostArray Copy() const;

 private:
  int64_t ElementBytes() const { return dtype_.bytes(); }

  DataType dtype_;
  std::vector<int64_t> shape_;
  std::shared_ptr<HostMemory> memory_;
};

}  // namespace loom::tir
