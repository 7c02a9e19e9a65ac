// Operator strategies: implementations and layout rewrites registered under a target key
// (here a key of the test's own, which nothing in graph/ knows) are chosen by the target's
// keys, by priority and by their conditions; generic schedules take the target's vector width.
#include <gtest/gtest.h>

#include "graph_test_util.h"
#include "loom/graph/strategy.h"
#include "loom/graph/transform.h"
#include "loom/ir/functor.h"
#include "loom/topi/schedule.h"

namespace loom::graph {
namespace {

using test::In;
using Tensors = std::vector<te::Tensor>;

// Which implementation scheduled the last softmax group.
std::string g_chosen;

OpImplementation Recording(const std::string& name, int priority, bool only_last_axis) {
  return {.name = name,
          .priority = priority,
          .applies =
              [only_last_axis](const CallInfo& info, const Tensors&, const Target&) {
                return !only_last_axis || info.attrs.GetInt("axis") == -1;
              },
          .schedule = [name](const CallInfo&, const Tensors& outputs, const Target& target) {
            g_chosen = name;
            return topi::schedule_softmax(outputs[0], target.VectorLanes(32));
          }};
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterImplementation("nn.softmax", "test_strategy", Recording("any_axis", 1, false));
  RegisterImplementation("nn.softmax", "test_strategy", Recording("last_axis", 5, true));
  // Doubles every nn.relu (relu(x) -> relu(x) + relu(x)): observable, and still correct to
  // compile.
  RegisterLayoutRewrite("nn.relu", "test_strategy",
                        [](const CallNode& call, LayoutRewriteContext& context, const Target&) {
                          Expr relu = MakeCall("nn.relu", {context.Operand(0, "")});
                          return std::optional<LayoutRewrite>(
                              LayoutRewrite{MakeCall("add", {relu, relu}, {}, call.name_hint), ""});
                        });
  return true;
}();

std::string ScheduleSoftmax(int64_t axis, const std::string& target) {
  g_chosen = "generic";
  Var x = In("x", {4, 32});
  Expr out = MakeCall("nn.softmax", {x}, {{"axis", axis}});
  IRModule fused = FuseOps().run(IRModule::FromFunction(MakeFunction({x}, out)));
  LowerToTIR(fused, Target::Parse(target));
  return g_chosen;
}

TEST(Strategy, TheTargetsKeysChooseTheImplementationByPriorityAndCondition) {
  EXPECT_EQ(ScheduleSoftmax(-1, "llvm"), "generic");
  EXPECT_EQ(ScheduleSoftmax(-1, "llvm -keys=test_strategy"), "last_axis");
  EXPECT_EQ(ScheduleSoftmax(0, "llvm -keys=test_strategy"), "any_axis");
}

TEST(Strategy, LayoutRewritesRunOnlyForTheirKey) {
  Var x = In("x", {2, 3});
  IRModule module = IRModule::FromFunction(MakeFunction({x}, MakeCall("nn.relu", {x})));
  EXPECT_FALSE(HasLayoutRewrites(Target::Parse("llvm -mtriple=aarch64-linux-gnu")));
  // x86 has rewrites (of nn.conv2d and nn.dense), which decline without AVX-512.
  EXPECT_TRUE(HasLayoutRewrites(Target::Parse("llvm -mcpu=haswell")));
  Target keyed = Target::Parse("llvm -mcpu=haswell -keys=test_strategy");
  EXPECT_TRUE(HasLayoutRewrites(keyed));
  EXPECT_EQ(LayoutRewrites("nn.relu", keyed).size(), 1u);
  EXPECT_TRUE(LayoutRewrites("nn.softmax", keyed).empty());
  IRModule same = AlterOpLayout(Target::Parse("llvm -mcpu=haswell")).run(module);
  EXPECT_TRUE(same.main().same_as(module.main()));
  IRModule doubled = AlterOpLayout(keyed).run(module);
  const auto* add = doubled.main()->body.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op->name, "add");
}

// The widest vector lanes of any ramp in the lowered kernels.
int WidestRamp(const std::string& target) {
  Var x = In("x", {4, 64});
  Expr out = MakeCall("exp", {MakeCall("nn.softmax", {x}, {{"axis", int64_t{-1}}})});
  IRModule fused = FuseOps().run(IRModule::FromFunction(MakeFunction({x}, out)));
  LoweredModel lowered = LowerToTIR(fused, Target::Parse(target));
  int widest = 0;
  for (const auto& [name, func] : lowered.tir.functions()) {
    PostOrderVisit(func->body, [&](const ObjectRef& node) {
      if (const auto* ramp = node.as<RampNode>()) widest = std::max(widest, ramp->lanes);
    });
  }
  return widest;
}

TEST(Strategy, GenericSchedulesTakeTheTargetsVectorWidth) {
  EXPECT_EQ(WidestRamp("llvm -mcpu=x86-64-v4"), 16);
  EXPECT_EQ(WidestRamp("llvm -mcpu=x86-64-v3"), 8);
  EXPECT_EQ(WidestRamp("llvm -mcpu=x86-64-v4 -vector-width=128"), 4);
}

TEST(Strategy, DataLayoutNames) {
  EXPECT_EQ(BlockedDataLayout(0), "NCHW");
  EXPECT_EQ(BlockedDataLayout(16), "NCHW16c");
  EXPECT_EQ(DataLayoutBlock("NCHW16c"), 16);
  EXPECT_EQ(DataLayoutBlock("NCHW"), 0);
  EXPECT_EQ(DataLayoutBlock("OIHW"), std::nullopt);
}

}  // namespace
}  // namespace loom::graph
