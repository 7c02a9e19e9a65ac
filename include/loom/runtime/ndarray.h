// NDArray: a reference-counted tensor whose description is a DLPack DLTensor, so compiled
// functions, other frameworks (through DLManagedTensor) and the C API all see the same
// struct. Copying an NDArray copies a reference; the memory is released when the last
// reference (including views and exported DLManagedTensors) goes away.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loom/runtime/data_type.h"

namespace loom::runtime {

inline constexpr DLDevice kHostDevice{kDLCPU, 0};

class NDArray {
 public:
  // An undefined array: defined() is false and every accessor but defined() is a bug.
  NDArray() = default;

  // A new compact (row-major) array on `device`, allocated through its DeviceAPI with 64-byte
  // alignment. Contents are uninitialized. Negative extents are a loom::Error.
  static NDArray Empty(const std::vector<int64_t>& shape, DataType dtype,
                       DLDevice device = kHostDevice);

  // Takes ownership of `managed` (its deleter runs when the last reference dies). Strided
  // tensors are accepted; copies to or from bytes require them to be compact.
  static NDArray FromDLPack(DLManagedTensor* managed);
  // Exports a new reference; the consumer must call its deleter exactly once. Bool exports as
  // kDLBool with 8 bits (DLPack 0.8's code 6), which FromDLPack also takes.
  DLManagedTensor* ToDLPack() const;

  // Reads a NumPy .npy file (format versions 1-3, little-endian or byte-order-free dtypes,
  // C order) into a new host array. Anything else is a loom::Error naming the file.
  static NDArray LoadNpy(const std::string& path);
  // Writes this array as a version 1 .npy file (version 2 when the header needs it).
  void SaveNpy(const std::string& path) const;

  bool defined() const { return container_ != nullptr; }
  const DLTensor* operator->() const { return &container_->tensor; }
  // The tensor to pass to compiled functions, which take a non-const DLTensor*; it stays
  // valid while any reference to this array lives.
  DLTensor* tensor() const { return &container_->tensor; }
  void* data() const { return container_->tensor.data; }

  std::vector<int64_t> Shape() const { return container_->shape; }
  DataType dtype() const;
  DLDevice device() const { return container_->tensor.device; }
  int64_t NumElements() const;
  // Bytes spanned by the elements (NumElements times the element size).
  size_t NumBytes() const;
  // True when the elements are laid out row-major without gaps, whatever `strides` says.
  bool IsContiguous() const;

  // Copies exactly NumBytes() bytes between host memory and this array, on any device.
  void CopyFromBytes(const void* data, size_t nbytes) const;
  void CopyToBytes(void* data, size_t nbytes) const;
  // Copies between arrays of equal shape and dtype, on any pair of devices.
  void CopyFrom(const NDArray& other) const;
  void CopyTo(const NDArray& other) const;
  // A new array on `device` holding a copy of this one.
  NDArray CopyTo(DLDevice device) const;

  // A zero-copy view of this (contiguous) array's memory reinterpreted with another shape
  // and dtype; the view needs no more bytes than this array holds. The view keeps the
  // memory alive.
  NDArray CreateView(const std::vector<int64_t>& shape, DataType dtype) const;

 private:
  struct Container {
    DLTensor tensor{};
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // empty for compact arrays (tensor.strides is null)
    std::shared_ptr<void> memory;  // releases the data when the last sharer dies
  };
  explicit NDArray(std::shared_ptr<Container> container) : container_(std::move(container)) {}
  static NDArray Make(const std::vector<int64_t>& shape, DataType dtype, DLDevice device,
                      void* data, std::shared_ptr<void> memory);
  void CheckCompactFor(const char* operation) const;

  std::shared_ptr<Container> container_;
};

// Size in bytes of one element of `dtype` (lanes included; bool takes one byte).
size_t ElementBytes(DataType dtype);
// Human-readable "[2, 3]".
std::string ShapeString(const std::vector<int64_t>& shape);
// "input=1x3x224x224" -> {"input", {1, 3, 224, 224}}: a named shape as command lines give it;
// a malformed text is a loom::Error that shows the expected form.
std::pair<std::string, std::vector<int64_t>> ParseNamedShape(const std::string& text);

}  // namespace loom::runtime
