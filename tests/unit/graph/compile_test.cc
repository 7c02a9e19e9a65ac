// Compile end to end: models built through the graph API compile at -O0 and -O3, run in the
// graph executor, and agree with every operator call compiled and run alone.
#include "loom/graph/compile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/functor.h"
#include "loom/runtime/graph_executor.h"
#include "loom/support/stack.h"
#include "loom/target/build.h"
#include "pass_test_util.h"

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

// A weight several products read (a recurrent layer's steps, tied weights) is stored once,
// re-laid-out once, however many products read it.
TEST(Compile, AWeightReadByManyProductsIsStoredOnce) {
  Var x = MakeVar("x", TensorType({1, 64}, kF32));
  Constant w = Weight({64, 64}, "w", 51);
  Expr h = x;
  for (int step = 0; step < 6; ++step) h = MakeCall("tanh", {MakeCall("nn.dense", {h, w})});
  Function main = MakeFunction({x}, h);
  int64_t weight_bytes = 64 * 64 * 4;
  for (int level : {0, 3}) {
    CompiledModel model = ExpectMatchesReference(main, level);
    EXPECT_GE(static_cast<int64_t>(model.params.size()), weight_bytes) << "-O" << level;
    EXPECT_LT(static_cast<int64_t>(model.params.size()), 2 * weight_bytes) << "-O" << level;
  }
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

// A byte changed anywhere in the file (a corrupt copy) is refused before the library is
// loaded, by the digest ExportModel recorded, instead of crashing or computing other outputs.
TEST(Compile, ACorruptedArtifactIsRefusedAtLoad) {
  CompiledModel model = Compile(IRModule::FromFunction(ResidualNet()), {.opt_level = 3});
  const std::string path =
      ::testing::TempDir() + "loom_corrupt_test_" + std::to_string(getpid()) + ".so";
  ExportModel(model, path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The weights are in the file as they are in memory: find them, and the graph's text.
  const size_t weights = bytes.find(std::string(reinterpret_cast<const char*>(model.params.data()),
                                                std::min<size_t>(64, model.params.size())));
  const size_t graph = bytes.find(model.graph_json.substr(0, 64));
  ASSERT_NE(weights, std::string::npos);
  ASSERT_NE(graph, std::string::npos);
  // Weights, graph, the middle of the file (code), the ELF tables near its start: each is
  // refused before the library is loaded.
  for (size_t at : {weights + 17, graph + model.graph_json.find("\"shape\"") + 9, bytes.size() / 2,
                    size_t{0x300}}) {
    std::string corrupt = bytes;
    corrupt[at] ^= 0x04;
    const std::string copy = path + "." + std::to_string(at) + ".so";
    std::ofstream(copy, std::ios::binary) << corrupt;
    for (const std::string& message : {ErrorOf([&] { runtime::LoadModel(copy); }),
                                       ErrorOf([&] { runtime::DescribeModel(copy); })}) {
      EXPECT_TRUE(message.find("differs from what was exported") != std::string::npos ||
                  message.find("corrupt") != std::string::npos)
          << "byte " << at << ": " << message;
    }
    std::remove(copy.c_str());
  }
  EXPECT_NO_THROW(runtime::LoadModel(path));
  std::remove(path.c_str());
}

// DescribeModel reads an artifact from the file alone: the same graph as LoadModel's, no
// kernels to run (an executor refuses it), and the digest checked as at load.
TEST(Compile, AnArtifactIsDescribedWithoutLoadingIt) {
  CompiledModel model = Compile(IRModule::FromFunction(ResidualNet()), {.opt_level = 3});
  const std::string path =
      ::testing::TempDir() + "loom_describe_test_" + std::to_string(getpid()) + ".so";
  ExportModel(model, path);
  std::shared_ptr<const runtime::GraphModel> described = runtime::DescribeModel(path);
  std::shared_ptr<const runtime::GraphModel> loaded = runtime::LoadModel(path);
  EXPECT_FALSE(described->module().defined());
  EXPECT_EQ(described->target(), loaded->target());
  ASSERT_EQ(described->kernels().size(), loaded->kernels().size());
  for (size_t k = 0; k < described->kernels().size(); ++k) {
    EXPECT_EQ(described->kernels()[k].func, loaded->kernels()[k].func);
  }
  EXPECT_EQ(described->inputs().size(), loaded->inputs().size());
  EXPECT_EQ(described->storages(), loaded->storages());
  EXPECT_NE(ErrorOf([&] {
              runtime::GraphExecutor executor(described);
            }).find("described from its file (DescribeModel), not loaded"),
            std::string::npos);
  // A library of kernels alone is no model.
  const std::string kernels = path + ".kernels.so";
  ExportLibrary(model.kernels, kernels);
  EXPECT_NE(
      ErrorOf([&] { runtime::DescribeModel(kernels); }).find("has no symbol 'loom_graph_json'"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] { runtime::DescribeModel("/dev/null"); }).find("DescribeModel"),
            std::string::npos);
  std::remove(kernels.c_str());
  std::remove(path.c_str());
}

// A device target runs no layer on the host unless its kind says so (VTA's does, reporting
// each placement): a layer it has no schedule for is a compile error naming the operator,
// not a silent fallback to the CPU.
TEST(Compile, ALayerADeviceTargetCannotScheduleIsAnError) {
  // A 0-d tensor that is not a reduction has no loop for the GPU schedules' threads.
  Var x = MakeVar("x", TensorType({}, kF32));
  CompileOptions options;
  options.target = "opencl";
  const std::string message = ErrorOf([&] {
    Compile(IRModule::FromFunction(MakeFunction({x}, MakeCall("nn.relu", {x}, {}, "relu"))),
            options);
  });
  EXPECT_NE(message.find("the opencl target has no schedule for operator nn.relu"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(strategy keys opencl, gpu), and it runs no layer on the host"),
            std::string::npos)
      << message;
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
  // The graph executor needs constant shapes (the VM, which "auto" picks, does not).
  EXPECT_NE(ErrorOf([&] {
              Compile(IRModule::FromFunction(MakeFunction({x}, MakeCall("exp", {x}))),
                      {.executor = "graph"});
            })
                .find("model input 'x' is Tensor[(batch, 4), float32]; the graph executor needs "
                      "constant shapes"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Compile(IRModule::FromFunction(MakeFunction({x}, MakeCall("exp", {x}))),
                      {.executor = "jit"});
            }).find("executor must be \"auto\", \"graph\" or \"vm\", got \"jit\""),
            std::string::npos);
}

// More memory than the limit (by default this machine's) is a compile error with the figures:
// any one tensor before lowering, the memory plan after.
TEST(Compile, MemoryBeyondTheLimitIsAnError) {
  Var huge = MakeVar("x", TensorType({int64_t{1} << 20, int64_t{1} << 20}, kF32));
  const std::string message = ErrorOf(
      [&] { Compile(IRModule::FromFunction(MakeFunction({huge}, MakeCall("exp", {huge}))), {}); });
  EXPECT_NE(message.find("the tensor 'x' (Tensor[(1048576, 1048576), float32]) needs 4096.0 GiB, "
                         "more than this machine's memory"),
            std::string::npos)
      << message;
  IRModule mlp = IRModule::FromFunction(Mlp());
  EXPECT_NE(ErrorOf([&] {
              Compile(mlp, {.memory_limit_bytes = 100});
            }).find("more than the memory limit of 100 B"),
            std::string::npos);
  EXPECT_NO_THROW(Compile(mlp, {.memory_limit_bytes = int64_t{1} << 20}));
  EXPECT_NE(ErrorOf([&] {
              Compile(mlp, {.memory_limit_bytes = -1});
            }).find("memory_limit_bytes must not be negative"),
            std::string::npos);
}

// A chain of 100,000 operators: on a thread with the tool's stack it compiles and runs; on
// an ordinary 8 MiB stack the graph walk stops with an error instead of overflowing.
TEST(Compile, DeepChainsCompileWithALargeStackAndFailCleanlyWithout) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Expr chain = x;
  for (int i = 0; i < 100000; ++i) chain = MakeCall(i % 2 == 0 ? "nn.relu" : "negative", {chain});
  const IRModule deep = IRModule::FromFunction(MakeFunction({x}, chain));
  std::string message;
  RunWithStack(size_t{8} << 20, [&] { message = ErrorOf([&] { Compile(deep, {}); }); });
  EXPECT_NE(message.find("the graph is too deep for this thread's stack"), std::string::npos)
      << message;
  RunWithStack(kCompilerStackBytes, [&] {
    runtime::GraphExecutor executor(MakeGraphModel(Compile(deep, {})));
    runtime::NDArray in = runtime::NDArray::Empty({4}, kF32);
    const float values[4] = {-2, -1, 1, 2};
    std::memcpy(in.data(), values, sizeof(values));
    executor.SetInput(0, in);
    executor.Run();
    // relu then negate, 50,000 times: every value ends as -relu(x) after the first pair, then
    // relu(-relu(x)) = 0.
    const auto* out = static_cast<const float*>(executor.GetOutput(0).data());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 0.0f) << i;
  });
}

}  // namespace
}  // namespace loom::graph
