// The models of the compile tests (built through the graph API, with seeded weights), their
// reference values and a helper that runs a compiled model in the graph executor; shared by
// compile_test.cc and aot_test.cc.
#pragma once

#include "graph_test_util.h"
#include "pass_test_util.h"
#include "loom/graph/compile.h"

namespace loom::graph::test::models {

inline const DataType kF32 = DataType::Float(32);

// Weights in [-0.5, 0.5) keep the activations moderate.
inline Constant Weight(const std::vector<int64_t>& shape, const std::string& name, unsigned seed) {
  return test::RandomConstant(shape, name, seed, -0.5, 0.5);
}

inline Expr Conv(const Expr& x, int64_t in, int64_t out, int64_t kernel, int64_t stride, unsigned seed,
          const std::string& name) {
  int64_t pad = kernel / 2;
  Expr conv = MakeCall("nn.conv2d", {x, Weight({out, in, kernel, kernel}, name + ".w", seed)},
                       {{"padding", Ints{pad, pad, pad, pad}}, {"strides", Ints{stride, stride}}},
                       name);
  return MakeCall("nn.bias_add", {conv, Weight({out}, name + ".b", seed + 1)},
                  {{"axis", int64_t{1}}}, name + "_bias");
}

// Two residual blocks, the second downsampling with a 1x1 shortcut.
inline Function ResidualNet() {
  Var x = MakeVar("data", TensorType({1, 4, 8, 8}, kF32));
  Expr a = MakeCall("nn.relu", {Conv(x, 4, 4, 3, 1, 1, "c1")});
  Expr block1 = MakeCall("nn.relu", {MakeCall("add", {Conv(a, 4, 4, 3, 1, 3, "c2"), x})});
  Expr b = MakeCall("nn.relu", {Conv(block1, 4, 8, 3, 2, 5, "c3")});
  Expr shortcut = Conv(block1, 4, 8, 1, 2, 7, "down");
  Expr block2 = MakeCall("nn.relu", {MakeCall("add", {Conv(b, 8, 8, 3, 1, 9, "c4"), shortcut})});
  return MakeFunction({x}, block2);
}

inline Function Mlp() {
  Var x = MakeVar("features", TensorType({2, 16}, kF32));
  Expr h = MakeCall("nn.dense", {x, Weight({32, 16}, "fc1.w", 11)}, {}, "fc1");
  h = MakeCall("nn.relu", {MakeCall("nn.bias_add", {h, Weight({32}, "fc1.b", 12)})});
  Expr logits = MakeCall("nn.dense", {h, Weight({10, 32}, "fc2.w", 13)}, {}, "fc2");
  return MakeFunction({x}, MakeCall("nn.softmax", {logits}, {{"axis", int64_t{1}}}, "prob"));
}

// conv-relu-pool, conv-relu, global pool, flatten, dense; two outputs (logits and features).
inline Function SmallCnn() {
  Var x = MakeVar("image", TensorType({1, 3, 16, 16}, kF32));
  Expr h = MakeCall("nn.relu", {Conv(x, 3, 8, 3, 1, 21, "conv1")});
  h = MakeCall("nn.max_pool2d", {h}, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}, "pool1");
  h = MakeCall("nn.relu", {Conv(h, 8, 8, 3, 1, 23, "conv2")});
  Expr pooled = MakeCall("nn.global_avg_pool2d", {h}, {}, "gap");
  Expr flat = MakeCall("flatten", {pooled}, {{"axis", int64_t{1}}}, "flat");
  Expr logits = MakeCall("nn.dense", {flat, Weight({5, 8}, "fc.w", 25)}, {}, "fc");
  return MakeFunction({x}, MakeTuple({logits, flat}));
}

// Data movement around a reduction: reshape, transpose, pad, concatenate, mean, broadcast.
inline Function Shuffles() {
  Var x = MakeVar("x", TensorType({2, 3, 4}, kF32));
  Var y = MakeVar("y", TensorType({4, 2, 3}, kF32));
  Expr t = MakeCall("transpose", {MakeCall("exp", {x})}, {{"axes", Ints{2, 0, 1}}});
  Expr joined = MakeCall("concatenate", {t, MakeCall("negative", {y})}, {{"axis", int64_t{0}}});
  Expr padded = MakeCall("nn.pad", {joined}, {{"pad_width", Ints{0, 1, 0, 0, 0, 2}}});
  Expr flat = MakeCall("reshape", {padded}, {{"newshape", Ints{8, 15}}});
  Expr mean = MakeCall("mean", {flat}, {{"axis", Ints{1}}, {"keepdims", int64_t{1}}});
  return MakeFunction({x, y}, MakeCall("subtract", {flat, mean}));
}

// relu, split into two pieces (a kernel with two outputs), exp of one added to the other;
// the second piece is also an output.
inline Function SplitModel() {
  Var x = MakeVar("x", TensorType({4, 6}, kF32));
  Expr pieces = MakeCall("split", {MakeCall("nn.relu", {x})},
                         {{"indices_or_sections", Ints{2}}, {"axis", int64_t{1}}}, "split");
  Expr second = MakeTupleGetItem(pieces, 1);
  Expr sum = MakeCall("add", {MakeCall("exp", {MakeTupleGetItem(pieces, 0)}), second});
  return MakeFunction({x}, MakeTuple({sum, second}));
}

// The values of main's result, every operator call compiled and run alone (the reference).
inline std::vector<runtime::NDArray> Reference(const Function& main,
                                        const std::vector<runtime::NDArray>& inputs) {
  test::Value value = test::Interpret(main, inputs);
  if (!main->checked_type.is_tuple()) return {value.tensor};
  std::vector<runtime::NDArray> fields;
  for (const test::Value& field : value.fields) fields.push_back(field.tensor);
  return fields;
}

inline runtime::NDArray Copy(const runtime::NDArray& array) {
  runtime::NDArray copy = runtime::NDArray::Empty(array.Shape(), array.dtype());
  copy.CopyFrom(array);
  return copy;
}

// `executor` (either kind) run on `inputs`, in its inputs' order: its outputs, copied.
inline std::vector<runtime::NDArray> RunOn(runtime::Executor& executor,
                                           const std::vector<runtime::NDArray>& inputs) {
  for (int i = 0; i < executor.NumInputs(); ++i) executor.SetInput(i, inputs[i]);
  executor.Run();
  std::vector<runtime::NDArray> outputs;
  for (int i = 0; i < executor.NumOutputs(); ++i) outputs.push_back(Copy(executor.GetOutput(i)));
  return outputs;
}

inline std::vector<runtime::NDArray> RunModel(std::shared_ptr<const runtime::GraphModel> model,
                                              const std::vector<runtime::NDArray>& inputs) {
  runtime::GraphExecutor executor(std::move(model));
  return RunOn(executor, inputs);
}

// Compiles `main` at `opt_level` for `target`, runs it on random inputs and compares with
// the reference.
inline CompiledModel ExpectMatchesReference(const Function& main, int opt_level,
                                            const std::string& target = "llvm",
                                            double tolerance = 1e-4) {
  std::vector<runtime::NDArray> inputs;
  for (const Var& param : main->params) {
    inputs.push_back(test::RandomArray(param.type().ConstShape().value(), kF32, 100));
  }
  CompiledModel compiled =
      Compile(IRModule::FromFunction(main), {.opt_level = opt_level, .target = target});
  std::vector<runtime::NDArray> got = RunModel(MakeGraphModel(compiled), inputs);
  std::vector<runtime::NDArray> want = Reference(main, inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    EXPECT_EQ(got[i].Shape(), want[i].Shape());
    test::ExpectClose(got[i], test::Values(want[i]), tolerance,
                      "output " + std::to_string(i) + " at -O" + std::to_string(opt_level));
  }
  return compiled;
}

}  // namespace loom::graph::test::models
