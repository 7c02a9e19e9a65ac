// The virtual machine end to end: models whose input has a size variable (a sequence length
// n) compiled once, kernels with symbolic extents, run at many lengths against every
// operator evaluated alone at that length; static models run by the VM and by the graph
// executor alike; the inputs the signature refuses; the pool; the artifact.
#include "loom/runtime/vm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/compile.h"
#include "loom/graph/transform.h"
#include "loom/runtime/c_runtime_api.h"
#include "pass_test_util.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::RandomArray;
using test::RandomConstant;
using test::Values;
using test::models::RunOn;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

PrimExpr Dim(int64_t value) { return IntImm(kI64, value); }

// One encoder attention block's operators over x [1, n, 64]: projections, heads split by
// reshape and transpose, scores, softmax, context, residual, layer norm.
Expr Attention(Expr x) {
  auto project = [&](const std::string& name, unsigned seed) {
    Expr y = MakeCall("nn.dense", {x, RandomConstant({64, 64}, name + ".w", seed, -0.2, 0.2)});
    return MakeCall("add", {y, RandomConstant({64}, name + ".b", seed + 1)});
  };
  auto heads = [](Expr y) {  // [1, n, 64] -> [1, 4, n, 16]
    y = MakeCall("reshape", {y}, {{"newshape", Ints{0, 0, 4, 16}}});
    return MakeCall("transpose", {y}, {{"axes", Ints{0, 2, 1, 3}}});
  };
  Expr q = heads(project("q", 1)), k = heads(project("k", 3)), v = heads(project("v", 5));
  Expr scores =
      MakeCall("nn.matmul", {q, MakeCall("transpose", {k}, {{"axes", Ints{0, 1, 3, 2}}})});
  scores = MakeCall("multiply", {scores, MakeConstant(test::ArrayOf({}, kF32, {0.25}))});
  Expr probs = MakeCall("nn.softmax", {scores}, {{"axis", int64_t{-1}}});
  Expr context = MakeCall("nn.matmul", {probs, v});
  context = MakeCall("transpose", {context}, {{"axes", Ints{0, 2, 1, 3}}});
  context = MakeCall("reshape", {context}, {{"newshape", Ints{0, 0, -1}}});
  Expr out = MakeCall("add", {x, MakeCall("erf", {context})});
  return MakeCall("nn.layer_norm",
                  {out, RandomConstant({64}, "g", 7), RandomConstant({64}, "b", 8)});
}

// `body` over x of `shape`.
Function Model(const std::function<Expr(Expr)>& body, std::vector<PrimExpr> shape) {
  Var x = MakeVar("x", TensorType(std::move(shape), kF32));
  return MakeFunction({x}, body(x));
}

// `body` over [1, n, 64] compiled once at `opt_level` and run at n = 1, 7, 32, then 7
// again, against the operators evaluated alone at each n.
void ExpectRunsAtEveryLength(const std::function<Expr(Expr)>& body, int opt_level) {
  loom::Var n = SizeVar("n", kI64);
  Function main = Model(body, {Dim(1), n, Dim(64)});
  CompiledModel compiled = Compile(IRModule::FromFunction(main), {.opt_level = opt_level});
  EXPECT_EQ(compiled.executor, "vm");
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  EXPECT_EQ(vm->InputSignature(0), "(1, n, 64)");
  EXPECT_EQ(vm->InputShape(0), (std::vector<int64_t>{1, -1, 64}));
  for (int64_t length : {1, 7, 32, 7}) {
    runtime::NDArray input = RandomArray({1, length, 64}, kF32, static_cast<unsigned>(length));
    runtime::NDArray got = RunOn(*vm, {input}).at(0);
    runtime::NDArray want = test::Interpret(main, {input}).tensor;
    EXPECT_EQ(got.Shape(), want.Shape()) << "n = " << length;
    test::ExpectClose(got, Values(want), 1e-4,
                      "-O" + std::to_string(opt_level) + ", n = " + std::to_string(length));
  }
}

TEST(VirtualMachine, AnAttentionBlockCompiledOnceRunsAtEveryLength) {
  ExpectRunsAtEveryLength(Attention, 0);
  ExpectRunsAtEveryLength(Attention, 3);
}

TEST(VirtualMachine, ReshapeInfersSymbolicSizesOrSaysWhyNot) {
  ExpectRunsAtEveryLength(
      [](Expr x) {
        return MakeCall("reshape", {x}, {{"newshape", Ints{-1, 32}}});
      },
      1);
  loom::Var n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n, Dim(6)}, kF32));
  EXPECT_NE(ErrorOf([&] {
              MakeCall("reshape", {x}, {{"newshape", Ints{-1, 4}}}, "r");
            })
                .find("cannot infer the -1 of (-1, 4) at compile time: the element count of "
                      "(n, 6) is not shown to be a multiple of the other entries' product"),
            std::string::npos);
  // Copied dimensions cancel out of the element count: (n, 2, 2, 16) to (0, 0, -1).
  Var y = MakeVar("y", TensorType(std::vector<PrimExpr>{n, Dim(2), Dim(2), Dim(16)}, kF32));
  EXPECT_EQ(MakeCall("reshape", {y}, {{"newshape", Ints{0, 0, -1}}}).type().str(),
            "Tensor[(n, 2, 32), float32]");
  EXPECT_EQ(MakeCall("reshape", {y}, {{"newshape", Ints{2, 0, -1}}}).type().str(),
            "Tensor[(2, 2, n * T.int64(16)), float32]");
  EXPECT_NE(ErrorOf([&] {
              MakeCall("reshape", {x}, {{"newshape", Ints{3, 4}}}, "r");
            })
                .find("target shape (3, 4) has an element count not shown to equal that of "
                      "(n, 6)"),
            std::string::npos);
}

// A static model run by the VM gives what the graph executor gives, bit for bit (the same
// kernels on the same inputs).
TEST(VirtualMachine, StaticModelsRunAsOnTheGraphExecutor) {
  using namespace test::models;  // NOLINT: the compile tests' models
  for (const Function& main : {ResidualNet(), Mlp(), SmallCnn(), Shuffles(), SplitModel()}) {
    for (int level : {0, 3}) {
      std::vector<runtime::NDArray> inputs;
      for (const Var& param : main->params) {
        inputs.push_back(RandomArray(param.type().ConstShape().value(), kF32, 5));
      }
      IRModule module = IRModule::FromFunction(main);
      CompiledModel graph = Compile(module, {.opt_level = level});
      CompiledModel vm = Compile(module, {.opt_level = level, .executor = "vm"});
      EXPECT_EQ(graph.executor, "graph");
      EXPECT_EQ(vm.executor, "vm");
      std::vector<runtime::NDArray> want = RunOn(*MakeExecutor(graph), inputs);
      std::vector<runtime::NDArray> got = RunOn(*MakeExecutor(vm), inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].Shape(), want[i].Shape());
        EXPECT_EQ(Values(got[i]), Values(want[i])) << "output " << i << " at -O" << level;
      }
    }
  }
}

// x [b, n, 8] and mask [b, n]: two inputs sharing both size variables.
CompiledModel TwoInputModel(int64_t memory_limit = 0) {
  loom::Var b = SizeVar("b", kI64), n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{b, n, Dim(8)}, kF32));
  Var mask = MakeVar("mask", TensorType(std::vector<PrimExpr>{b, n}, kF32));
  Expr y = MakeCall("multiply", {x, MakeCall("expand_dims", {mask}, {{"axis", int64_t{2}}})});
  return Compile(IRModule::FromFunction(MakeFunction({x, mask}, MakeCall("exp", {y}))),
                 {.memory_limit_bytes = memory_limit});
}

TEST(VirtualMachine, InputsOutsideTheSignatureAreRefusedBeforeAnythingRuns) {
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(TwoInputModel());
  EXPECT_EQ(vm->InputSignature(1), "(b, n)");
  EXPECT_EQ(ErrorOf([&] {
              vm->SetInput("x", RandomArray({2, 3}, kF32, 1));
            }),
            "VirtualMachine: input 'x' must be float32(b, n, 8), got float32[2, 3]");
  EXPECT_EQ(ErrorOf([&] {
              vm->SetInput("x", RandomArray({2, 3, 9}, kF32, 1));
            }),
            "VirtualMachine: input 'x' must be float32(b, n, 8), got float32[2, 3, 9]");
  EXPECT_EQ(ErrorOf([&] {
              vm->SetInput("y", RandomArray({2, 3}, kF32, 1));
            }),
            "VirtualMachine: the model has no input 'y'; its inputs are 'x', 'mask'");
  EXPECT_EQ(ErrorOf([&] { vm->Run(); }),
            "VirtualMachine: input 'x' is not set; set every input before Run");
  vm->SetInput("x", RandomArray({2, 3, 8}, kF32, 1));
  vm->SetInput("mask", RandomArray({2, 4}, kF32, 2));
  EXPECT_EQ(ErrorOf([&] { vm->Run(); }),
            "VirtualMachine: dimension 1 of input 'mask' gives n = 4, but dimension 1 of input "
            "'x' gave n = 3; inputs sharing a size variable must agree");
  vm->SetInput("x", RandomArray({2, 0, 8}, kF32, 1));
  EXPECT_EQ(ErrorOf([&] { vm->Run(); }),
            "VirtualMachine: dimension 1 of input 'x' is n = 0; a size variable is at least 1");
  // Sizes past the compile's memory limit are refused, not allocated.
  std::unique_ptr<runtime::Executor> small = MakeExecutor(TwoInputModel(4096));
  small->SetInput("x", RandomArray({2, 100, 8}, kF32, 1));
  small->SetInput("mask", RandomArray({2, 100}, kF32, 2));
  std::string error = ErrorOf([&] { small->Run(); });
  EXPECT_NE(error.find("needs 6400 bytes, more than the 4096 one allocation may take"),
            std::string::npos)
      << error;
}

TEST(VirtualMachine, ThePoolKeepsBuffersForTheNextRun) {
  std::unique_ptr<runtime::Executor> executor = MakeExecutor(TwoInputModel());
  auto& vm = dynamic_cast<runtime::VirtualMachine&>(*executor);
  auto run = [&](int64_t n) {
    vm.SetInput("x", RandomArray({2, n, 8}, kF32, 1));
    vm.SetInput("mask", RandomArray({2, n}, kF32, 2));
    vm.Run();
  };
  run(5);
  const size_t at_five = vm.PoolBytes();
  EXPECT_GT(at_five, 0u);
  run(5);
  EXPECT_EQ(vm.PoolBytes(), at_five);  // the same buffers again
  run(9);
  EXPECT_EQ(vm.SizeValues(), (std::map<std::string, int64_t>{{"b", 2}, {"n", 9}}));
  const size_t both = vm.PoolBytes();
  EXPECT_GT(both, at_five);
  // Buffers no run has taken for four runs go back to the system.
  for (int k = 0; k < 6; ++k) run(9);
  EXPECT_EQ(vm.PoolBytes(), both - at_five);
}

TEST(VirtualMachine, TheArtifactRecordsItsExecutor) {
  CompiledModel compiled = TwoInputModel();
  std::string path = ::testing::TempDir() + "loom_vm_test_" + std::to_string(getpid()) + ".so";
  ExportModel(compiled, path);
  std::unique_ptr<runtime::Executor> loaded = runtime::LoadExecutor(path);
  EXPECT_STREQ(loaded->kind(), "vm");
  std::vector<runtime::NDArray> inputs = {RandomArray({3, 4, 8}, kF32, 1),
                                          RandomArray({3, 4}, kF32, 2)};
  EXPECT_EQ(Values(RunOn(*loaded, inputs).at(0)),
            Values(RunOn(*MakeExecutor(compiled), inputs).at(0)));
  EXPECT_NE(ErrorOf([&] { runtime::LoadModel(path); })
                .find("the model runs on the virtual machine (its shapes are computed at run "
                      "time); load it with LoadExecutor or LoadVmModel"),
            std::string::npos);
  std::shared_ptr<const runtime::VmModel> described = runtime::DescribeVmModel(path);
  EXPECT_EQ(described->size_vars(), (std::vector<std::string>{"b", "n"}));
  // The outputs' dtype and sizes, for people (loom inspect).
  const runtime::VmIO& output = described->outputs().at(0);
  EXPECT_EQ(output.dtype, kF32);
  ASSERT_EQ(output.shape.size(), 3u);
  EXPECT_EQ(output.shape[1].str(described->size_vars()), "n");
  EXPECT_EQ(output.shape[2].str(described->size_vars()), "8");
  std::remove(path.c_str());
}

// Executors of one LoadedModel share its kernels and weights but not their memory: threads
// each running their own get what one executor alone computes, for both executors.
TEST(VirtualMachine, ExecutorsOfOneLoadedModelRunOnThreadsAtOnce) {
  CompiledModel compiled = TwoInputModel();
  std::string path = ::testing::TempDir() + "loom_vm_shared_" + std::to_string(getpid()) + ".so";
  ExportModel(compiled, path);
  const runtime::LoadedModel loaded = runtime::LoadedModel::Load(path);
  EXPECT_STREQ(loaded.kind(), "vm");
  std::vector<std::vector<runtime::NDArray>> inputs;
  std::vector<std::vector<double>> want;
  for (int t = 0; t < 4; ++t) {
    inputs.push_back(
        {RandomArray({t + 1, 4, 8}, kF32, 10 + t), RandomArray({t + 1, 4}, kF32, 20 + t)});
    want.push_back(Values(RunOn(*MakeExecutor(compiled), inputs.back()).at(0)));
  }
  std::vector<std::vector<double>> got(inputs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < inputs.size(); ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<runtime::Executor> own = loaded.NewExecutor();
      for (int repeat = 0; repeat < 20; ++repeat) got[t] = Values(RunOn(*own, inputs[t]).at(0));
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(got, want);
  std::remove(path.c_str());

  // The graph executor's model alike; TimeRuns times each run.
  Var fx = MakeVar("x", TensorType(std::vector<PrimExpr>{Dim(3), Dim(4), Dim(8)}, kF32));
  Var fmask = MakeVar("mask", TensorType(std::vector<PrimExpr>{Dim(3), Dim(4)}, kF32));
  Expr fy = MakeCall("multiply", {fx, MakeCall("expand_dims", {fmask}, {{"axis", int64_t{2}}})});
  CompiledModel fixed =
      Compile(IRModule::FromFunction(MakeFunction({fx, fmask}, MakeCall("exp", {fy}))), {});
  runtime::LoadedModel graph = MakeLoadedModel(fixed);
  EXPECT_STREQ(graph.kind(), "graph");
  std::unique_ptr<runtime::Executor> a = graph.NewExecutor(), b = graph.NewExecutor();
  std::vector<runtime::NDArray> x = {RandomArray({3, 4, 8}, kF32, 1), RandomArray({3, 4}, kF32, 2)};
  std::vector<runtime::NDArray> y = {RandomArray({3, 4, 8}, kF32, 3), RandomArray({3, 4}, kF32, 4)};
  std::vector<double> from_a = Values(RunOn(*a, x).at(0));
  RunOn(*b, y);  // b's run leaves a's output alone
  EXPECT_EQ(Values(a->GetOutput(0)), from_a);
  EXPECT_EQ(runtime::TimeRuns(*a, 1, 3).size(), 3u);
}

// The C API runs the VM's artifact as it runs the graph executor's: -1 for the symbolic
// input dimensions, the outputs' shapes once it has run.
TEST(VirtualMachine, TheCApiRunsIt) {
  CompiledModel compiled = TwoInputModel();
  std::string path = ::testing::TempDir() + "loom_vm_c_api_" + std::to_string(getpid()) + ".so";
  ExportModel(compiled, path);
  LoomModelHandle model = nullptr;
  ASSERT_EQ(LoomModelLoad(path.c_str(), &model), 0) << LoomGetLastError();
  LoomExecutorHandle exec = nullptr;
  ASSERT_EQ(LoomExecutorCreate(model, &exec), 0) << LoomGetLastError();
  int32_t ndim = 0;
  const int64_t* shape = nullptr;
  DLDataType dtype;
  ASSERT_EQ(LoomExecutorInputInfo(exec, 0, &ndim, &shape, &dtype), 0);
  EXPECT_EQ(std::vector<int64_t>(shape, shape + ndim), (std::vector<int64_t>{-1, -1, 8}));
  EXPECT_EQ(LoomExecutorOutputInfo(exec, 0, &ndim, &shape, &dtype), -1);
  EXPECT_NE(std::string(LoomGetLastError()).find("call LoomExecutorRun first"), std::string::npos);
  std::vector<runtime::NDArray> inputs = {RandomArray({2, 5, 8}, kF32, 1),
                                          RandomArray({2, 5}, kF32, 2)};
  ASSERT_EQ(LoomExecutorSetInput(exec, "x", inputs[0].tensor()), 0) << LoomGetLastError();
  ASSERT_EQ(LoomExecutorSetInput(exec, "mask", inputs[1].tensor()), 0) << LoomGetLastError();
  ASSERT_EQ(LoomExecutorRun(exec), 0) << LoomGetLastError();
  ASSERT_EQ(LoomExecutorOutputInfo(exec, 0, &ndim, &shape, &dtype), 0) << LoomGetLastError();
  EXPECT_EQ(std::vector<int64_t>(shape, shape + ndim), (std::vector<int64_t>{2, 5, 8}));
  runtime::NDArray got = runtime::NDArray::Empty({2, 5, 8}, kF32);
  ASSERT_EQ(LoomExecutorGetOutput(exec, 0, got.tensor()), 0) << LoomGetLastError();
  EXPECT_EQ(Values(got), Values(RunOn(*MakeExecutor(compiled), inputs).at(0)));
  LoomExecutorFree(exec);
  LoomModelFree(model);
  std::remove(path.c_str());
}

// A size expression that comes out negative at the inputs' sizes stops the run at that
// allocation, before any kernel sees it.
TEST(VirtualMachine, ANegativeSizeAtRunTimeIsAnError) {
  CompiledModel compiled = TwoInputModel();
  nlohmann::json program = nlohmann::json::parse(compiled.graph_json);
  program["instructions"][0]["shape"][0] = {{"op", "sub"}, {"args", {{{"var", 0}}, 100}}};
  std::shared_ptr<const runtime::VmModel> model =
      runtime::MakeVmModel(compiled.kernels, program.dump(), nullptr, 0, nullptr);
  runtime::VirtualMachine vm(model);
  vm.SetInput("x", RandomArray({2, 3, 8}, kF32, 1));
  vm.SetInput("mask", RandomArray({2, 3}, kF32, 2));
  EXPECT_EQ(ErrorOf([&] { vm.Run(); }),
            "VirtualMachine: instruction 0's tensor has the shape [-98, 3, 8] at these input "
            "sizes: a negative dimension (the inputs are too small for the model)");
}

// A program that does not fit its kernels and weights is refused with the field at fault.
TEST(VirtualMachine, MalformedProgramsAreErrorsNamingTheField) {
  CompiledModel compiled = TwoInputModel();
  auto refuse = [&](const std::string& from, const std::string& to) {
    std::string program = compiled.graph_json;
    size_t at = program.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    program.replace(at, from.size(), to);
    return ErrorOf([&] { runtime::MakeVmModel(compiled.kernels, program, nullptr, 0, nullptr); });
  };
  EXPECT_EQ(refuse("\"format\": \"loom-vm-1\"", "\"format\": \"loom-vm-9\""),
            "VM program: unknown format 'loom-vm-9'; this runtime reads 'loom-vm-1'");
  EXPECT_EQ(refuse("\"op\": \"invoke\"", "\"op\": \"jump\""),
            "VM program: instructions[1].op 'jump' is no instruction (load_param, alloc, "
            "invoke, release, move, if, goto, load_size, set_size, write_size, copy, store_row, "
            "check)");
  // The kernel's output allocated into an input's register.
  EXPECT_EQ(refuse("\"dst\": 2", "\"dst\": 1"),
            "VM program: instructions[0] writes register 1, input 'mask'");
  // ... or never allocated.
  EXPECT_EQ(refuse("\"op\": \"alloc\",\n   \"dst\": 2", "\"op\": \"release\",\n   \"register\": 2"),
            "VM program: instructions[0] reads register 2 (the released tensor) before any "
            "instruction writes it");
  EXPECT_NE(
      refuse("\"func\": \"", "\"func\": \"missing_").find("is no function of the model's kernels"),
      std::string::npos);
}

// The kernels a run invoked, by function name.
std::vector<std::string> InvokedKernels(runtime::Executor& executor) {
  std::vector<std::string> funcs;
  for (const runtime::Executor::KernelTime& kernel : executor.ProfileKernels(1)) {
    funcs.push_back(kernel.func);
  }
  return funcs;
}

bool AllStartWith(const std::vector<std::string>& names, const std::string& prefix) {
  return !names.empty() && std::all_of(names.begin(), names.end(), [&](const std::string& name) {
    return name.rfind(prefix, 0) == 0;
  });
}

// A dense layer over a symbolic row count (x [1, n, 64]) takes the packed GEMM and its
// bias epilogue, not the generic reduction: the same results as the operators evaluated
// alone, at row counts below, at and past a row tile.
TEST(VirtualMachine, DenseOfASymbolicRowCountTakesThePackedGemm) {
  loom::Var n = SizeVar("n", kI64);
  Function main = Model(
      [](Expr x) {
        Expr y = MakeCall("nn.dense", {x, RandomConstant({48, 64}, "w", 3, -0.2, 0.2)});
        return MakeCall("erf", {MakeCall("add", {y, RandomConstant({48}, "b", 4)})});
      },
      {Dim(1), n, Dim(64)});
  std::unique_ptr<runtime::Executor> vm =
      MakeExecutor(Compile(IRModule::FromFunction(main), {.opt_level = 3}));
  for (int64_t length : {1, 5, 8, 9, 33}) {
    runtime::NDArray input = RandomArray({1, length, 64}, kF32, static_cast<unsigned>(length));
    runtime::NDArray got = RunOn(*vm, {input}).at(0);
    test::ExpectClose(got, Values(test::Interpret(main, {input}).tensor), 1e-4,
                      "n = " + std::to_string(length));
  }
  std::vector<std::string> kernels = InvokedKernels(*vm);
  EXPECT_TRUE(std::any_of(kernels.begin(), kernels.end(), [](const std::string& name) {
    return name.find("dense_packed") != std::string::npos;
  })) << kernels.front();
}

// Compiled with buckets n = 7 and 32, the attention block runs the kernels specialized for
// n at those lengths (the static strategies: the same outputs, bit for bit, as the model
// compiled for that length alone) and the general kernels at the others.
TEST(VirtualMachine, DynamicBucketsRunKernelsSpecializedForTheirSizes) {
  loom::Var n = SizeVar("n", kI64);
  Function main = Model(Attention, {Dim(1), n, Dim(64)});
  IRModule module = IRModule::FromFunction(main);
  CompiledModel compiled = Compile(module, {.dynamic_buckets = {{"n", {7, 32}}}});
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  for (int64_t length : {1, 7, 32, 9, 7}) {
    runtime::NDArray input = RandomArray({1, length, 64}, kF32, static_cast<unsigned>(length));
    runtime::NDArray got = RunOn(*vm, {input}).at(0);
    test::ExpectClose(got, Values(test::Interpret(main, {input}).tensor), 1e-4,
                      "n = " + std::to_string(length));
    std::vector<std::string> invoked = InvokedKernels(*vm);
    const std::string prefix = "n" + std::to_string(length) + "_";
    if (length == 7 || length == 32) {
      EXPECT_TRUE(AllStartWith(invoked, prefix)) << "n = " << length;
      CompiledModel alone = Compile(RunPasses(module, {BindSizeVars({{"n", length}})}), {});
      EXPECT_EQ(alone.executor, "graph");
      EXPECT_EQ(Values(got), Values(RunOn(*MakeExecutor(alone), {input}).at(0))) << length;
    } else {
      for (const std::string& func : invoked) EXPECT_EQ(func.find("n7_"), std::string::npos);
      for (const std::string& func : invoked) EXPECT_EQ(func.find("n32_"), std::string::npos);
    }
  }
  // A weight several programs load (the biases: their layouts do not change) is stored once.
  nlohmann::json program = nlohmann::json::parse(compiled.graph_json);
  size_t loads = 0;
  for (const nlohmann::json& insn : program["instructions"]) loads += insn["op"] == "load_param";
  EXPECT_LT(program["params"].size(), loads);
}

// Two size variables: every combination of their buckets is a program of its own.
TEST(VirtualMachine, DynamicBucketsCombineSizeVariables) {
  loom::Var b = SizeVar("b", kI64), n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{b, n, Dim(8)}, kF32));
  Var mask = MakeVar("mask", TensorType(std::vector<PrimExpr>{b, n}, kF32));
  Expr y = MakeCall("multiply", {x, MakeCall("expand_dims", {mask}, {{"axis", int64_t{2}}})});
  Function main = MakeFunction({x, mask}, MakeCall("exp", {y}));
  CompiledModel compiled =
      Compile(IRModule::FromFunction(main), {.dynamic_buckets = {{"b", {1, 2}}, {"n", {3, 5}}}});
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  for (auto [batch, length] : std::vector<std::pair<int64_t, int64_t>>{{2, 5}, {1, 3}, {2, 4}}) {
    std::vector<runtime::NDArray> inputs = {RandomArray({batch, length, 8}, kF32, 1),
                                            RandomArray({batch, length}, kF32, 2)};
    test::ExpectClose(RunOn(*vm, inputs).at(0), Values(test::Interpret(main, inputs).tensor), 1e-5,
                      "b = " + std::to_string(batch) + ", n = " + std::to_string(length));
    std::vector<std::string> invoked = InvokedKernels(*vm);
    if (length == 4) {
      EXPECT_FALSE(AllStartWith(invoked, "b")) << invoked.front();
    } else {
      EXPECT_TRUE(
          AllStartWith(invoked, "b" + std::to_string(batch) + "_n" + std::to_string(length) + "_"));
    }
  }
}

