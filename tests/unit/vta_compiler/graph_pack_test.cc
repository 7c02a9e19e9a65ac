// PackGraph (loom/vta/compiler/graph.h) on quantized convolutions built with the graph API: what
// it packs, what it keeps on the host and why, and that the packed model computes what the
// host does, bit for bit, on the simulator.
#include <gtest/gtest.h>

#include <random>

#include "hazard_checked_test.h"
#include "loom/graph/compile.h"
#include "loom/graph/functor.h"
#include "loom/graph/strategy.h"
#include "loom/graph/tuning.h"
#include "loom/runtime/graph_executor.h"
#include "loom/vta/compiler/conv2d_tuning.h"
#include "loom/vta/compiler/graph.h"
#include "loom/vta/runtime.h"

namespace loom::vta {
namespace {

using graph::Expr;
using graph::MakeCall;

const DataType kI8 = DataType::Int(8), kI32 = DataType::Int(32);

Expr Int32(int64_t v) { return graph::MakeScalarConstant(double(v), kI32); }

// Seeded int8 values in [-limit, limit] of `shape`.
graph::Constant Int8Weight(const std::vector<int64_t>& shape, int limit, unsigned seed) {
  runtime::NDArray w = runtime::NDArray::Empty(shape, kI8);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-limit, limit);
  for (int64_t i = 0; i < w.NumElements(); ++i) static_cast<int8_t*>(w.data())[i] = value(rng);
  return graph::MakeConstant(w, "w");
}

graph::Constant Int32Bias(int64_t channels, unsigned seed) {
  runtime::NDArray b = runtime::NDArray::Empty({channels}, kI32);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-3000, 3000);
  for (int64_t i = 0; i < channels; ++i) static_cast<int32_t*>(b.data())[i] = value(rng);
  return graph::MakeConstant(b, "b");
}

// x (int8, `in` channels) -> conv 3x3 (in -> out) -> bias -> relu -> requantize by `shift` ->
// int8, as the power-of-two quantization writes it (with its saturating clip before the
// rounding add).
Expr QuantizedLayer(const Expr& x, int64_t in, int64_t out, int64_t shift, int weight_limit,
                    unsigned seed, const std::string& name) {
  Expr conv = MakeCall("qnn.conv2d", {x, Int8Weight({out, in, 3, 3}, weight_limit, seed)},
                       {{"padding", graph::Ints{1, 1, 1, 1}}}, name);
  Expr y = MakeCall("nn.bias_add", {conv, Int32Bias(out, seed + 1)}, {{"axis", int64_t{1}}},
                    name + ".bias");
  y = MakeCall("nn.relu", {y}, {}, name + ".relu");
  const int64_t half = int64_t{1} << (shift - 1);
  y = MakeCall("clip", {y}, {{"a_min", -2147483648.0}, {"a_max", 2147483647.0 - double(half)}});
  y = MakeCall("add", {y, Int32(half)});
  y = MakeCall("right_shift", {y, Int32(shift)});
  y = MakeCall("clip", {y}, {{"a_min", -127.0}, {"a_max", 127.0}});
  return graph::MakeCast(y, kI8);
}

// One such layer of a 1x32x8x8 input, 32 -> 32 channels, its output widened to int32.
graph::IRModule QuantizedConv(int64_t shift, int weight_limit = 4) {
  graph::Var x = graph::MakeVar("x", graph::TensorType({1, 32, 8, 8}, kI8));
  Expr y = QuantizedLayer(x, 32, 32, shift, weight_limit, 1, "conv");
  return graph::IRModule::FromFunction(graph::MakeFunction({x}, graph::MakeCast(y, kI32)));
}

std::vector<graph::LayerPlacement> PlacementsOf(const graph::IRModule& module) {
  graph::TakePlacements();
  graph::RunPasses(module, {PackGraph(Environment(VTAConfig::Default()), Target::Parse("vta"))});
  return graph::TakePlacements();
}

TEST(VtaPackGraph, AQuantizedConvolutionGoesToVta) {
  const std::vector<graph::LayerPlacement> placed = PlacementsOf(QuantizedConv(9));
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].device, "vta");
  EXPECT_EQ(placed[0].reason, "");
}

// The ALU reads a shift amount of 5 bits (signed) at int32: a right shift of 16 or more is
// none it can do, so the layer stays on the host, saying why.
TEST(VtaPackGraph, AShiftTheAluCannotDoKeepsTheLayerOnTheHost) {
  const std::vector<graph::LayerPlacement> placed = PlacementsOf(QuantizedConv(18));
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].device, "host");
  EXPECT_NE(placed[0].reason.find("no 16-bit immediate"), std::string::npos)  // the add of 2^17
      << placed[0].reason;
}

// The ALU's immediates: 16 bits; a shift amount a signed log2(accumulator width)-bit number.
TEST(VtaPackGraph, TheAluTakesShiftsOfFiveBitsAtInt32) {
  const Environment env(VTAConfig::Default());
  EXPECT_TRUE(env.AluImmediateFits(AluOpcode::kShr, 15));
  EXPECT_FALSE(env.AluImmediateFits(AluOpcode::kShr, 16));
  EXPECT_TRUE(env.AluImmediateFits(AluOpcode::kShr, -16));  // a left shift by 16
  EXPECT_FALSE(env.AluImmediateFits(AluOpcode::kShr, -17));
  EXPECT_TRUE(env.AluImmediateFits(AluOpcode::kAdd, 32767));
  EXPECT_FALSE(env.AluImmediateFits(AluOpcode::kAdd, 32768));
  EXPECT_TRUE(env.AluImmediateFits(AluOpcode::kMin, -32768));
}

class VtaPackGraphRun : public testing::HazardCheckedTest {};

// Answers every query with one point, and keeps the workloads asked about.
class OnePoint : public graph::ConfigDispatcher {
 public:
  explicit OnePoint(topi::Config point) : point_(std::move(point)) {}
  std::optional<topi::Config> Query(const Target&, const graph::TuningWorkload& w) override {
    queried.push_back(w);
    return point_;
  }
  std::vector<graph::TuningWorkload> queried;

 private:
  topi::Config point_;
};

// The tiling attribute of the (one) packed convolution of `module` after PackGraph.
graph::Ints PackedTiling(const graph::IRModule& module) {
  const graph::IRModule packed = graph::RunPasses(
      module, {PackGraph(Environment(VTAConfig::Default()), Target::Parse("vta"))});
  graph::Ints tiling;
  graph::PostOrderVisitDataflow(packed.main()->body, [&](const Expr& e) {
    const auto* call = e.as<graph::CallNode>();
    if (call != nullptr && call->op != nullptr && call->op->name == "vta.conv2d_packed") {
      tiling = call->attrs.GetInts("tiling");
    }
  });
  return tiling;
}

// A packed convolution takes the tuning records' tiling (graph::QueryTunedConfig, asked about
// its "vta.conv2d" workload), else the default; a record outside the space is an error.
TEST(VtaPackGraph, TheTilingIsTheTunedOneElseTheDefault) {
  const Environment env(VTAConfig::Default());
  Conv2DWorkload w;
  w.in_channels = w.out_channels = 32, w.height = w.width = 8;
  w.kernel_h = w.kernel_w = 3, w.pad_h = w.pad_w = 1;
  const Conv2DTiling fallback = DefaultConv2DTiling(env, w, 0, 2);
  EXPECT_EQ(PackedTiling(QuantizedConv(9)),
            (graph::Ints{fallback.rows, fallback.oc_blocks, fallback.virtual_threads}));

  auto tuned = std::make_shared<OnePoint>(
      topi::Config({{"rows", 2}, {"oc_blocks", 1}, {"virtual_threads", 2}}));
  {
    graph::ConfigDispatchScope scope(tuned);
    EXPECT_EQ(PackedTiling(QuantizedConv(9)), (graph::Ints{2, 1, 2}));
  }
  ASSERT_EQ(tuned->queried.size(), 1u);
  EXPECT_EQ(tuned->queried[0], Conv2DTuningWorkload(env, w, 0, 2));

  graph::ConfigDispatchScope scope(std::make_shared<OnePoint>(
      topi::Config({{"rows", 3}, {"oc_blocks", 1}, {"virtual_threads", 1}})));
  try {
    PackedTiling(QuantizedConv(9));
    FAIL() << "packed with 3 rows of 8";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("vta.conv2d"), std::string::npos) << error.what();
  }
}

// The model's int32 output on seeded int8 inputs, compiled with `options`.
std::vector<int32_t> RunSeeded(const graph::IRModule& module, const graph::CompileOptions& options,
                               size_t expected_placements) {
  graph::CompiledModel compiled = graph::Compile(module, options);
  EXPECT_EQ(compiled.placements.size(), expected_placements);
  runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
  runtime::NDArray x =
      runtime::NDArray::Empty(*module.main()->params[0]->checked_type.ConstShape(), kI8);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(-128, 127);
  for (int64_t i = 0; i < x.NumElements(); ++i) static_cast<int8_t*>(x.data())[i] = value(rng);
  executor.SetInput(0, x);
  executor.Run();
  runtime::NDArray out = executor.GetOutput(0);
  const auto* v = static_cast<const int32_t*>(out.data());
  return {v, v + out.NumElements()};
}

// Channels that are no whole number of blocks: padded, on VTA, the same values as the host's;
// a consumer takes its producer's padded output as it is. Padding an RGB image's 3 channels
// to 16 would multiply the work by 5.3: the CPU, saying so.
TEST_F(VtaPackGraphRun, ChannelsArePaddedToWholeBlocks) {
  graph::Var x = graph::MakeVar("x", graph::TensorType({1, 24, 8, 8}, kI8));
  Expr y = QuantizedLayer(x, 24, 40, 9, 127, 1, "first");
  y = QuantizedLayer(y, 40, 24, 9, 127, 3, "second");
  const graph::IRModule chain =
      graph::IRModule::FromFunction(graph::MakeFunction({x}, graph::MakeCast(y, kI32)));
  const std::vector<graph::LayerPlacement> placed = PlacementsOf(chain);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].device, "vta");
  EXPECT_EQ(placed[0].reason, "channels padded to whole blocks: 24 -> 32 in, 40 -> 48 out");
  EXPECT_EQ(placed[1].device, "vta");
  EXPECT_EQ(RunSeeded(chain, {.target = "vta"}, 2), RunSeeded(chain, {.target = "llvm"}, 0));

  graph::Var rgb = graph::MakeVar("rgb", graph::TensorType({1, 3, 8, 8}, kI8));
  const graph::IRModule stem = graph::IRModule::FromFunction(graph::MakeFunction(
      {rgb}, graph::MakeCast(QuantizedLayer(rgb, 3, 16, 9, 4, 1, "stem"), kI32)));
  const std::vector<graph::LayerPlacement> stem_placed = PlacementsOf(stem);
  ASSERT_EQ(stem_placed.size(), 1u);
  EXPECT_EQ(stem_placed[0].device, "host");
  EXPECT_NE(stem_placed[0].reason.find("would multiply its work by 5.3"), std::string::npos)
      << stem_placed[0].reason;
}

// Compiled for vta (with the default tiling and a tuned one) and for the host, the model
// computes the same values bit for bit.
TEST_F(VtaPackGraphRun, ThePackedModelEqualsTheHostsBitForBit) {
  const graph::IRModule module = QuantizedConv(9, /*weight_limit=*/127);
  graph::CompileOptions tuned{.target = "vta"};
  tuned.configs = std::make_shared<OnePoint>(
      topi::Config({{"rows", 1}, {"oc_blocks", 2}, {"virtual_threads", 1}}));
  const std::vector<int32_t> host = RunSeeded(module, {.target = "llvm"}, 0);
  EXPECT_EQ(RunSeeded(module, {.target = "vta"}, 1), host);
  EXPECT_EQ(RunSeeded(module, tuned, 1), host);
}

// At -O0 nothing fuses, and a VTA kernel needs its tail: a clear error.
TEST(VtaPackGraph, TheVtaTargetNeedsFusion) {
  try {
    graph::Compile(QuantizedConv(9), {.opt_level = 0, .target = "vta"});
    FAIL() << "compiled at -O0";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("target 'vta' needs -O1 or higher"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace loom::vta
