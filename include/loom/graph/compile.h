// The graph compiler's driver: a model (graph IRModule) in, kernels + execution graph +
// weights out. The pipeline reads top to bottom in src/graph/compile.cc.
//
//   CompiledModel model = Compile(module, {.opt_level = 3, .target = "llvm"});
//   runtime::GraphExecutor executor(MakeGraphModel(model));   // run it in this process
//   ExportModel(model, "model.so");           // runtime::LoadModel("model.so")
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/memory_plan.h"
#include "loom/graph/module.h"
#include "loom/graph/strategy.h"
#include "loom/graph/tuning.h"
#include "loom/ir/module.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/graph_executor.h"
#include "loom/runtime/module.h"

namespace loom::graph {

struct CompileOptions {
  // 0: every operator its own kernel, no graph rewrites; 1: FuseOps; 2: also the
  // simplifying passes; 3: also the layout passes.
  int opt_level = 3;
  std::string target = "llvm";
  int max_fuse_group = 256;  // operators per fused kernel at most
  // "float32", "bf16" or "fp16": convolutions, dense layers and matmuls multiply bfloat16
  // (float16) operands with float32 sums (ToHalfPrecisionProducts), on the target's kernels
  // for them where it has some (AMX or AVX-512 BF16, GPU tensor cores), by conversion
  // elsewhere. The artifact records it.
  std::string precision = "float32";
  // Tuned configurations the strategies use (graph/tuning.h); none: their defaults.
  std::shared_ptr<ConfigDispatcher> configs = nullptr;
  // The memory a model's tensors may need at most (any one tensor, and the memory plan);
  // more is a compile error with the figures. 0: this machine's physical memory.
  int64_t memory_limit_bytes = 0;
  // What runs the model: "graph" (the graph executor: every shape fixed, one static memory
  // plan), "vm" (the virtual machine: shapes computed at run time from the inputs' sizes;
  // tensors whose sizes have bounds in a static plan made at those bounds, the others from a
  // pool), or "auto": the VM where an input has a symbolic dimension, the
  // graph executor otherwise. The artifact records it; runtime::LoadExecutor follows it.
  std::string executor = "auto";
  // Sizes of the inputs' symbolic dimensions to specialize for ({"seq": {16, 64, 128}}): the
  // VM's program holds, besides the general one, the model compiled with each combination
  // of these sizes bound (constant shapes: the targets' tuned kernels, layouts and folding),
  // and runs it when the inputs have those sizes. At most 64 combinations.
  std::map<std::string, std::vector<int64_t>> dynamic_buckets = {};
  // Declared constraints on those size variables ("seq % 8 == 0", "seq <= 512"; NAME OP N
  // or NAME % M OP N, OP one of ==, <, <=, >, >=): the VM refuses inputs violating one
  // before anything runs, naming the dimension, its value and the constraint; a bucket
  // violating one is a compile error. An upper bound (seq <= 512) lets the memory plan place
  // the tensors it sizes (the plan is made at the bounds, allocated once per machine).
  std::vector<std::string> size_constraints = {};
};

// Called after each stage of Compile ("graph passes", "lowering", "memory plan", "codegen")
// with its wall time, for progress reports on long compiles.
using CompileStageCallback = std::function<void(const std::string& stage, double seconds)>;

// The operands' type of the products of a CompileOptions::precision: bfloat16 for "bf16",
// float16 for "fp16"; none for "float32" (or any other text).
std::optional<DataType> ProductOperandType(const std::string& precision);

struct CompiledModel {
  loom::IRModule kernels_tir;      // the lowered kernels
  runtime::Module kernels;         // built
  std::string graph_json;          // docs/graph_artifact.md, or the VM's docs/vm_artifact.md
  std::string executor;            // "graph" or "vm"
  std::vector<uint8_t> params;     // the blob (64-byte aligned offsets)
  MemoryPlanStats memory;
  std::vector<std::string> kernel_names;  // fused groups in execution order
  // Where the target's graph passes placed layers (VTA's packing), in the graph's order.
  std::vector<LayerPlacement> placements;
};

// Compile's first stage alone: the graph passes, ending with fusion (main calls one
// primitive function per kernel). What the auto-tuner compiles to find a model's tasks.
// Inputs may have symbolic dimensions (a call over them keeps its layout).
IRModule OptimizeGraph(const IRModule& module, const CompileOptions& options);

// An invalid option, a module without "main", or (for the graph executor) a symbolic input
// dimension is a loom::Error naming the problem.
CompiledModel Compile(const IRModule& module, const CompileOptions& options,
                      const CompileStageCallback& on_stage = {});

// The model to run in this process: the kernels, the graph, and a 64-byte aligned copy of
// the parameters that the returned model owns.
std::shared_ptr<const runtime::GraphModel> MakeGraphModel(const CompiledModel& model);

// The model to run in this process with the executor it was compiled for (the graph
// executor or the VM); its executors share one aligned copy of the parameters.
runtime::LoadedModel MakeLoadedModel(const CompiledModel& model);
// MakeLoadedModel(model).NewExecutor().
std::unique_ptr<runtime::Executor> MakeExecutor(const CompiledModel& model);

// One shared library holding the kernels, the execution graph (symbol loom_graph_json) and
// the weights (loom_params, loom_params_size).
void ExportModel(const CompiledModel& model, const std::string& path);

}  // namespace loom::graph