TEST(VirtualMachine, DynamicBucketsThatCannotBeHonouredAreErrors) {
  loom::Var n = SizeVar("n", kI64);
  IRModule module = IRModule::FromFunction(Model(Attention, {Dim(1), n, Dim(64)}));
  auto error = [&](std::map<std::string, std::vector<int64_t>> buckets,
                   const std::string& executor = "auto") {
    return ErrorOf([&] { Compile(module, {.executor = executor, .dynamic_buckets = buckets}); });
  };
  EXPECT_EQ(error({{"seq", {16}}}),
            "Compile: dynamic bucket 'seq' names no symbolic dimension of the model's inputs; "
            "they are 'n'");
  EXPECT_EQ(error({{"n", {0}}}), "Compile: dynamic bucket n = 0: sizes are at least 1");
  EXPECT_EQ(error({{"n", {8, 8}}}), "Compile: dynamic bucket n lists 8 twice");
  EXPECT_EQ(error({{"n", {}}}), "Compile: dynamic bucket 'n' lists no size");
  EXPECT_NE(error({{"n", {8}}}, "graph").find("dynamic buckets specialize the virtual machine"),
            std::string::npos);
  std::vector<int64_t> many(65);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i) + 1;
  EXPECT_NE(error({{"n", many}}).find("more than 64 combinations"), std::string::npos);
  // A bucket the model cannot take at that size names the bucket.
  EXPECT_NE(
      ErrorOf([&] {
        Compile(module, {.memory_limit_bytes = 1 << 20, .dynamic_buckets = {{"n", {16, 100000}}}});
      }).find("Compile: specializing for the bucket n = 100000: Compile: the tensor"),
      std::string::npos);
}

// A dense layer over rows flattened from [n, m, 8] gets data [n * m, 8] and nothing that
// gives n or m alone: its kernel takes n * m as a size of its own.
TEST(VirtualMachine, KernelsTakeSizesTheyCannotSplitAsWholes) {
  loom::Var n = SizeVar("n", kI64), m = SizeVar("m", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n, m, Dim(8)}, kF32));
  Expr rows = MakeCall("reshape", {x}, {{"newshape", Ints{-1, 8}}});
  Expr y = MakeCall("nn.dense", {rows, RandomConstant({16, 8}, "w", 1)});
  Function main = MakeFunction({x}, MakeCall("exp", {y}));
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(Compile(IRModule::FromFunction(main), {}));
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {5, 1}}) {
    runtime::NDArray input = RandomArray({a, b, 8}, kF32, 4);
    test::ExpectClose(RunOn(*vm, {input}).at(0), Values(test::Interpret(main, {input}).tensor),
                      1e-5, "n = " + std::to_string(a) + ", m = " + std::to_string(b));
  }
}

// Declared constraints refuse the inputs violating them before anything runs, name the
// dimension, its value and the constraint; buckets must satisfy them.
TEST(VirtualMachine, DeclaredSizeConstraintsRefuseInputsThatViolateThem) {
  loom::Var n = SizeVar("n", kI64);
  IRModule module = IRModule::FromFunction(
      Model([](Expr x) { return MakeCall("exp", {x}); }, {Dim(1), n, Dim(4)}));
  CompiledModel compiled = Compile(module, {.size_constraints = {"n%8==0", "n <= 64"}});
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  auto run = [&](int64_t length) {
    return ErrorOf([&] {
      vm->SetInput(0, RandomArray({1, length, 4}, kF32, 1));
      vm->Run();
    });
  };
  EXPECT_EQ(run(16), "no error");
  EXPECT_EQ(run(64), "no error");
  EXPECT_EQ(run(12),
            "VirtualMachine: dimension 1 of input 'x' is n = 12, but the model was compiled for "
            "n % 8 == 0 only");
  EXPECT_EQ(run(72),
            "VirtualMachine: dimension 1 of input 'x' is n = 72, but the model was compiled for "
            "n <= 64 only");
  auto error = [&](std::vector<std::string> constraints,
                   std::map<std::string, std::vector<int64_t>> buckets = {}) {
    return ErrorOf(
        [&] { Compile(module, {.dynamic_buckets = buckets, .size_constraints = constraints}); });
  };
  EXPECT_EQ(error({"n <= 64"}, {{"n", {16, 100}}}),
            "Compile: dynamic bucket n = 100 violates the size constraint n <= 64");
  EXPECT_EQ(error({"seq > 1"}),
            "Compile: size constraint 'seq > 1' is on 'seq', no symbolic dimension of the "
            "model's inputs");
  EXPECT_EQ(error({"n != 3"}),
            "size constraint 'n != 3': no comparison; expected NAME OP N or NAME % M OP N, OP "
            "one of ==, <, <=, >, >= (for example 'seq % 8 == 0' or 'seq <= 512')");
  EXPECT_NE(error({"n % 0 == 0"}).find("the modulus must be at least 1"), std::string::npos);
  EXPECT_NE(error({"n < 4 x"}).find("'x' after the constraint"), std::string::npos);
  for (const char* op : {"<", ">", ">="}) {
    std::string constraint = std::string("n ") + op + " 8";
    CompiledModel bounded = Compile(module, {.size_constraints = {constraint}});
    std::unique_ptr<runtime::Executor> machine = MakeExecutor(bounded);
    for (int64_t length : {7, 8, 9}) {
      machine->SetInput(0, RandomArray({1, length, 4}, kF32, 1));
      bool holds = std::string(op) == "<"   ? length < 8
                   : std::string(op) == ">" ? length > 8
                                            : length >= 8;
      EXPECT_EQ(ErrorOf([&] { machine->Run(); }) == "no error", holds)
          << constraint << " at " << length;
    }
  }
}

// Jumps and moves are checked like every other instruction: a target in the program, no
// register read on a path that did not write it, no instruction that no path reaches.
TEST(VirtualMachine, MalformedControlFlowIsAnErrorNamingTheInstruction) {
  loom::Var n = SizeVar("n", kI64);
  IRModule module = IRModule::FromFunction(
      Model([](Expr x) { return MakeCall("exp", {x}); }, {Dim(1), n, Dim(4)}));
  CompiledModel compiled = Compile(module, {.dynamic_buckets = {{"n", {3}}}});
  nlohmann::json program = nlohmann::json::parse(compiled.graph_json);
  auto refuse = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json changed = program;
    edit(changed);
    return ErrorOf(
        [&] { runtime::MakeVmModel(compiled.kernels, changed.dump(), nullptr, 0, nullptr); });
  };
  ASSERT_EQ(program["instructions"][0]["op"], "if");
  const size_t branch_end = program["instructions"][0]["else"].get<size_t>();
  const std::string count = std::to_string(program["instructions"].size());
  EXPECT_EQ(refuse([](nlohmann::json& p) { p["instructions"][0]["else"] = 99; }),
            "VM program: instructions[0].else = 99 must be an instruction (0 to " + count + ", " +
                count + " the end)");
  // Code after a goto that no jump reaches: past the one jump to it, or with that jump going
  // back (a legal target: a loop) instead.
  for (size_t to : {branch_end + 1, size_t{0}}) {
    EXPECT_EQ(refuse([&](nlohmann::json& p) { p["instructions"][0]["else"] = to; }),
              "VM program: instructions[" + std::to_string(branch_end) +
                  "] is on no path from the first instruction: no jump or instruction before it "
                  "leads there");
  }
  // The specialization releases its output instead of moving it to the model's: on that
  // path the output register holds nothing at the end.
  nlohmann::json& move = program["instructions"][branch_end - 2];
  ASSERT_EQ(move["op"], "move");
  EXPECT_EQ(refuse([&](nlohmann::json& p) {
              p["instructions"][branch_end - 2] = {{"op", "release"}, {"register", move["src"]}};
            }),
            "VM program: outputs[0] is register " + move["dst"].dump() +
                ", which holds no tensor when the program ends");
  EXPECT_NE(refuse([](nlohmann::json& p) {
              p["instructions"][0]["cond"] = {{"op", "ge"}, {"args", {1, 2}}};
            }).find("instructions[0].cond.op 'ge' is no size operation"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph
