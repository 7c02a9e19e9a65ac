// Compile end to end: models built through the graph API compile at -O0 and -O3, run in the
// graph executor, and agree with every operator call compiled and run alone.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "pass_test_util.h"
#include "loom/graph/compile.h"
#include "loom/graph/functor.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::RandomArray;
using namespace test::models;  // NOLINT: the models and helpers of compile_test_models.h

// conv -> batch_norm -> relu -> add(residual) -> relu: batch_norm becomes a scale and a
// shift (SimplifyInference, FoldConstant), the scale folds into the conv weights
// (FoldScaleAxis), and what is left after the conv fuses into its kernel.
TEST(Compile, ConvBatchNormReluAddBlockIsOneKernel) {
  Var x = MakeVar("data", TensorType({1, 8, 6, 6}, kF32));
  Expr conv = MakeCall("nn.conv2d", {x, Weight({8, 8, 3, 3}, "conv.w", 31)},
                       {{"padding", Ints{1, 1, 1, 1}}}, "conv");
  auto channel = [](const std::string& name, unsigned seed, float offset) {
    runtime::NDArray data = RandomArray({8}, kF32, seed);
    for (int64_t i = 0; i < 8; ++i) test::SetValue(data, i, test::GetFloat(data, i) * 0.2 + offset);
    return MakeConstant(data, name);
  };
  Expr bn = MakeCall("nn.batch_norm",
                     {conv, channel("bn.gamma", 32, 1.0f), channel("bn.beta", 33, 0.0f),
                      channel("bn.mean", 34, 0.0f), channel("bn.var", 35, 1.0f)},
                     {}, "bn");
  Expr block = MakeCall("nn.relu", {MakeCall("add", {MakeCall("nn.relu", {bn}), x}, {}, "res")});
  Function main = MakeFunction({x}, block);
  EXPECT_EQ(ExpectMatchesReference(main, 2).kernel_names,
            (std::vector<std::string>{"fused_nn_conv2d_multiply_add_nn_relu_add_nn_relu"}));
  EXPECT_EQ(ExpectMatchesReference(main, 3).kernel_names,
            (std::vector<std::string>{"fused_layout_transform",
                                      "fused_nn_contrib_conv2d_nchwc_add_nn_relu_add_nn_relu",
                                      "fused_layout_transform_1"}));
}

TEST(Compile, ResidualNetAgreesWithTheOperatorsAtEveryLevel) {
  CompiledModel o0 = ExpectMatchesReference(ResidualNet(), 0);
  CompiledModel o2 = ExpectMatchesReference(ResidualNet(), 2);
  CompiledModel o3 = ExpectMatchesReference(ResidualNet(), 3);
  EXPECT_EQ(o0.kernel_names.size(), 16u);  // one kernel per operator call
  EXPECT_EQ(o2.kernel_names,
            (std::vector<std::string>{"fused_nn_conv2d_nn_bias_add_nn_relu",
                                      "fused_nn_conv2d_nn_bias_add_add_nn_relu",
                                      "fused_nn_conv2d_nn_bias_add_nn_relu_1",
                                      "fused_nn_conv2d_nn_bias_add",
                                      "fused_nn_conv2d_nn_bias_add_add_nn_relu_1"}));
  // -O3: the blocked x86 kernels, the data converted once on the way in and once out.
  EXPECT_EQ(o3.kernel_names,
            (std::vector<std::string>{"fused_layout_transform",
                                      "fused_nn_contrib_conv2d_nchwc_add_nn_relu",
                                      "fused_nn_contrib_conv2d_nchwc_add_add_nn_relu",
                                      "fused_nn_contrib_conv2d_nchwc_add_nn_relu_1",
                                      "fused_nn_contrib_conv2d_nchwc_add",
                                      "fused_nn_contrib_conv2d_nchwc_add_add_nn_relu_1",
                                      "fused_layout_transform_1"}));
}

// The storage slot of the entry named `name` in a graph JSON.
int StorageOf(const std::string& graph_json, const std::string& name) {
  nlohmann::json doc = nlohmann::json::parse(graph_json);
  for (const auto& entry : doc["entries"]) {
    if (entry["name"] == name) return entry["storage"].get<int>();
  }
  ADD_FAILURE() << "no entry " << name;
  return -1;
}

TEST(Compile, MlpAgreesWithTheOperatorsAtO0AndO3) {
  CompiledModel o0 = ExpectMatchesReference(Mlp(), 0);
  // At -O0 bias_add and relu are kernels of their own, each writing over its input.
  EXPECT_EQ(StorageOf(o0.graph_json, "fused_nn_bias_add"), StorageOf(o0.graph_json, "fc1"));
  EXPECT_EQ(StorageOf(o0.graph_json, "fused_nn_relu"), StorageOf(o0.graph_json, "fc1"));
  CompiledModel o3 = ExpectMatchesReference(Mlp(), 3);
  // At -O3 the dense layers take their weights packed into column panels (folded once).
  EXPECT_EQ(o3.kernel_names,
            (std::vector<std::string>{"fused_nn_contrib_dense_packed_nn_bias_add_nn_relu",
                                      "fused_nn_contrib_dense_packed", "fused_nn_softmax"}));
}

TEST(Compile, SmallCnnWithTwoOutputsAgreesWithTheOperators) {
  ExpectMatchesReference(SmallCnn(), 0);
  ExpectMatchesReference(SmallCnn(), 3);
}

TEST(Compile, DataMovementAndReductionsAgreeWithTheOperators) {
  ExpectMatchesReference(Shuffles(), 0);
  CompiledModel o3 = ExpectMatchesReference(Shuffles(), 3);
  EXPECT_EQ(o3.kernel_names,
            (std::vector<std::string>{"fused_exp_transpose_negative_concatenate_nn_pad_reshape",
                                      "fused_mean", "fused_subtract"}));
}

TEST(Compile, KernelWithTwoOutputsFeedsTheGraph) {
  ExpectMatchesReference(SplitModel(), 0);
  CompiledModel o3 = ExpectMatchesReference(SplitModel(), 3);
  EXPECT_EQ(o3.kernel_names,
            (std::vector<std::string>{"fused_nn_relu", "fused_split", "fused_exp_add"}));
  nlohmann::json doc = nlohmann::json::parse(o3.graph_json);
  EXPECT_EQ(doc["kernels"][1]["num_outputs"], 2);
}

// Outputs that are no kernel's result: a constant as written, one FoldConstant makes, and a
// model input. The executor hands outputs out of storage slots, so the constants are copied
// there by a kernel of their own.
TEST(Compile, ConstantAndInputOutputsRun) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Constant c = Weight({4}, "c", 41);
  Function main = MakeFunction(
      {x}, MakeTuple({c, MakeCall("exp", {c}, {}, "exp_c"), x, MakeCall("exp", {x})}));
  ExpectMatchesReference(main, 0);
  CompiledModel o2 = ExpectMatchesReference(main, 2);
  EXPECT_EQ(o2.kernel_names,
            (std::vector<std::string>{"fused_copy", "fused_copy", "fused_exp"}));
}

// One kernel serves subtract(x, c) and subtract(c', x): each call passes its own arguments.
TEST(Compile, SharedKernelTakesEachCallsArgumentsInOrder) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Function main = MakeFunction({x}, MakeTuple({MakeCall("subtract", {x, Weight({4}, "c", 1)}),
                                               MakeCall("subtract", {Weight({4}, "c2", 2), x})}));
  EXPECT_EQ(ExpectMatchesReference(main, 1).kernel_names,
            (std::vector<std::string>{"fused_subtract", "fused_subtract"}));
}

TEST(Compile, GraphJsonFollowsTheArtifactFormat) {
  CompiledModel model = Compile(IRModule::FromFunction(SmallCnn()), {.opt_level = 2});
  nlohmann::json doc = nlohmann::json::parse(model.graph_json);
  EXPECT_EQ(doc["format"], "loom-graph-1");
  EXPECT_EQ(doc["inputs"][0]["name"], "image");
  ASSERT_EQ(doc["outputs"].size(), 2u);
  // Inputs and outputs have slots no other entry uses.
  std::map<int, int> users;
  for (const auto& entry : doc["entries"]) {
    if (entry.contains("storage")) ++users[entry["storage"].get<int>()];
  }
  for (const char* io : {"inputs", "outputs"}) {
    for (const auto& item : doc[io]) {
      int storage = doc["entries"][item["entry"].get<int>()]["storage"].get<int>();
      EXPECT_EQ(users[storage], 1) << io << " " << item["name"];
    }
  }
  // Every weight is a parameter at a 64-byte aligned offset inside the blob.
  EXPECT_EQ(doc["params"].size(), 5u);
  for (const auto& param : doc["params"]) {
    EXPECT_EQ(param["offset"].get<size_t>() % 64, 0u) << param["name"];
    EXPECT_LE(param["offset"].get<size_t>() + param["bytes"].get<size_t>(), model.params.size());
  }
  const auto& first = doc["kernels"][0];
  EXPECT_EQ(first["func"], "fused_nn_conv2d_nn_bias_add_nn_relu");
  EXPECT_EQ(first["nodes"], nlohmann::json::array({"conv1", "conv1_bias", "nn.relu"}));
  EXPECT_EQ(first["num_outputs"], 1);
  EXPECT_EQ(model.memory.num_storages, static_cast<int>(doc["storages"].size()));
  EXPECT_LE(model.memory.planned_bytes, model.memory.lower_bound_bytes * 5 / 4);
}

// `model` (of ResidualNet) exported, loaded back and run computes what it computes in process.
void ExpectExportedRunsLikeInProcess(const CompiledModel& model) {
  std::string path = ::testing::TempDir() + "loom_compile_test_" + std::to_string(getpid()) + ".so";
  ExportModel(model, path);
  std::vector<runtime::NDArray> inputs = {RandomArray({1, 4, 8, 8}, kF32, 5)};
  std::vector<runtime::NDArray> loaded = RunModel(runtime::LoadModel(path), inputs);
  std::vector<runtime::NDArray> in_process = RunModel(MakeGraphModel(model), inputs);
  std::remove(path.c_str());
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(test::Values(loaded[0]), test::Values(in_process[0]));
}

TEST(Compile, ExportedModelLoadsAndRunsLikeTheInProcessOne) {
  ExpectExportedRunsLikeInProcess(Compile(IRModule::FromFunction(ResidualNet()), {.opt_level = 3}));
}

// The c target through the whole compiler: the generic schedules (it has no x86 key, so no
// blocked kernels), each kernel C compiled by the system compiler, and an exported artifact
// that the runtime loads as it loads llvm's.
TEST(Compile, TheCTargetCompilesRunsAndExportsAWholeModel) {
  CompiledModel model = ExpectMatchesReference(ResidualNet(), 3, "c");
  for (const std::string& kernel : model.kernel_names) {
    EXPECT_EQ(kernel.find("nchwc"), std::string::npos) << kernel;
  }
  ExpectMatchesReference(Mlp(), 2, "c");
  ExpectExportedRunsLikeInProcess(model);
}

// The module's output names become the artifact's; each stage reports its time once, in
// pipeline order.
TEST(Compile, NamedOutputsAndStageTimings) {
  IRModule module = IRModule::FromFunction(SmallCnn());
  module.SetOutputNames({"logits", ""});
  std::vector<std::string> stages;
  CompiledModel model = Compile(module, {.opt_level = 1}, [&](const std::string& stage,
                                                              double seconds) {
    EXPECT_GE(seconds, 0.0) << stage;
    stages.push_back(stage);
  });
  EXPECT_EQ(stages,
            (std::vector<std::string>{"graph passes", "lowering", "memory plan", "codegen"}));
  nlohmann::json doc = nlohmann::json::parse(model.graph_json);
  EXPECT_EQ(doc["outputs"][0]["name"], "logits");
  EXPECT_EQ(doc["outputs"][1]["name"], "output1");  // unnamed
  module.SetOutputNames({"logits"});
  EXPECT_NE(ErrorOf([&] { Compile(module, {}); })
                .find("Compile: the module names 1 outputs, but main returns 2"),
            std::string::npos);
}

// Empty tensors flow through kernels that read one another (bound inference of a loop of
// extent 0 reads nothing) and run without touching memory.
TEST(Compile, EmptyTensorsCompileAndRun) {
  Var x = MakeVar("x", TensorType({3, 0}, kF32));
  Expr y = MakeCall("nn.relu", {MakeCall("nn.softmax", {x}, {{"axis", int64_t{1}}})});
  for (int level : {0, 1, 3}) {
    CompiledModel model =
        Compile(IRModule::FromFunction(MakeFunction({x}, y)), {.opt_level = level});
    std::vector<runtime::NDArray> out =
        RunModel(MakeGraphModel(model), {RandomArray({3, 0}, kF32, 1)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].Shape(), (std::vector<int64_t>{3, 0})) << "-O" << level;
  }
}

TEST(Compile, BadOptionsAndModelsAreUserErrors) {
  IRModule module = IRModule::FromFunction(Mlp());
  EXPECT_NE(ErrorOf([&] { Compile(module, {.opt_level = 4}); })
                .find("Compile: opt_level must be 0, 1, 2 or 3, got 4"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Compile(module, {.max_fuse_group = 0}); })
                .find("max_fuse_group must be at least 1, got 0"),
            std::string::npos);
  IRModule no_main;
  no_main.Add("other", Mlp());
  EXPECT_NE(ErrorOf([&] { Compile(no_main, {}); }).find("the module has no function \"main\""),
            std::string::npos);
  // Executors find inputs by name.
  Var a = MakeVar("x", TensorType({4}, kF32));
  Var b = MakeVar("x", TensorType({4}, kF32));
  EXPECT_NE(ErrorOf([&] {
              Compile(IRModule::FromFunction(MakeFunction({a, b}, MakeCall("add", {a, b}))), {});
            }).find("Compile: model inputs 0 and 1 are both named 'x'"),
            std::string::npos);
  loom::Var batch = SizeVar("batch", DataType::Int(64));
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{batch, IntImm(DataType::Int(64), 4)}, kF32));
  EXPECT_NE(ErrorOf([&] { Compile(IRModule::FromFunction(MakeFunction({x}, MakeCall("exp", {x}))), {}); })
                .find("model input 'x' is Tensor[(batch, 4), float32]; every input needs a "
                      "constant shape"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph
