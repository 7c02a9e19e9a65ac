// The VM's static memory plan: intermediates whose sizes have bounds (constant shapes, a
// declared `n <= 48`) live in storages planned at those bounds, shared by tensors whose
// lifetimes do not overlap and held by the machine; the rest come from the pool. Runs with
// the plan give what runs without it give, bit for bit (the same kernels), at every size
// within the bounds; a program whose tensor outgrows its storage is refused at run time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/compile.h"
#include "loom/runtime/vm.h"
#include "pass_test_util.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using test::ErrorOf;
using test::RandomArray;
using test::RandomConstant;
using test::Values;
using test::models::RunOn;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

PrimExpr Dim(int64_t value) { return IntImm(kI64, value); }

// x [1, n, 64] through two dense layers, a residual and a softmax: intermediates of
// [1, n, 128] and [1, n, 64], some alive together.
Function Block() {
  loom::Var n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{Dim(1), n, Dim(64)}, kF32));
  Expr h = MakeCall("nn.dense", {x, RandomConstant({128, 64}, "w1", 1, -0.2, 0.2)});
  h = MakeCall("nn.relu", {MakeCall("add", {h, RandomConstant({128}, "b1", 2)})});
  Expr y = MakeCall("nn.dense", {h, RandomConstant({64, 128}, "w2", 3, -0.2, 0.2)});
  y = MakeCall("add", {x, MakeCall("tanh", {y})});
  return MakeFunction({x}, MakeCall("nn.softmax", {y}, {{"axis", int64_t{-1}}}));
}

// How a program's allocations are made: in a storage of the plan, or from the pool.
struct Allocations {
  int planned = 0;
  int pooled = 0;
};

Allocations AllocationsOf(const CompiledModel& compiled) {
  Allocations counts;
  const json program = json::parse(compiled.graph_json);
  for (const json& insn : program["instructions"]) {
    if (insn["op"] != "alloc") continue;
    ++(insn.contains("storage") ? counts.planned : counts.pooled);
  }
  return counts;
}

std::vector<int64_t> StoragesOf(const CompiledModel& compiled) {
  return json::parse(compiled.graph_json)["storages"].get<std::vector<int64_t>>();
}

TEST(VmMemoryPlan, TensorsOfBoundedSizesArePlannedAtTheirBounds) {
  IRModule module = IRModule::FromFunction(Block());
  CompiledModel bounded = Compile(module, {.opt_level = 0, .size_constraints = {"n <= 48"}});
  CompiledModel unbounded = Compile(module, {.opt_level = 0});
  // Without a bound every intermediate comes from the pool; with one only the output does.
  const Allocations with = AllocationsOf(bounded), without = AllocationsOf(unbounded);
  EXPECT_EQ(without.planned, 0);
  EXPECT_EQ(with.pooled, 1);
  EXPECT_EQ(with.planned, without.pooled - 1);
  // Slots are shared: fewer storages than planned tensors, each at most the largest
  // intermediate at n = 48 ([1, 48, 128] floats).
  const std::vector<int64_t> storages = StoragesOf(bounded);
  EXPECT_LT(static_cast<int>(storages.size()), with.planned);
  EXPECT_EQ(*std::max_element(storages.begin(), storages.end()), 48 * 128 * 4);
  int64_t total = 0;
  for (int64_t bytes : storages) total += bytes;
  EXPECT_EQ(bounded.memory.planned_bytes, total);
  EXPECT_EQ(bounded.memory.num_storages, static_cast<int>(storages.size()));
  EXPECT_EQ(unbounded.memory.planned_bytes, 0);

  std::unique_ptr<runtime::Executor> planned = MakeExecutor(bounded);
  std::unique_ptr<runtime::Executor> pooled = MakeExecutor(unbounded);
  const auto& planned_vm = dynamic_cast<const runtime::VirtualMachine&>(*planned);
  const auto& pooled_vm = dynamic_cast<const runtime::VirtualMachine&>(*pooled);
  EXPECT_EQ(planned_vm.PlannedBytes(), static_cast<size_t>(total));
  EXPECT_EQ(pooled_vm.PlannedBytes(), 0u);
  for (int64_t n : {48, 1, 17, 48, 5}) {
    runtime::NDArray x = RandomArray({1, n, 64}, kF32, static_cast<unsigned>(n));
    std::vector<double> got = Values(RunOn(*planned, {x}).at(0));
    EXPECT_EQ(got, Values(RunOn(*pooled, {x}).at(0))) << "n = " << n;
    test::ExpectClose(RunOn(*planned, {x}).at(0), Values(test::Interpret(Block(), {x}).tensor),
                      1e-4, "n = " + std::to_string(n));
  }
  // The pool holds the output alone; the intermediates stay in the storages.
  EXPECT_LT(planned_vm.PoolBytes(), pooled_vm.PoolBytes());
  EXPECT_LE(planned_vm.PoolBytes(), 2u * 48 * 64 * 4);
}

// A model of constant shapes run by the VM needs the pool for its outputs only.
TEST(VmMemoryPlan, StaticProgramsArePlannedWhole) {
  using namespace test::models;  // NOLINT: the compile tests' models
  for (const Function& main : {ResidualNet(), SmallCnn()}) {
    IRModule module = IRModule::FromFunction(main);
    CompiledModel vm = Compile(module, {.executor = "vm"});
    CompiledModel graph = Compile(module, {});
    EXPECT_EQ(
        AllocationsOf(vm).pooled,
        static_cast<int>(main->body.type().is_tuple() ? main->body.type().fields().size() : 1));
    // The graph executor's plan holds the inputs and outputs besides.
    EXPECT_GT(vm.memory.planned_bytes, 0);
    EXPECT_LE(vm.memory.planned_bytes, graph.memory.planned_bytes);
  }
}

// An elementwise kernel over symbolic sizes writes over a same-shaped input that dies at it,
// as over constant ones: a chain of them needs one storage.
TEST(VmMemoryPlan, ElementwiseChainsOfSymbolicShapeWorkInPlace) {
  loom::Var n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n, Dim(16)}, kF32));
  Expr a = MakeCall("exp", {x});
  Expr b = MakeCall("negative", {a});
  Expr c = MakeCall("sigmoid", {b});
  Function main = MakeFunction({x}, MakeCall("add", {c, x}));
  CompiledModel compiled =
      Compile(IRModule::FromFunction(main), {.opt_level = 0, .size_constraints = {"n < 100"}});
  EXPECT_EQ(AllocationsOf(compiled).planned, 3);
  EXPECT_EQ(StoragesOf(compiled), (std::vector<int64_t>{99 * 16 * 4}));
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  for (int64_t rows : {99, 3}) {
    runtime::NDArray input = RandomArray({rows, 16}, kF32, 7);
    test::ExpectClose(RunOn(*vm, {input}).at(0), Values(test::Interpret(main, {input}).tensor),
                      1e-5, "rows = " + std::to_string(rows));
  }
}

// Specialized programs (buckets) and the general one never run together: their plans overlay
// the same storages.
TEST(VmMemoryPlan, BucketsShareTheGeneralProgramsStorages) {
  IRModule module = IRModule::FromFunction(Block());
  CompiledModel general = Compile(module, {.opt_level = 0, .size_constraints = {"n <= 48"}});
  CompiledModel buckets = Compile(
      module,
      {.opt_level = 0, .dynamic_buckets = {{"n", {16, 32}}}, .size_constraints = {"n <= 48"}});
  // The largest program is the general one at its bound; the buckets' fit in its storages.
  EXPECT_EQ(StoragesOf(buckets).size(), StoragesOf(general).size());
  EXPECT_EQ(buckets.memory.planned_bytes, general.memory.planned_bytes);
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(buckets);
  for (int64_t n : {16, 20, 32, 48}) {
    runtime::NDArray x = RandomArray({1, n, 64}, kF32, static_cast<unsigned>(n));
    test::ExpectClose(RunOn(*vm, {x}).at(0), Values(test::Interpret(Block(), {x}).tensor), 1e-4,
                      "n = " + std::to_string(n));
  }
}

TEST(VmMemoryPlan, AProgramWhoseTensorOutgrowsItsStorageIsRefused) {
  CompiledModel compiled =
      Compile(IRModule::FromFunction(Block()), {.opt_level = 0, .size_constraints = {"n <= 48"}});
  // The weights, 64-byte aligned as a machine requires.
  std::shared_ptr<uint8_t> params(new (std::align_val_t{64}) uint8_t[compiled.params.size()],
                                  [](uint8_t* p) { operator delete[](p, std::align_val_t{64}); });
  std::copy(compiled.params.begin(), compiled.params.end(), params.get());
  auto machine = [&](const json& program) {
    return runtime::MakeVmModel(compiled.kernels, program.dump(), params.get(),
                                compiled.params.size(), params);
  };
  json program = json::parse(compiled.graph_json);
  size_t first = 0;  // the first allocation in a storage
  while (!program["instructions"][first].contains("storage")) ++first;
  const int64_t storage = program["instructions"][first]["storage"];
  program["storages"][storage] = 64;
  runtime::VirtualMachine vm(machine(program));
  vm.SetInput(0, RandomArray({1, 5, 64}, kF32, 1));
  EXPECT_EQ(ErrorOf([&] { vm.Run(); }),
            "VirtualMachine: instruction " + std::to_string(first) +
                " (alloc) places float32[1, 5, 128] (2560 bytes) in storage " +
                std::to_string(storage) +
                " of the memory plan, which holds 64: the plan is made at the bounds the "
                "model's sizes were compiled with, and these sizes exceed them");
  // The reader checks the storages and the allocations naming them.
  json out_of_range = json::parse(compiled.graph_json);
  out_of_range["instructions"][first]["storage"] = 99;
  EXPECT_NE(
      ErrorOf([&] { machine(out_of_range); }).find("instructions[" + std::to_string(first) + "]"),
      std::string::npos);
  json too_large = json::parse(compiled.graph_json);
  too_large["max_allocation_bytes"] = 1000;
  EXPECT_NE(ErrorOf([&] {
              machine(too_large);
            }).find("bytes, more than the 1000 one allocation may take (max_allocation_bytes)"),
            std::string::npos);
  json negative = json::parse(compiled.graph_json);
  negative["storages"][0] = -1;
  EXPECT_NE(ErrorOf([&] { machine(negative); }).find("storages[0]"), std::string::npos);
}

// A tensor whose bound would exceed the compile's allocation limit is left to the pool, which
// refuses it only when a run's sizes make it that large.
TEST(VmMemoryPlan, TensorsPastTheAllocationLimitAreLeftToThePool) {
  CompiledModel compiled =
      Compile(IRModule::FromFunction(Block()),
              {.opt_level = 0, .memory_limit_bytes = 40000, .size_constraints = {"n <= 100"}});
  // [1, 100, 128] floats (51200 bytes) at the bound: not planned; [1, 100, 64] (25600) are.
  for (int64_t bytes : StoragesOf(compiled)) EXPECT_LE(bytes, 40000);
  const Allocations allocations = AllocationsOf(compiled);
  EXPECT_GT(allocations.planned, 0);
  EXPECT_GT(allocations.pooled, 1);
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  runtime::NDArray x = RandomArray({1, 50, 64}, kF32, 3);
  test::ExpectClose(RunOn(*vm, {x}).at(0), Values(test::Interpret(Block(), {x}).tensor), 1e-4,
                    "n = 50");
}

}  // namespace
}  // namespace loom::graph
