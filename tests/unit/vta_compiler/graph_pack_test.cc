// PackGraph (loom/vta/compiler/graph.h) on quantized convolutions built with the graph API: what
// it packs, what it keeps on the host and why, and that the packed model computes what the
// host does, bit for bit, on the simulator.
#include <gtest/gtest.h>

#include <random>

#include "hazard_checked_test.h"
#include "loom/graph/compile.h"
#include "loom/graph/strategy.h"
#include "loom/runtime/graph_executor.h"
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

// x (int8 1x32x8x8) -> conv 3x3 (32 -> 32) -> bias -> relu -> requantize by `shift` -> int8,
// as the power-of-two quantization writes it (with its saturating clip before the rounding add).
graph::IRModule QuantizedConv(int64_t shift, int weight_limit = 4) {
  graph::Var x = graph::MakeVar("x", graph::TensorType({1, 32, 8, 8}, kI8));
  Expr conv = MakeCall("qnn.conv2d", {x, Int8Weight({32, 32, 3, 3}, weight_limit, 1)},
                       {{"padding", graph::Ints{1, 1, 1, 1}}}, "conv");
  Expr y = MakeCall("nn.bias_add", {conv, Int32Bias(32, 2)}, {{"axis", int64_t{1}}}, "bias");
  y = MakeCall("nn.relu", {y}, {}, "relu");
  const int64_t half = int64_t{1} << (shift - 1);
  y = MakeCall("clip", {y}, {{"a_min", -2147483648.0}, {"a_max", 2147483647.0 - double(half)}});
  y = MakeCall("add", {y, Int32(half)});
  y = MakeCall("right_shift", {y, Int32(shift)});
  y = MakeCall("clip", {y}, {{"a_min", -127.0}, {"a_max", 127.0}});
  y = graph::MakeCast(y, kI8);
  return graph::IRModule::FromFunction(graph::MakeFunction({x}, graph::MakeCast(y, kI32)));
}

std::vector<graph::LayerPlacement> PlacementsOf(const graph::IRModule& module) {
  graph::TakePlacements();
  graph::RunPasses(module, {PackGraph(Environment(VTAConfig::Default()))});
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

// Compiled for vta and for the host, the model computes the same values bit for bit.
TEST_F(VtaPackGraphRun, ThePackedModelEqualsTheHostsBitForBit) {
  const graph::IRModule module = QuantizedConv(9, /*weight_limit=*/127);
  runtime::NDArray x = runtime::NDArray::Empty({1, 32, 8, 8}, kI8);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(-128, 127);
  for (int64_t i = 0; i < x.NumElements(); ++i) static_cast<int8_t*>(x.data())[i] = value(rng);
  std::vector<std::vector<int32_t>> results;
  for (const char* target : {"vta", "llvm"}) {
    graph::CompiledModel compiled = graph::Compile(module, {.target = target});
    EXPECT_EQ(compiled.placements.size(), std::string(target) == "vta" ? 1u : 0u);
    runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
    executor.SetInput(0, x);
    executor.Run();
    runtime::NDArray out = executor.GetOutput(0);
    const auto* v = static_cast<const int32_t*>(out.data());
    results.emplace_back(v, v + out.NumElements());
  }
  EXPECT_EQ(results[0], results[1]);
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
