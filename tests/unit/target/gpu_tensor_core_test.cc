// Matrix products on tensor cores (topi/gpu/tensor_core.h): the schedule's stages become warp
// matrix instructions in the CUDA kernels (compiled with NVRTC wherever the toolkit is), the
// barriers sit where the shared tiles change hands, and the products match the host's where
// a GPU is. Operands are float32 inputs rounded to float16 / bfloat16 by stages the schedule
// inlines into its shared-memory copies, so the host computes the same rounded operands.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "error_of.h"
#include "gpu_target_test.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/gpu/tensor_core.h"
#include "loom/topi/matmul.h"
#include "occurrences.h"

namespace loom {
namespace {

using testing::DeviceCode;
using testing::ErrorOf;
using testing::GpuTarget;

const GpuTarget kCuda{"cuda", testing::kCUDADevice};

TEST(TensorCore, ProductsAreWarpMatrixInstructions) {
  LOOM_SKIP_WITHOUT_COMPILER(kCuda);
  const std::vector<testing::TensorCoreCase> cases = testing::TensorCoreCases();
  for (const testing::TensorCoreCase& c : cases) {
    SCOPED_TRACE(c.Name());
    const std::string ptx = DeviceCode(build(c.Lower(true), Target::Parse("cuda -arch=sm_80")));
    const std::string type = c.operand.is_bfloat16() ? ".bf16" : ".f16";
    EXPECT_NE(ptx.find("wmma.load.a.sync.aligned.row.m16n16k16" + type), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("wmma.load.b.sync.aligned.row.m16n16k16" + type), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("wmma.mma.sync.aligned.row.row.m16n16k16.f32"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("wmma.store.d.sync.aligned.row.m16n16k16.f32"), std::string::npos) << ptx;
    // Per step of the reduction: after the fetch, and before the next one; then before the
    // C tile is copied out (the first case's reduction takes two steps: a loop).
    if (&c == &cases[0]) {
      EXPECT_EQ(testing::Occurrences(ptx, "bar.sync"), 3) << ptx;
    }
  }
}

// The products match the host's (the same rounded operands, summed in another order): on a
// GPU through its tensor cores; through OpenCL (PoCL here), which has no warp matrix
// instructions, with the operations run as loops by each thread (EmulateMatrixOperations),
// which checks everything around the instructions: the tiles' addresses and strides, the
// fragments' numbering, the barriers.
class TensorCoreTest : public ::testing::TestWithParam<GpuTarget> {};

TEST_P(TensorCoreTest, ProductsMatchTheHost) {
  const GpuTarget& target = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(target);
  LOOM_SKIP_WITHOUT_DEVICE(target.device, target.kind);
  const Target built_for = Target::Parse(target.kind == "cuda" ? "cuda -arch=sm_80" : "opencl");
  for (const testing::TensorCoreCase& c : testing::TensorCoreCases()) {
    SCOPED_TRACE(c.Name());
    const std::vector<int64_t> out_shape = c.Shape(c.m, c.n);
    const std::vector<runtime::NDArray> inputs =
        testing::RandomInputs({c.Shape(c.m, c.k), c.Shape(c.n, c.k)});
    const runtime::NDArray want =
        testing::RunOnHost(c.Lower(false), "host_product", inputs, out_shape);
    const runtime::NDArray got = testing::RunOnDevice(
        target.device, build(c.Lower(true), built_for), "tensor_core_product", inputs, out_shape);
    int64_t size = 1;
    for (int64_t d : out_shape) size *= d;
    testing::ExpectNear(got, want, size, 1e-4f);
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, TensorCoreTest, testing::kGpuTargets, testing::GpuTargetName);

// Which cuda targets run the warp matrix operations natively (the others emulate them).
TEST(TensorCore, TargetsHaveTensorCoresFromVoltaAndBFloat16FromAmpere) {
  auto has = [](const std::string& target, DataType operand) {
    return Target::Parse(target).HasTensorCores(operand);
  };
  EXPECT_TRUE(has("cuda -arch=sm_70", DataType::Float(16)));
  EXPECT_FALSE(has("cuda -arch=sm_70", DataType::BFloat16()));
  EXPECT_TRUE(has("cuda -arch=sm_80", DataType::BFloat16()));
  EXPECT_TRUE(has("cuda -arch=sm_90a", DataType::BFloat16()));
  EXPECT_FALSE(has("cuda -arch=sm_90", DataType::Float(32)));
  EXPECT_FALSE(has("opencl", DataType::Float(16)));
}

TEST(TensorCore, BadProductsAreErrorsThatSayWhatWasExpected) {
  // float32 operands: tensor cores multiply float16 or bfloat16.
  te::Tensor a = te::placeholder({64, 64}, DataType::Float(32), "a");
  te::Tensor b = te::placeholder({64, 64}, DataType::Float(32), "b");
  EXPECT_NE(ErrorOf([&] {
              topi::gpu::schedule_matmul_tensor_core(topi::matmul(a, b), {});
            }).find("must multiply two float16 or bfloat16 operands"),
            std::string::npos);
  // Sizes the tiles do not divide.
  testing::TensorCoreCase odd{{}, 100, 64, 64, DataType::Float(16), false, {}};
  EXPECT_NE(ErrorOf([&] {
              odd.Lower(true);
            }).find("is 100 x 64 over 64, which does not divide into tiles of 64 x 64"),
            std::string::npos);
  testing::TensorCoreCase zero{{}, 64, 64, 64, DataType::Float(16), false, {0, 2, 2, 2, 2}};
  EXPECT_NE(ErrorOf([&] { zero.Lower(true); }).find("every tiling factor must be positive"),
            std::string::npos);
}

}  // namespace
}  // namespace loom
