#include "runtime_test_util.h"
#include "loom/runtime/ndarray.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::runtime {
namespace {

std::vector<float> Iota(size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.5f);
  return values;
}

TEST(NDArray, EmptyDescribesACompactAlignedTensor) {
  NDArray array = NDArray::Empty({2, 3, 5}, DataType::Float(32));
  ASSERT_TRUE(array.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(array->data) % 64, 0u);
  EXPECT_EQ(array->ndim, 3);
  EXPECT_EQ(array->shape[2], 5);
  EXPECT_EQ(array->strides, nullptr);
  EXPECT_EQ(array->dtype.code, kDLFloat);
  EXPECT_EQ(array->device.device_type, kDLCPU);
  EXPECT_EQ(array.NumElements(), 30);
  EXPECT_EQ(array.NumBytes(), 120u);
  EXPECT_EQ(array.dtype(), DataType::Float(32));
  EXPECT_TRUE(array.IsContiguous());
  EXPECT_EQ(NDArray::Empty({}, DataType::Int(8)).NumBytes(), 1u);
  EXPECT_EQ(NDArray::Empty({4}, DataType::Float(32, 4)).NumBytes(), 64u);
  EXPECT_EQ(NDArray::Empty({3}, DataType::Bool()).NumBytes(), 3u);
}

TEST(NDArray, EmptyRejectsNegativeExtents) {
  std::string message = ErrorOf([] { NDArray::Empty({2, -1}, DataType::Float(32)); });
  EXPECT_NE(message.find("NDArray::Empty: shape [2, -1] has a negative extent"), std::string::npos)
      << message;
}

// A byte count past 64 bits would wrap to a small allocation that kernels then overrun.
TEST(NDArray, ShapesWhoseBytesOverflowAreRefused) {
  std::string message = ErrorOf([] { NDArray::Empty({int64_t{1} << 62}, DataType::Float(32)); });
  EXPECT_NE(message.find("NDArray::Empty: shape [4611686018427387904] of float32 needs more than "
                         "2^63 bytes"),
            std::string::npos)
      << message;
  NDArray small = NDArray::Empty({4}, DataType::Float(32));
  EXPECT_NE(ErrorOf([&] {
              small.CreateView({int64_t{1} << 61}, DataType::Float(64));
            }).find("needs more than 2^63 bytes"),
            std::string::npos);
}

TEST(NDArray, BytesRoundTripAndSizeMismatchIsAnError) {
  NDArray array = NDArray::Empty({4, 4}, DataType::Float(32));
  std::vector<float> in = Iota(16), out(16, 0.0f);
  array.CopyFromBytes(in.data(), in.size() * sizeof(float));
  array.CopyToBytes(out.data(), out.size() * sizeof(float));
  EXPECT_EQ(in, out);
  std::string message = ErrorOf([&] { array.CopyFromBytes(in.data(), 8); });
  EXPECT_NE(message.find("NDArray::CopyFromBytes: got 8 bytes but the array (shape [4, 4], "
                         "float32) holds 64"),
            std::string::npos)
      << message;
  message = ErrorOf([&] { array.CopyToBytes(out.data(), 65); });
  EXPECT_NE(message.find("CopyToBytes: asked for 65 bytes"), std::string::npos) << message;
}

TEST(NDArray, CopiesBetweenArraysCheckShapeAndDtype) {
  NDArray a = NDArray::Empty({3, 2}, DataType::Float(32));
  std::vector<float> values = Iota(6), out(6);
  a.CopyFromBytes(values.data(), 24);
  NDArray b = a.CopyTo(kHostDevice);
  EXPECT_NE(b->data, a->data);
  b.CopyToBytes(out.data(), 24);
  EXPECT_EQ(out, values);

  NDArray c = NDArray::Empty({3, 2}, DataType::Float(32));
  a.CopyTo(c);
  c.CopyToBytes(out.data(), 24);
  EXPECT_EQ(out, values);

  NDArray wrong = NDArray::Empty({2, 3}, DataType::Float(32));
  std::string message = ErrorOf([&] { wrong.CopyFrom(a); });
  EXPECT_NE(message.find("NDArray::CopyFrom: source is [3, 2] float32 but destination is "
                         "[2, 3] float32; shapes and dtypes must match"),
            std::string::npos)
      << message;
}

