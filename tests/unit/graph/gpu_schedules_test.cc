// The GPU targets' schedules of graph operators, compiled for opencl and run on its device
// (PoCL here) against the graph's reference:
//  - the generic schedule on reductions: long reductions with few outputs (softmax over
//    classes, layer norm over features, global pooling, a batch-1 dense, reductions to a
//    scalar) are shared by the threads of a block, which combine their partial results;
//    short ones keep a thread per output;
//  - the shared-memory tiled products: dense (its weight transposed on the way into shared
//    memory) with a bias and activation, batch_matmul, matmul with a broadcast operand,
//    convolutions of one group (implicit products), depthwise convolutions;
//  - Winograd F(4x4, 3x3) convolutions (-conv2d-winograd).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "compile_test_models.h"
#include "gpu_device.h"
#include "gpu_target_test.h"
#include "graph_test_util.h"
#include "loom/runtime/cuda_module.h"
#include "loom/runtime/opencl_module.h"

namespace loom::graph::test {
namespace {

using models::kF32;

struct Case {
  std::string name;
  Function main;
  bool cross_thread;  // whether a kernel combines partial results across threads
};

Function Unary(const std::vector<int64_t>& shape, const std::string& op, Attrs attrs = {}) {
  Var x = MakeVar("x", TensorType(shape, kF32));
  return MakeFunction({x}, MakeCall(op, {x}, std::move(attrs), op));
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back(
      {"softmax over 1000 classes", Unary({2, 1000}, "nn.softmax", {{"axis", int64_t{1}}}), true});
  cases.push_back({"log_softmax", Unary({3, 130}, "nn.log_softmax", {{"axis", int64_t{1}}}), true});
  {
    Var x = MakeVar("x", TensorType({4, 768}, kF32));
    Expr norm = MakeCall("nn.layer_norm",
                         {x, models::Weight({768}, "gamma", 1), models::Weight({768}, "beta", 2)},
                         {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}, "ln");
    cases.push_back({"layer_norm over 768 features", MakeFunction({x}, norm), true});
  }
  cases.push_back({"global average pooling", Unary({1, 64, 7, 7}, "nn.global_avg_pool2d"), true});
  cases.push_back({"sum to a scalar", Unary({37, 41}, "sum", {{"axis", Ints{}}}), true});
  // Long enough for two kernels: blocks' partial sums, then one block's total.
  cases.push_back({"long sum to a scalar", Unary({256, 300}, "sum", {{"axis", Ints{}}}), true});
  cases.push_back({"max over the outer axis", Unary({300, 20}, "max", {{"axis", Ints{0}}}), true});
  cases.push_back({"argmax", Unary({3, 500}, "argmax", {{"axis", int64_t{1}}}), true});
  {
    Var x = MakeVar("x", TensorType({1, 512}, kF32));
    Expr dense = MakeCall("nn.dense", {x, models::Weight({100, 512}, "w", 3)}, {}, "fc");
    cases.push_back({"batch-1 dense", MakeFunction({x}, dense), true});
  }
  // Short reductions keep one thread per output.
  cases.push_back({"mean over 8", Unary({64, 8}, "mean", {{"axis", Ints{1}}}), false});
  return cases;
}

TEST(GpuReductions, LongReductionsShareABlockShortOnesAThread) {
  LOOM_SKIP_WITHOUT_OPENCL();
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    CompiledModel compiled = models::ExpectMatchesReference(c.main, 3, "opencl");
    const std::string source = runtime::OpenCLModuleSource(compiled.kernels->imports().at(0));
    EXPECT_EQ(source.find("red_buf") != std::string::npos, c.cross_thread) << source;
    if (c.name == "long sum to a scalar") {
      size_t kernels = 0;
      for (size_t at = source.find("__kernel"); at != std::string::npos;
           at = source.find("__kernel", at + 1)) {
        ++kernels;
      }
      EXPECT_EQ(kernels, 2u) << source;
    }
  }
}

TEST(GpuProducts, DenseMatmulBatchMatmulAndConvTileThroughSharedMemory) {
  LOOM_SKIP_WITHOUT_OPENCL();
  std::vector<std::pair<std::string, Function>> cases;
  {
    Var x = MakeVar("x", TensorType({130, 96}, kF32));
    Expr dense = MakeCall("nn.dense", {x, models::Weight({80, 96}, "w", 4)}, {}, "fc");
    Expr biased = MakeCall("nn.bias_add", {dense, models::Weight({80}, "b", 5)},
                           {{"axis", int64_t{1}}}, "fc_bias");
    cases.emplace_back("dense, bias, relu", MakeFunction({x}, MakeCall("nn.relu", {biased})));
  }
  {
    Var a = MakeVar("a", TensorType({3, 70, 33}, kF32));
    Var b = MakeVar("b", TensorType({3, 33, 90}, kF32));
    cases.emplace_back("batch_matmul",
                       MakeFunction({a, b}, MakeCall("nn.batch_matmul", {a, b}, {}, "bmm")));
  }
  {
    Var a = MakeVar("a", TensorType({2, 2, 64, 40}, kF32));
    Var b = MakeVar("b", TensorType({40, 65}, kF32));
    cases.emplace_back("matmul, b broadcast over two batch dimensions",
                       MakeFunction({a, b}, MakeCall("nn.matmul", {a, b}, {}, "mm")));
  }
  {
    // Convolutions as implicit products: weight x the data's windows per image, output
    // channels and pixels a tile does not divide, 1 x 1 and 3 x 3 (padded), strides 1 and 2,
    // rows shorter and longer than a tile, with the bias.
    Var x = MakeVar("x", TensorType({2, 32, 18, 18}, kF32));
    Expr wide = models::Conv(x, 32, 96, 1, 1, 6, "wide");
    Expr strided = models::Conv(x, 32, 64, 1, 2, 8, "strided");
    Expr window = models::Conv(x, 32, 64, 3, 1, 10, "window");
    Expr strided_window = models::Conv(x, 32, 80, 3, 2, 12, "strided_window");
    cases.emplace_back("conv2d", MakeFunction({x}, MakeTuple({MakeCall("nn.relu", {wide}), strided,
                                                              window, strided_window})));
    Var long_rows = MakeVar("long_rows", TensorType({1, 8, 3, 150}, kF32));
    cases.emplace_back("conv2d of rows longer than a tile",
                       MakeFunction({long_rows}, models::Conv(long_rows, 8, 64, 3, 1, 14, "long")));
  }
  for (const auto& [name, main] : cases) {
    SCOPED_TRACE(name);
    CompiledModel compiled = models::ExpectMatchesReference(main, 3, "opencl");
    const std::string source = runtime::OpenCLModuleSource(compiled.kernels->imports().at(0));
    // The operands' tiles (cache_read "shared"), not a reduction's buffer.
    EXPECT_NE(source.find("_shared_data_storage"), std::string::npos) << source;
    EXPECT_EQ(source.find("red_buf"), std::string::npos) << source;
    if (name == "dense, bias, relu") {
      // The constant weight transposed at compile time (a matmul): read along its rows.
      ASSERT_EQ(compiled.kernel_names.size(), 1u);
      EXPECT_EQ(compiled.kernel_names[0].rfind("fused_nn_matmul", 0), 0u)
          << compiled.kernel_names[0];
    }
  }
}

// --precision bf16 / fp16 for cuda: where the target has tensor cores for the type (bfloat16
// from sm_80, float16 from sm_70; this toolkit compiles from sm_75) the dense layers and the
// batch_matmul of two activations, whose sizes divide into the tiles, take the tensor-core schedule
// (warp matrix instructions in the PTX); bfloat16 on sm_75 rounds the operands and keeps float32
// kernels. Compiled with NVRTC wherever the toolkit is.
TEST(GpuProducts, HalfPrecisionProductsTakeTheTensorCoresWhereTheTargetHasThem) {
  LOOM_SKIP_WITHOUT_COMPILER((testing::GpuTarget{"cuda", testing::kCUDADevice}));
  Var x = MakeVar("x", TensorType({128, 256}, kF32));
  Expr hidden = MakeCall(
      "nn.relu",
      {MakeCall("nn.bias_add",
                {MakeCall("nn.dense", {x, models::Weight({128, 256}, "w1", 21)}, {}, "fc1"),
                 models::Weight({128}, "b1", 22)},
                {{"axis", int64_t{1}}})});
  Expr scores = MakeCall("nn.dense", {hidden, models::Weight({64, 128}, "w2", 23)}, {}, "fc2");
  Var a = MakeVar("a", TensorType({4, 64, 32}, kF32));
  Var b = MakeVar("b", TensorType({4, 32, 64}, kF32));
  Expr attention = MakeCall("nn.batch_matmul", {a, b}, {}, "bmm");
  // Convolutions (no tensor-core schedule): the first's epilogue rounds its result for the
  // second, and it still takes the shared-memory tiling.
  Var image = MakeVar("image", TensorType({1, 32, 16, 16}, kF32));
  Expr convs = models::Conv(MakeCall("nn.relu", {models::Conv(image, 32, 64, 3, 1, 24, "c1")}), 64,
                            64, 3, 1, 26, "c2");
  Function main = MakeFunction(
      {x, a, b, image}, MakeTuple({MakeCall("nn.softmax", {scores}, {{"axis", int64_t{1}}}),
                                   MakeCall("nn.softmax", {attention}, {{"axis", int64_t{2}}}),
                                   MakeCall("nn.softmax", {convs}, {{"axis", int64_t{1}}})}));
  struct Case {
    std::string precision, arch;
    int tensor_core_kernels;
  };
  for (const Case& c : {Case{"bf16", "sm_80", 3}, Case{"bf16", "sm_75", 0},
                        Case{"fp16", "sm_75", 3}, Case{"fp16", "sm_90", 3}}) {
    SCOPED_TRACE(c.precision + " " + c.arch);
    const std::string mma = c.precision == "bf16"
                                ? "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32"
                                : "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32";
    CompiledModel compiled =
        Compile(IRModule::FromFunction(main),
                {.opt_level = 3, .target = "cuda -arch=" + c.arch, .precision = c.precision});
    const std::string ptx = runtime::CUDAModulePTX(compiled.kernels->imports().at(0));
    int kernels = 0;
    bool tiled_conv = false;
    const std::string entry = ".visible .entry";
    for (size_t at = ptx.find(entry); at != std::string::npos; at = ptx.find(entry, at + 1)) {
      const size_t end = ptx.find(entry, at + 1);
      const std::string kernel = ptx.substr(at, end == std::string::npos ? end : end - at);
      kernels += kernel.find(mma) != std::string::npos;
      if (kernel.find("fused_nn_conv2d_nn_bias_add_nn_relu") == entry.size() + 1) {
        tiled_conv = kernel.find(".shared") != std::string::npos;
      }
    }
    EXPECT_EQ(kernels, c.tensor_core_kernels) << ptx;
    EXPECT_TRUE(tiled_conv) << ptx;
  }
}

// Seeded random integers in [lo, hi].
class Picker {
 public:
  explicit Picker(unsigned seed) : rng_(seed) {}
  int64_t operator()(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937 rng_;
};

// Random products: dense (with and without a batch of rows), matmul and batch_matmul with
// sizes around a tile, each tiled or not as the strategy decides, match the reference.
TEST(GpuProducts, RandomProductsMatchTheReference) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Picker pick(22);
  for (int i = 0; i < 9; ++i) {
    const int64_t batch = pick(1, 3), m = pick(1, 150), n = pick(1, 150), k = pick(1, 70);
    Function main;
    std::string what;
    if (i % 3 == 0) {
      Var x = MakeVar("x", TensorType({m, k}, kF32));
      main = MakeFunction({x},
                          MakeCall("nn.dense", {x, models::Weight({n, k}, "w", 40 + i)}, {}, "fc"));
      what = "dense";
    } else {
      Var a = MakeVar("a", TensorType({batch, m, k}, kF32));
      Var b = MakeVar("b", TensorType({batch, k, n}, kF32));
      const char* op = i % 3 == 1 ? "nn.matmul" : "nn.batch_matmul";
      main = MakeFunction({a, b}, MakeCall(op, {a, b}, {}, "product"));
      what = op;
    }
    SCOPED_TRACE(what + " batch " + std::to_string(batch) + " m " + std::to_string(m) + " n " +
                 std::to_string(n) + " k " + std::to_string(k));
    models::ExpectMatchesReference(main, 3, "opencl");
  }
}

// Shapes and targets at the edges of what the tiled schedules take: a row of 49 pixels whose
// strided columns cover 64 (its data tile just over OpenCL's shared memory: another schedule
// takes it), blocks of at most 128 threads (the tilings' 256 do not fit), a matrix times a
// vector with batch dimensions (its batch would be the tile's rows); each builds and matches.
TEST(GpuProducts, ShapesAndTargetsAtTheTilingsEdgesBuildAndMatch) {
  LOOM_SKIP_WITHOUT_OPENCL();
  {
    Var x = MakeVar("x", TensorType({1, 8, 10, 51}, kF32));
    Expr conv = MakeCall("nn.conv2d", {x, models::Weight({64, 8, 4, 3}, "w", 60)}, {}, "conv");
    models::ExpectMatchesReference(MakeFunction({x}, conv), 3, "opencl");
  }
  {
    Var x = MakeVar("x", TensorType({1, 16, 12, 12}, kF32));
    Var a = MakeVar("a", TensorType({70, 40}, kF32));
    Var b = MakeVar("b", TensorType({40, 90}, kF32));
    Expr conv = models::Conv(x, 16, 64, 3, 1, 61, "conv");
    models::ExpectMatchesReference(
        MakeFunction({x, a, b}, MakeTuple({conv, MakeCall("nn.matmul", {a, b}, {}, "mm")})), 3,
        "opencl -max-threads-per-block=128");
  }
  {
    Var a = MakeVar("a", TensorType({64, 64, 32}, kF32));
    Var v = MakeVar("v", TensorType({32}, kF32));
    models::ExpectMatchesReference(MakeFunction({a, v}, MakeCall("nn.matmul", {a, v}, {}, "mv")), 3,
                                   "opencl");
  }
}

// A random conv2d of one group (kernels 1 to 5 wide, not square; strides up to 3; filters
// around a tile; rows up to 90) or a depthwise one (channel multipliers 1 and 2; square
// strides up to 2; rows up to 300, shorter and longer than a block), with dilations up to 2
// and asymmetric padding up to 2.
struct RandomConv {
  int64_t channels, filters, groups, r, s, stride_h, stride_w, dilation_h, dilation_w, height,
      width;
  Ints padding;

