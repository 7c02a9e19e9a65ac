// The GPU targets (opencl, cuda): TE schedules with thread bindings built into kernels and an
// llvm host that launches them, run on the target's device and compared with the same
// computation built for llvm. OpenCL runs on this project's machines through PoCL (on the
// CPU); CUDA kernels are compiled with NVRTC everywhere the toolkit is, and run where a GPU
// is (scripts/gpu-check.sh). Tests that run kernels skip, saying why, without the device;
// the ones that only generate code run everywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "error_of.h"
#include "gpu_target_test.h"
#include "loom/runtime/cuda_module.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/opencl_module.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/gpu/conv2d.h"
#include "loom/topi/gpu/conv2d_winograd.h"
#include "loom/topi/nn.h"
#include "loom/topi/schedule.h"

namespace loom {
namespace {

using runtime::NDArray;
using testing::DeviceCode;
using testing::Elementwise;
using testing::ErrorOf;
using testing::ExpectNear;
using testing::GpuTarget;
using testing::Matmul;
using testing::RandomInputs;
using testing::RunOnDevice;
using testing::RunOnHost;
using testing::SharedMatmul;

class GpuTargetTest : public ::testing::TestWithParam<GpuTarget> {};

// Every kernel is compiled wherever the target's compiler is (NVRTC for cuda); it runs where
// the device is.
TEST_P(GpuTargetTest, ElementwiseKernelsMatchTheCpu) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  const std::vector<int> sizes = {1, 200, 4096};  // 200: the last block is partly outside
  std::vector<runtime::Module> modules;
  for (int n : sizes) {
    modules.push_back(build(Elementwise(n, 64, true), Target::Parse(gpu.kind)));
    EXPECT_EQ(modules.back()->type_key(), "llvm");  // the host, which imports the device's
  }
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int n = sizes[i];
    std::vector<NDArray> inputs = RandomInputs({{n}, {n}});
    NDArray got = RunOnDevice(gpu.device, modules[i], "elementwise", inputs, {n});
    NDArray want = RunOnHost(Elementwise(n, 64, false), "elementwise", inputs, {n});
    ExpectNear(got, want, n, 1e-6f);
  }
}

TEST_P(GpuTargetTest, TwoDimensionalBlocksWithAPrivateAccumulator) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  const int m = 24, n = 40, k = 33;
  runtime::Module module = build(Matmul(m, n, k, true), Target::Parse(gpu.kind));
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  std::vector<NDArray> inputs = RandomInputs({{m, k}, {k, n}});
  NDArray got = RunOnDevice(gpu.device, module, "matmul", inputs, {m, n});
  NDArray want = RunOnHost(Matmul(m, n, k, false), "matmul", inputs, {m, n});
  ExpectNear(got, want, m * n, 1e-5f);
}

TEST_P(GpuTargetTest, SharedMemoryTilesFetchedCooperativelyWithBarriers) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  // 64 x 96 of C in 32 x 32 tiles of 8 x 8 threads, k = 48 in steps of 8; and sizes the
  // tiles do not divide (the fetch and the output guarded) with a step that does not divide k;
  // each with contiguous and with strided (virtual-thread) parts per thread, with A's shared
  // rows padded, with the tiles double-buffered, and fetched and stored 4 or 2 elements at
  // once (vector accesses where aligned: k = 48; scalar ones where not: k = 45, 46).
  struct Case {
    int m, n, k, tile_k;
    bool strided, pad_rows, double_buffer;
    int vector_width;
  };
  const std::vector<Case> cases = {
      {64, 96, 48, 8, false, false, false, 1}, {50, 70, 45, 4, false, false, false, 1},
      {64, 96, 48, 8, true, false, false, 1},  {50, 70, 45, 4, true, false, false, 1},
      {64, 96, 48, 8, false, true, false, 1},  {50, 70, 45, 4, true, true, false, 1},
      {64, 96, 48, 8, false, false, true, 1},  {50, 70, 45, 4, true, true, true, 1},
      {64, 96, 48, 8, false, false, false, 4}, {50, 70, 45, 4, false, false, false, 4},
      {64, 96, 48, 8, true, true, true, 4},    {50, 70, 46, 8, false, true, true, 2}};
  std::vector<runtime::Module> modules;
  for (const Case& c : cases) {
    modules.push_back(build(SharedMatmul(c.m, c.n, c.k, 8, 8, c.tile_k, c.strided, c.pad_rows,
                                         c.double_buffer, c.vector_width),
                            Target::Parse(gpu.kind)));
  }
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto [m, n, k, tile_k, strided, pad_rows, double_buffer, vector_width] = cases[i];
    SCOPED_TRACE(std::string(strided ? "strided" : "contiguous") + (pad_rows ? ", padded" : "") +
                 (double_buffer ? ", double-buffered" : "") + ", vectors of " +
                 std::to_string(vector_width));
    std::vector<NDArray> inputs = RandomInputs({{m, k}, {k, n}});
    NDArray got = RunOnDevice(gpu.device, modules[i], "shared_matmul", inputs, {m, n});
    NDArray want = RunOnHost(Matmul(m, n, k, false), "matmul", inputs, {m, n});
    ExpectNear(got, want, m * n, 1e-5f);
  }
}

// relu(conv2d(x, w) + x) (a residual block's end: the epilogue reads an input again), NCHW,
// 2 images of 12 -> 12 channels, 5 x 5, 3 x 3 kernel, pad 1, groups `groups`.
PrimFunc ResidualConv(int groups, bool gpu, int threads, int channels_per_thread) {
  te::Tensor x = te::placeholder({2, 12, 5, 5}, DataType::Float(32), "x");
  te::Tensor w = te::placeholder({12, 12 / groups, 3, 3}, DataType::Float(32), "w");
  topi::Conv2DAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  attrs.groups = groups;
  te::Tensor out = topi::relu(topi::add(topi::conv2d_nchw(x, w, attrs), x));
  te::Schedule s = gpu ? topi::gpu::schedule_conv2d_nchw_direct(out, threads, channels_per_thread)
                       : topi::schedule_conv2d_nchw(out);
  return te::lower(s, {x, w, out}, "residual_conv");
}

TEST_P(GpuTargetTest, DirectConvolutionsKeepSeveralChannelsPerThread) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  // 8 channels per thread of 12 and blocks of 16 of the 25 pixels: both guarded; grouped too.
  const std::vector<std::tuple<int, int, int>> cases = {{1, 16, 8}, {1, 32, 4}, {3, 16, 2}};
  std::vector<runtime::Module> modules;
  for (auto [groups, threads, channels] : cases) {
    modules.push_back(
        build(ResidualConv(groups, true, threads, channels), Target::Parse(gpu.kind)));
  }
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  for (size_t i = 0; i < cases.size(); ++i) {
    const int groups = std::get<0>(cases[i]);
    std::vector<NDArray> inputs = RandomInputs({{2, 12, 5, 5}, {12, 12 / groups, 3, 3}});
    NDArray got = RunOnDevice(gpu.device, modules[i], "residual_conv", inputs, {2, 12, 5, 5});
    NDArray want =
        RunOnHost(ResidualConv(groups, false, 0, 0), "residual_conv", inputs, {2, 12, 5, 5});
    ExpectNear(got, want, 2 * 12 * 25, 1e-5f);
  }
}

TEST_P(GpuTargetTest, AnExportedLibraryCarriesItsKernels) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  const int n = 300;
  runtime::Module built = build(Elementwise(n, 32, true), Target::Parse(gpu.kind));
  const std::string path = "/tmp/loom_gpu_test_" + std::to_string(getpid()) + ".so";
  ExportLibrary(built, path);
  runtime::Module loaded = runtime::LoadModuleFromFile(path);
  std::remove(path.c_str());
  ASSERT_EQ(loaded->imports().size(), 1u);
  EXPECT_EQ(loaded->imports()[0]->type_key(), gpu.kind);
  EXPECT_EQ(DeviceCode(loaded), DeviceCode(built));
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  std::vector<NDArray> inputs = RandomInputs({{n}, {n}});
  NDArray got = RunOnDevice(gpu.device, loaded, "elementwise", inputs, {n});
  NDArray want = RunOnDevice(gpu.device, built, "elementwise", inputs, {n});
  ExpectNear(got, want, n, 0.0f);
}

TEST_P(GpuTargetTest, TensorsMustBeWholeBuffersOnTheDevice) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  runtime::Module module = build(Elementwise(16, 16, true), Target::Parse(gpu.kind));
  std::vector<NDArray> host = RandomInputs({{16}, {16}, {16}});
  std::string message =
      ErrorOf([&] { module.GetRequiredFunction("elementwise").CallWithArrays(host); });
  EXPECT_NE(message.find("must be on device '" + gpu.kind + "'"), std::string::npos) << message;
}

TEST_P(GpuTargetTest, ABlockOverTheTargetsLimitsIsABuildError) {
  // Code generation only: no device needed.
  const GpuTarget& gpu = GetParam();
  const std::string limit = gpu.kind == "cuda" ? "1024" : "256";
  const int threads = gpu.kind == "cuda" ? 2048 : 512;
  EXPECT_EQ(ErrorOf([&] { build(Elementwise(4096, threads, true), Target::Parse(gpu.kind)); }),
            "kernel 'elementwise_kernel0': a block of " + std::to_string(threads) +
                " threads (threadIdx.x " + std::to_string(threads) +
                ") is more than the target's -max-threads-per-block=" + limit +
                "; bind smaller thread extents");
  // 2 tiles of 32 x 8 floats, 2 KiB in all.
  EXPECT_EQ(ErrorOf([&] {
              build(SharedMatmul(64, 64, 64, 8, 8, 8),
                    Target::Parse(gpu.kind + " -max-shared-memory-per-block=1024"));
            }),
            "kernel 'shared_matmul_kernel0': its shared allocations take 2048 bytes per block, "
            "more than the target's -max-shared-memory-per-block=1024; make the tiles cached "
            "in shared memory smaller");
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuTargetTest, testing::kGpuTargets, testing::GpuTargetName);

TEST(CUDATarget, AnArchitectureNotNamedSmIsABuildError) {
  // Checked before NVRTC is looked for: no toolkit needed.
  EXPECT_EQ(ErrorOf([] { build(Elementwise(64, 64, true), Target::Parse("cuda -arch=90")); }),
            "the cuda target's -arch is '90'; expected sm_<major><minor> (sm_90 for an H100 "
            "or H200)");
}

// An architecture the toolkit's NVRTC does not compile for (sm_20: none since CUDA 9) is an
// error that says so.
TEST(CUDATarget, AnArchitectureNVRTCDoesNotSupportIsAnErrorThatSaysSo) {
  const GpuTarget cuda{"cuda", testing::kCUDADevice};
  LOOM_SKIP_WITHOUT_COMPILER(cuda);
  const std::string error =
      ErrorOf([] { build(Elementwise(64, 64, true), Target::Parse("cuda -arch=sm_20")); });
  EXPECT_NE(error.find("this NVRTC does not compile for -arch=sm_20"), std::string::npos) << error;
}

TEST(OpenCLTarget, KernelsAreOpenCLCWithLocalMemoryAndBarriers) {
  const std::string source = runtime::OpenCLModuleSource(
      build(SharedMatmul(64, 64, 64, 8, 8, 8), Target::Parse("opencl"))->imports()[0]);
  EXPECT_NE(source.find("__kernel void shared_matmul_kernel0(__global void* "),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("get_group_id(1)"), std::string::npos) << source;
  EXPECT_NE(source.find("get_local_id(0)"), std::string::npos) << source;
  EXPECT_NE(source.find("__local uint4 "), std::string::npos) << source;
  EXPECT_NE(source.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos) << source;
  // The accumulator (cache_write "local", attached inside the thread loops) is a private
  // array of each work-item, not a buffer the host allocates: 4 x 4 floats.
  EXPECT_NE(source.find("_storage[4];"), std::string::npos) << source;
}

// Fetched 4 elements at once, the tiles' loads are vector loads where their alignment is
// proven: rows of 64 floats, each thread's chunk 4 floats into them; so are the accumulators'
// and C's stores and the B tile's reads. CUDA through its vector types, OpenCL through
// vload4/vstore4.
TEST(GpuVectorAccess, AlignedTileAccessesAreVectorLoadsAndStores) {
  const std::string opencl = runtime::OpenCLModuleSource(
      build(SharedMatmul(64, 64, 64, 8, 8, 8, false, false, false, 4), Target::Parse("opencl"))
          ->imports()[0]);
  EXPECT_NE(opencl.find("float4 "), std::string::npos) << opencl;
  EXPECT_NE(opencl.find(" = vload4(0, (&((__global float*)"), std::string::npos) << opencl;
  EXPECT_NE(opencl.find("vstore4("), std::string::npos) << opencl;
  EXPECT_NE(opencl.find(".w"), std::string::npos) << opencl;
  // Rows of 61 floats: no chunk of A's tile is proven aligned in A.
  const std::string unaligned = runtime::OpenCLModuleSource(
      build(SharedMatmul(64, 64, 61, 8, 8, 8, false, false, false, 4), Target::Parse("opencl"))
          ->imports()[0]);
  EXPECT_EQ(unaligned.find("vload4(0, (&((__global float*)v0_A"), std::string::npos) << unaligned;
  EXPECT_NE(unaligned.find("vload4(0, (&((__global float*)v1_B"), std::string::npos) << unaligned;
}

// The Winograd computes' bad operands are errors that name them and say what was expected.
TEST(GpuWinograd, BadOperandsAreErrorsThatSayWhatWasExpected) {
  const DataType f32 = DataType::Float(32);
  te::Tensor x = te::placeholder({1, 8, 10, 10}, f32, "x");
  te::Tensor u = te::placeholder({6, 6, 4, 16}, f32, "u");
  EXPECT_NE(ErrorOf([&] { topi::gpu::conv2d_nchw_winograd(x, u, {}); })
                .find("the transformed weight 'u' has shape (6, 6, 4, 16), expected (6, 6, 8, K) "
                      "for data 'x' of 8 channels"),
            std::string::npos);
  topi::Conv2DAttrs strided;
  strided.strides = {2, 2};
  te::Tensor good = te::placeholder({6, 6, 8, 16}, f32, "good");
  EXPECT_NE(ErrorOf([&] {
              topi::gpu::conv2d_nchw_winograd(x, good, strided);
            }).find("Winograd needs stride 1, dilation 1 and groups 1, got strides (2, 2)"),
            std::string::npos);
  te::Tensor five = te::placeholder({16, 8, 5, 5}, f32, "five");
  EXPECT_NE(ErrorOf([&] {
              topi::gpu::winograd_weight_transform_nchw(five);
            }).find("needs a 3x3 kernel, weight 'five' has shape (16, 8, 5, 5)"),
            std::string::npos);
}

// Double-buffered tiles: each step of the reduction loop fetches the next tiles into the
// halves it does not read and waits once, at its end (twice without double buffering: after
// the fetch and before the next one). The steady loop is the only loop with barriers.
TEST(OpenCLTarget, DoubleBufferedTilesWaitOncePerStep) {
  auto barriers_in_loops = [](const PrimFunc& func) {
    const std::string source =
        runtime::OpenCLModuleSource(build(func, Target::Parse("opencl"))->imports()[0]);
    // The k_outer loop's body: from its header to the first loop of the products.
    const size_t loop = source.find("_k_outer = ");
    const size_t products = source.find("_k_inner = ", loop);
    int count = 0;
    for (size_t at = source.find("barrier(", loop); at < products;
         at = source.find("barrier(", at + 1)) {
      ++count;
    }
    return std::make_pair(count, source);
  };
  auto [single, single_source] =
      barriers_in_loops(SharedMatmul(64, 64, 64, 8, 8, 8, false, false, false));
  EXPECT_EQ(single, 1) << single_source;  // after the fetch, before the products
  auto [doubled, doubled_source] =
      barriers_in_loops(SharedMatmul(64, 64, 64, 8, 8, 8, false, false, true));
  EXPECT_EQ(doubled, 0) << doubled_source;  // none between the next tiles' fetch and these
}

TEST(CUDATarget, AlignedTileAccessesAre128BitLoadsAndStores) {
  const GpuTarget cuda{"cuda", testing::kCUDADevice};
  LOOM_SKIP_WITHOUT_COMPILER(cuda);
  const std::string ptx = DeviceCode(
      build(SharedMatmul(64, 64, 64, 8, 8, 8, false, false, false, 4), Target::Parse("cuda")));
  EXPECT_NE(ptx.find("ld.global.v4."), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.shared.v4."), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.shared.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
}

}  // namespace
}  // namespace loom
