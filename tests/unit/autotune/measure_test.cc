// The measurer on a template whose points fail in every way a candidate can (a compile error, a
// wrong result, a crash, a hang): each is recorded with its kind, and the tuner's process carries
// on. And a real template (x86.dense) measured, with its failures named.
#include "loom/autotune/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "prim_func.h"

namespace loom::autotune {
namespace {

using topi::Config;

// "test.faults": out = 2 * in over 64 floats, computed wrongly, crashing or hanging by mode.
enum Mode : int64_t { kCorrect, kWrong, kCrash, kHang, kRefused };

graph::MeasurableKernel FaultKernel(const std::vector<int64_t>&, const Config& config) {
  const int64_t mode = config["mode"];
  if (mode == kRefused) LOOM_THROW << "test.faults refuses this point";
  const DataType f32 = DataType::Float(32);
  Buffer in = DeclBuffer({64}, f32, "in"), out = DeclBuffer({64}, f32, "out");
  Var i("i", DataType::Int(32));
  PrimExpr value = BufferLoad(in, {i}) * 2.0f;
  if (mode == kWrong) value = value + 1.0f;
  PrimExpr index = mode == kCrash ? PrimExpr(i + (1 << 30)) : PrimExpr(i);
  Stmt body = For(i, 0, 64, ForKind::kSerial, BufferStore(out, value, {index}), IterVar(), {});
  if (mode == kHang) {
    body = While(BufferLoad(out, {0}) > -1.0f,
                 BufferStore(out, max(BufferLoad(out, {0}), 0.0f) + 1.0f, {0}));
  }
  graph::MeasurableKernel kernel;
  kernel.module.Add("scale", testing::MakePrimFunc({in, out}, {}, body, "scale"));
  // `in` stands for a weight: the runner evicts it from the caches before each timed call.
  kernel.buffers = {{{64}, f32, /*input=*/true, /*weight=*/true}, {{64}, f32, false}};
  kernel.timed = {"scale", {0, 1}};
  kernel.result = 1;
  kernel.flops = 64;
  return kernel;
}

[[maybe_unused]] const bool kRegistered = [] {
  graph::RegisterTuningTemplate(
      {.name = "test.faults",
       .space =
           [](const std::vector<int64_t>&) {
             topi::ConfigSpace space;
             space.AddKnob("mode", topi::KnobKind::kChoice,
                           {kCorrect, kWrong, kCrash, kHang, kRefused});
             return space;
           },
       .default_config =
           [](const std::vector<int64_t>&) {
             return Config({{"mode", kCorrect}});
           },
       .instantiate = FaultKernel,
       .describe = [](const std::vector<int64_t>&) { return std::string("faults"); }});
  return true;
}();

MeasureOptions Quick() {
  MeasureOptions options;
  options.run_timeout_s = 3;
  options.min_repeat_ms = 1;
  options.repeat = 2;
  return options;
}

TEST(Measurer, RecordsEachKindOfFailureAndCarriesOn) {
  Measurer measurer({"test.faults", {}}, Target::Parse("llvm"), Quick());
  std::vector<MeasureResult> results = measurer.Measure(
      {Config({{"mode", kCorrect}}), Config({{"mode", kWrong}}), Config({{"mode", kCrash}}),
       Config({{"mode", kHang}}), Config({{"mode", kRefused}})});
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].error, MeasureError::kNone) << results[0].message;
  EXPECT_EQ(results[0].costs.size(), 2u);
  EXPECT_GT(results[0].cost(), 0);
  EXPECT_EQ(results[1].error, MeasureError::kWrongResult);
  EXPECT_NE(results[1].message.find("the default point computes"), std::string::npos)
      << results[1].message;
  EXPECT_EQ(results[2].error, MeasureError::kRuntimeError);
  EXPECT_NE(results[2].message.find("killed by signal"), std::string::npos) << results[2].message;
  EXPECT_EQ(results[3].error, MeasureError::kTimeout);
  EXPECT_EQ(results[4].error, MeasureError::kCompileError);
  EXPECT_NE(results[4].message.find("test.faults refuses this point"), std::string::npos);
  EXPECT_TRUE(std::isinf(results[1].cost()));
  EXPECT_EQ(measurer.reference().error, MeasureError::kNone);
}

// Rounds: every config measured once per round, each result as Measure would give it.
TEST(Measurer, MeasuresEachConfigOncePerRound) {
  Measurer measurer({"test.faults", {}}, Target::Parse("llvm"), Quick());
  std::vector<std::vector<MeasureResult>> rounds =
      measurer.MeasureRounds({Config({{"mode", kCorrect}}), Config({{"mode", kWrong}})}, 3);
  ASSERT_EQ(rounds.size(), 2u);
  ASSERT_EQ(rounds[0].size(), 3u);
  ASSERT_EQ(rounds[1].size(), 3u);
  for (const MeasureResult& r : rounds[0]) {
    EXPECT_EQ(r.error, MeasureError::kNone) << r.message;
    EXPECT_EQ(r.costs.size(), 2u);
  }
  for (const MeasureResult& r : rounds[1]) EXPECT_EQ(r.error, MeasureError::kWrongResult);
  EXPECT_NE(testing::ErrorOf([&] {
              measurer.MeasureRounds({Config({{"mode", kCorrect}})}, 0);
            }).find("rounds must be at least 1"),
            std::string::npos);
}

TEST(Measurer, MeasuresTheDensePointsAndRefusesAnotherSpacesConfig) {
  graph::TuningWorkload dense{"x86.dense", {8, 64, 32}};
  Measurer measurer(dense, Target::Parse("llvm"), Quick());
  const graph::TuningTemplate& t = graph::FindTuningTemplate("x86.dense");
  topi::ConfigSpace space = t.space(dense.args);
  std::vector<Config> configs = {space.At(space.ValidIndices().front()),
                                 space.At(space.ValidIndices().back()),
                                 Config({{"mode", kCorrect}})};
  std::vector<MeasureResult> results = measurer.Measure(configs);
  EXPECT_EQ(results[0].error, MeasureError::kNone) << results[0].message;
  EXPECT_EQ(results[1].error, MeasureError::kNone) << results[1].message;
  EXPECT_EQ(results[2].error, MeasureError::kCompileError);
  EXPECT_NE(results[2].message.find("has no knob"), std::string::npos) << results[2].message;
}

TEST(Measurer, TimesWithTheWeightsEvictedOrLeftInTheCaches) {
  for (bool cold : {true, false}) {
    MeasureOptions options = Quick();
    options.cold_weights = cold;
    Measurer measurer({"test.faults", {}}, Target::Parse("llvm"), options);
    std::vector<MeasureResult> results = measurer.Measure({Config({{"mode", kCorrect}})});
    EXPECT_EQ(results[0].error, MeasureError::kNone) << cold << ": " << results[0].message;
    EXPECT_EQ(results[0].costs.size(), 2u);
    EXPECT_GT(results[0].cost(), 0);
  }
}

// The x86 templates name their packed weight, an argument of the timed call, as the one weight.
TEST(Measurer, TheX86TemplatesMarkTheirPackedWeight) {
  const std::vector<graph::TuningWorkload> workloads = {
      {"x86.dense", {8, 64, 32}},
      {"x86.conv2d", {1, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}}};
  for (const graph::TuningWorkload& workload : workloads) {
    const graph::TuningTemplate& t = graph::FindTuningTemplate(workload.template_name);
    graph::MeasurableKernel kernel =
        t.instantiate(workload.args, t.default_config(workload.args));
    std::vector<size_t> weights;
    for (size_t b = 0; b < kernel.buffers.size(); ++b) {
      if (kernel.buffers[b].weight) weights.push_back(b);
    }
    ASSERT_EQ(weights.size(), 1u) << workload.str();
    const std::vector<size_t>& timed = kernel.timed.arguments;
    EXPECT_NE(std::find(timed.begin(), timed.end(), weights[0]), timed.end()) << workload.str();
    EXPECT_FALSE(kernel.buffers[weights[0]].input) << workload.str() << ": the packed form";
  }
}

TEST(Measurer, RefusesAnUnknownTemplateAndBadOptions) {
  EXPECT_NE(testing::ErrorOf([] {
              Measurer m({"x86.nothing", {}}, Target::Parse("llvm"));
            }).find("no tuning template 'x86.nothing'"),
            std::string::npos);
  MeasureOptions bad;
  bad.repeat = 0;
  EXPECT_NE(testing::ErrorOf([&] {
              Measurer m({"x86.dense", {1, 16, 16}}, Target::Parse("llvm"), bad);
            }).find("repeat must be at least 1"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::autotune