TEST(NDArray, ViewsShareMemoryAndKeepItAlive) {
  NDArray base = NDArray::Empty({2, 4}, DataType::Float(32));
  std::vector<float> values = Iota(8);
  base.CopyFromBytes(values.data(), 32);
  NDArray view = base.CreateView({8}, DataType::Float(32));
  EXPECT_EQ(view->data, base->data);
  EXPECT_EQ(view->ndim, 1);
  static_cast<float*>(view.data())[3] = 42.0f;
  EXPECT_EQ(static_cast<float*>(base.data())[3], 42.0f);

  NDArray bytes = base.CreateView({32}, DataType::UInt(8));
  EXPECT_EQ(bytes.NumBytes(), 32u);
  base = NDArray();
  // The base handle is gone; the views still own the memory.
  EXPECT_EQ(static_cast<float*>(view.data())[3], 42.0f);
  EXPECT_EQ(static_cast<float*>(bytes.data())[0], 0.5f);

  std::string message = ErrorOf([&] { view.CreateView({3, 3}, DataType::Float(32)); });
  EXPECT_NE(message.find("NDArray::CreateView: a [3, 3] float32 view needs 36 bytes but the "
                         "array holds only 32"),
            std::string::npos)
      << message;
}

TEST(NDArray, DLPackRoundTripSharesMemoryAndReleasesOnce) {
  NDArray array = NDArray::Empty({5}, DataType::Int(32));
  DLManagedTensor* managed = array.ToDLPack();
  EXPECT_EQ(managed->dl_tensor.data, array->data);
  EXPECT_EQ(managed->dl_tensor.shape[0], 5);
  NDArray back = NDArray::FromDLPack(managed);
  EXPECT_EQ(back->data, array->data);
  EXPECT_EQ(back.Shape(), array.Shape());
  EXPECT_EQ(back.dtype(), DataType::Int(32));
}

struct ForeignTensor {
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {1, 2};  // column-major
  float data[6] = {};
  int* deleted = nullptr;
};

DLManagedTensor* MakeForeign(int* deleted, bool column_major) {
  auto* foreign = new ForeignTensor();
  foreign->deleted = deleted;
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = foreign->data;
  managed->dl_tensor.device = kHostDevice;
  managed->dl_tensor.ndim = 2;
  managed->dl_tensor.dtype = DataType::Float(32).to_dlpack();
  managed->dl_tensor.shape = foreign->shape;
  managed->dl_tensor.strides = column_major ? foreign->strides : nullptr;
  managed->manager_ctx = foreign;
  managed->deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<ForeignTensor*>(self->manager_ctx);
    ++*owner->deleted;
    delete owner;
    delete self;
  };
  return managed;
}

TEST(NDArray, FromDLPackCallsTheForeignDeleterWhenTheLastReferenceDies) {
  int deleted = 0;
  {
    NDArray array = NDArray::FromDLPack(MakeForeign(&deleted, false));
    NDArray view = array.CreateView({6}, DataType::Float(32));
    array = NDArray();
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(NDArray, StridedForeignTensorsCannotBeCopiedAsBytes) {
  int deleted = 0;
  NDArray array = NDArray::FromDLPack(MakeForeign(&deleted, true));
  EXPECT_FALSE(array.IsContiguous());
  std::vector<float> out(6);
  std::string message = ErrorOf([&] { array.CopyToBytes(out.data(), 24); });
  EXPECT_NE(message.find("NDArray::CopyToBytes: the array (shape [2, 3]) is strided, not "
                         "compact; copy it into a compact array first"),
            std::string::npos)
      << message;
}

// NumPy and PyTorch export bool as DLPack 0.8's kDLBool (code 6, one byte per element).
TEST(NDArray, FromDLPackTakesByteBoolsAsBool) {
  int deleted = 0;
  DLManagedTensor* managed = MakeForeign(&deleted, false);
  managed->dl_tensor.dtype = DLDataType{6, 8, 1};
  NDArray array = NDArray::FromDLPack(managed);
  EXPECT_EQ(array.dtype(), DataType::Bool());
  EXPECT_EQ(array.NumBytes(), 6u);
  // And exported so, which imports back as bool.
  DLManagedTensor* exported = array.ToDLPack();
  EXPECT_EQ(exported->dl_tensor.dtype.code, 6);
  EXPECT_EQ(exported->dl_tensor.dtype.bits, 8);
  EXPECT_EQ(NDArray::FromDLPack(exported).dtype(), DataType::Bool());
}

TEST(NDArray, FromDLPackRejectsNull) {
  EXPECT_EQ(ErrorOf([] { NDArray::FromDLPack(nullptr); }),
            "NDArray::FromDLPack: the DLManagedTensor is null");
}

}  // namespace
}  // namespace loom::runtime