  RandomConv(Picker& pick, bool depthwise) {
    channels = pick(1, depthwise ? 12 : 24);
    filters = depthwise ? channels * pick(1, 2) : pick(40, 140);
    groups = depthwise ? channels : 1;
    r = pick(1, 5);
    s = pick(1, 5);
    stride_h = pick(1, depthwise ? 2 : 3);
    stride_w = depthwise ? stride_h : pick(1, 3);
    dilation_h = pick(1, 2);
    dilation_w = depthwise ? dilation_h : pick(1, 2);
    padding = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    height = pick((r - 1) * dilation_h + 1, depthwise ? 12 : 20);
    width = pick((s - 1) * dilation_w + 1, depthwise ? 300 : 90);
  }

  std::string Describe() const {
    auto text = [](int64_t v) { return std::to_string(v); };
    return "x [1, " + text(channels) + ", " + text(height) + ", " + text(width) + "] w [" +
           text(filters) + ", " + text(channels / groups) + ", " + text(r) + ", " + text(s) +
           "] groups " + text(groups) + " strides " + text(stride_h) + "x" + text(stride_w) +
           " dilation " + text(dilation_h) + "x" + text(dilation_w);
  }

  // The convolution of an input `x`, with a ReLU after it or not.
  Function Model(unsigned seed, bool relu) const {
    Var x = MakeVar("x", TensorType({1, channels, height, width}, kF32));
    Expr conv =
        MakeCall("nn.conv2d", {x, models::Weight({filters, channels / groups, r, s}, "w", seed)},
                 {{"padding", padding},
                  {"strides", Ints{stride_h, stride_w}},
                  {"dilation", Ints{dilation_h, dilation_w}},
                  {"groups", groups}},
                 "conv");
    return MakeFunction({x}, relu ? MakeCall("nn.relu", {conv}) : conv);
  }
};

// Random convolutions of one group: whichever schedule takes each (tiled where its tiles
// fit, direct or generic otherwise), the model builds and matches the reference.
TEST(GpuProducts, RandomConvolutionsBuildAndMatchTheReference) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Picker pick(21);
  for (int i = 0; i < 10; ++i) {
    const RandomConv conv(pick, /*depthwise=*/false);
    SCOPED_TRACE(conv.Describe());
    models::ExpectMatchesReference(conv.Model(30 + i, /*relu=*/true), 3, "opencl");
  }
}

// Random depthwise convolutions through the shared-memory schedule, with an epilogue (the
// convolution's accumulators are its own stage) and without (a cache of the output holds
// them), against the reference; the first also checked to read its input from shared memory.
TEST(GpuProducts, RandomDepthwiseConvolutionsMatchTheReference) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Picker pick(23);
  for (int i = 0; i < 8; ++i) {
    const RandomConv conv(pick, /*depthwise=*/true);
    SCOPED_TRACE(conv.Describe());
    CompiledModel compiled =
        models::ExpectMatchesReference(conv.Model(50 + i, i % 2 == 0), 3, "opencl");
    if (i == 0) {
      const std::string source = runtime::OpenCLModuleSource(compiled.kernels->imports().at(0));
      EXPECT_NE(source.find("_shared_data_storage"), std::string::npos) << source;
    }
  }
}

// With -conv2d-winograd: random 3x3 convolutions of stride 1 (sizes the 4x4 tiles do not
// divide, asymmetric padding, one or two images, with and without a ReLU) and one of too few
// tiles for the default tiling's columns become Winograd
// convolutions, whose constant weight is transformed at compile time; a weight given as an
// input is transformed by a kernel of its own. Each matches the reference within 1e-3, as the
// x86 Winograd does (inputs up to 4 in magnitude: the transforms' sums of up to 64 times an
// input lose that many bits of float32).
TEST(GpuWinograd, ThreeByThreeConvolutionsMatchTheReference) {
  LOOM_SKIP_WITHOUT_OPENCL();
  const std::string target = "opencl -conv2d-winograd=true";
  Picker pick(24);
  for (int i = 0; i < 6; ++i) {
    const int64_t images = pick(1, 2), channels = pick(1, 24), filters = pick(64, 140);
    const int64_t height = pick(30, 38), width = pick(30, 38);
    const Ints padding = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    SCOPED_TRACE("x [" + std::to_string(images) + ", " + std::to_string(channels) + ", " +
                 std::to_string(height) + ", " + std::to_string(width) + "] filters " +
                 std::to_string(filters));
    Var x = MakeVar("x", TensorType({images, channels, height, width}, kF32));
    Expr conv = MakeCall("nn.conv2d", {x, models::Weight({filters, channels, 3, 3}, "w", 70 + i)},
                         {{"padding", padding}}, "conv");
    CompiledModel compiled = models::ExpectMatchesReference(
        MakeFunction({x}, i % 2 == 0 ? MakeCall("nn.relu", {conv}) : conv), 3, target, 1e-3);
    const std::string source = runtime::OpenCLModuleSource(compiled.kernels->imports().at(0));
    EXPECT_NE(source.find("winograd_product"), std::string::npos) << source;
    EXPECT_EQ(source.find("weight_transform"), std::string::npos) << source;
  }
  // 36 tiles (fewer than a default tile's 64 columns): blocks of 64 channels x 16 tiles.
  {
    Var x = MakeVar("x", TensorType({1, 16, 24, 24}, kF32));
    Expr conv = MakeCall("nn.conv2d", {x, models::Weight({96, 16, 3, 3}, "w", 80)},
                         {{"padding", Ints{1, 1, 1, 1}}}, "conv");
    CompiledModel compiled =
        models::ExpectMatchesReference(MakeFunction({x}, conv), 3, target, 1e-3);
    EXPECT_NE(
        runtime::OpenCLModuleSource(compiled.kernels->imports().at(0)).find("winograd_product"),
        std::string::npos);
  }
  Var x = MakeVar("x", TensorType({1, 8, 32, 32}, kF32));
  Var w = MakeVar("w", TensorType({64, 8, 3, 3}, kF32));
  CompiledModel compiled = models::ExpectMatchesReference(
      MakeFunction({x, w}, MakeCall("nn.conv2d", {x, w}, {{"padding", Ints{1, 1, 1, 1}}}, "conv")),
      3, target, 1e-3);
  const std::string source = runtime::OpenCLModuleSource(compiled.kernels->imports().at(0));
  EXPECT_NE(source.find("weight_transform"), std::string::npos) << source;
  // Without the attribute, the same convolution is no Winograd one.
  compiled = models::ExpectMatchesReference(
      MakeFunction({x, w}, MakeCall("nn.conv2d", {x, w}, {{"padding", Ints{1, 1, 1, 1}}}, "conv")),
      3, "opencl");
  EXPECT_EQ(runtime::OpenCLModuleSource(compiled.kernels->imports().at(0)).find("winograd"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph::test
