// LowerToTIR: fused groups become kernels that compute what their operators compute one by
// one; identical groups share one kernel.
#include <gtest/gtest.h>

#include "graph_test_util.h"
#include "loom/graph/functor.h"
#include "loom/graph/lower.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::RandomArray;
using test::RandomConstant;
using test::RunCall;
const DataType kF32 = DataType::Float(32);


// conv -> bias -> relu -> conv -> bias -> add(x) -> relu, weights from `seed`.
Expr ResidualBlock(const Expr& x, unsigned seed) {
  Attrs conv = {{"padding", Ints{1, 1, 1, 1}}};
  Attrs axis = {{"axis", int64_t{1}}};
  Expr c1 = MakeCall("nn.conv2d", {x, RandomConstant({4, 4, 3, 3}, "w1", seed)}, conv);
  Expr r1 = MakeCall("nn.relu",
                     {MakeCall("nn.bias_add", {c1, RandomConstant({4}, "b1", seed + 1)}, axis)});
  Expr c2 = MakeCall("nn.conv2d", {r1, RandomConstant({4, 4, 3, 3}, "w2", seed + 2)}, conv);
  Expr b2 = MakeCall("nn.bias_add", {c2, RandomConstant({4}, "b2", seed + 3)}, axis);
  return MakeCall("nn.relu", {MakeCall("add", {b2, x})});
}

// Runs kernel `name` of `module` on inputs then outputs (NDArrays), in place.
void RunKernel(const runtime::Module& module, const std::string& name,
               const std::vector<runtime::NDArray>& args) {
  module.GetRequiredFunction(name).CallWithArrays(args);
}

TEST(LowerToTIR, IdenticalResidualBlocksCompileOnce) {
  Var x = MakeVar("x", TensorType({1, 4, 6, 6}, kF32));
  Expr out = ResidualBlock(ResidualBlock(x, 10), 20);
  IRModule fused = FuseOps().run(IRModule::FromFunction(MakeFunction({x}, out)));
  LoweredModel lowered = LowerToTIR(fused, Target::Parse("llvm"));
  std::vector<std::string> kernels;
  for (const CallNode* call : CallsInOrder(fused.main()))
    kernels.push_back(lowered.KernelName(*call));
  EXPECT_EQ(kernels, (std::vector<std::string>{
                         "fused_nn_conv2d_nn_bias_add_nn_relu",
                         "fused_nn_conv2d_nn_bias_add_add_nn_relu",
                         "fused_nn_conv2d_nn_bias_add_nn_relu",
                         "fused_nn_conv2d_nn_bias_add_add_nn_relu",
                     }));
  EXPECT_EQ(lowered.tir.size(), 2u);
}

TEST(LowerToTIR, SameOperatorsOnOtherShapesGetTheirOwnKernel) {
  Var x = MakeVar("x", TensorType({8}, kF32));
  Expr small = MakeCall("strided_slice", {x}, {{"begin", Ints{0}}, {"end", Ints{4}}});
  Expr out = MakeTuple({MakeCall("exp", {x}), MakeCall("exp", {MakeCall("nn.relu", {small})})});
  IRModule fused = FuseOps(1).run(IRModule::FromFunction(MakeFunction({x}, out)));
  LoweredModel lowered = LowerToTIR(fused, Target::Parse("llvm"));
  std::vector<std::string> names;
  for (const auto& [name, func] : lowered.tir.functions()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"fused_exp", "fused_exp_1", "fused_nn_relu",
                                             "fused_strided_slice"}));
}

TEST(LowerToTIR, FusedKernelMatchesTheOperatorsRunOneByOne) {
  Var x = MakeVar("x", TensorType({1, 4, 6, 6}, kF32));
  IRModule fused = FuseOps().run(IRModule::FromFunction(MakeFunction({x}, ResidualBlock(x, 1))));
  Target target = Target::Parse("llvm");
  LoweredModel lowered = LowerToTIR(fused, target);
  runtime::Module module = build(lowered.tir, target);

  runtime::NDArray input = RandomArray({1, 4, 6, 6}, kF32, 99);
  // Through the two kernels, as main calls them.
  std::unordered_map<const Object*, runtime::NDArray> value = {{x.get(), input}};
  for (const CallNode* call : CallsInOrder(fused.main())) {
    std::vector<runtime::NDArray> args;
    for (const Expr& arg : call->args) {
      const auto* constant = arg.as<ConstantNode>();
      args.push_back(constant ? constant->data : value.at(arg.get()));
    }
    runtime::NDArray out = runtime::NDArray::Empty(call->checked_type.ConstShape().value(), kF32);
    args.push_back(out);
    RunKernel(module, lowered.KernelName(*call), args);
    value[call] = out;
  }
  runtime::NDArray got = value.at(fused.main()->body.get());

  // The reference: every operator call of the unfused block compiled and run alone.
  Expr block = ResidualBlock(x, 1);
  std::unordered_map<const Object*, runtime::NDArray> reference = {{x.get(), input}};
  PostOrderVisit(block, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call == nullptr) return;
    std::vector<runtime::NDArray> inputs;
    for (const Expr& arg : call->args) {
      const auto* constant = arg.as<ConstantNode>();
      inputs.push_back(constant ? constant->data : reference.at(arg.get()));
    }
    reference[call] = RunCall(Downcast<Call>(e), inputs);
  });
  test::ExpectClose(got, test::Values(reference.at(block.get())), 1e-5, "residual block");
}

TEST(LowerToTIR, GroupWithTwoResultsWritesBoth) {
  // A hand-built group returning a tuple: relu(x) and exp(relu(x)).
  Var p = MakeVar("p0", TensorType({2, 8}, kF32));
  Expr relu = MakeCall("nn.relu", {p});
  Function group = MakeFunction({p}, MakeTuple({relu, MakeCall("exp", {relu})}),
                                {{"Primitive", int64_t{1}}, {"name", std::string("two")}});
  Var x = MakeVar("x", TensorType({2, 8}, kF32));
  Call call = MakeCall(group, {x});
  Function main = MakeFunction({x}, MakeTuple({MakeTupleGetItem(call, 0), MakeTupleGetItem(call, 1)}));
  Target target = Target::Parse("llvm");
  LoweredModel lowered = LowerToTIR(IRModule::FromFunction(main), target);
  ASSERT_EQ(lowered.KernelName(*call.get()), "two");
  runtime::Module module = build(lowered.tir, target);
  runtime::NDArray input = RandomArray({2, 8}, kF32, 3);
  runtime::NDArray first = runtime::NDArray::Empty({2, 8}, kF32);
  runtime::NDArray second = runtime::NDArray::Empty({2, 8}, kF32);
  RunKernel(module, "two", {input, first, second});
  std::vector<double> relu_want, exp_want;
  for (double v : test::Values(input)) {
    relu_want.push_back(std::max(v, 0.0));
    exp_want.push_back(std::exp(std::max(v, 0.0)));
  }
  test::ExpectClose(first, relu_want, 1e-6, "relu");
  test::ExpectClose(second, exp_want, 1e-5, "exp");
}

TEST(LowerToTIR, StructuralKeyIgnoresNamesButNotAttributesOrTypes) {
  auto group = [](const std::string& param, std::vector<int64_t> shape, double alpha) {
    Var p = MakeVar(param, TensorType(shape, kF32));
    Expr body = MakeCall("nn.leaky_relu", {p}, {{"alpha", alpha}}, "named_" + param);
    return MakeFunction({p}, body, {{"Primitive", int64_t{1}}});
  };
  std::string key = StructuralKey(group("a", {4}, 0.1));
  EXPECT_EQ(key, StructuralKey(group("b", {4}, 0.1)));
  EXPECT_NE(key, StructuralKey(group("a", {5}, 0.1)));
  EXPECT_NE(key, StructuralKey(group("a", {4}, 0.1 + 1e-12)));
}

TEST(LowerToTIR, GroupsWiredAlikeShareAKernelWhereverTheirConstantsSit) {
  // subtract(x, c), subtract(c', x) and subtract(c'', y) are each subtract(p0, p1) of their
  // own arguments: one kernel. subtract(x, x) reads one parameter twice: another.
  Var x = MakeVar("x", TensorType({4}, kF32));
  Var y = MakeVar("y", TensorType({4}, kF32));
  Function main = MakeFunction(
      {x, y}, MakeTuple({MakeCall("subtract", {x, RandomConstant({4}, "c", 1)}),
                         MakeCall("subtract", {RandomConstant({4}, "c2", 2), x}),
                         MakeCall("subtract", {RandomConstant({4}, "c3", 3), y}),
                         MakeCall("subtract", {x, x})}));
  IRModule fused = FuseOps().run(IRModule::FromFunction(main));
  LoweredModel lowered = LowerToTIR(fused, Target::Parse("llvm"));
  std::vector<std::string> kernels;
  for (const CallNode* call : CallsInOrder(fused.main())) {
    kernels.push_back(lowered.KernelName(*call));
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"fused_subtract", "fused_subtract", "fused_subtract",
                                               "fused_subtract_1"}));
}

TEST(LowerToTIR, UnfusedCallsAreAUserError) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Function main = MakeFunction({x}, MakeCall("exp", {x}, {}, "e1"));
  EXPECT_NE(ErrorOf([&] { LowerToTIR(IRModule::FromFunction(main), Target::Parse("llvm")); })
                .find("exp 'e1' is an operator call outside a fused group: run FuseOps before "
                      "lowering"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph
