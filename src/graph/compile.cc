// Compile: the graph compiler's pipeline, top to bottom.
#include "loom/graph/compile.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "graph/codegen_json.h"
#include "loom/graph/lower.h"
#include "loom/graph/transform.h"
#include "loom/target/build.h"

namespace loom::graph {
namespace {

void CheckOptions(const IRModule& module, const CompileOptions& options) {
  LOOM_CHECK_USER(options.opt_level >= 0 && options.opt_level <= 3)
      << "Compile: opt_level must be 0, 1, 2 or 3, got " << options.opt_level;
  LOOM_CHECK_USER(options.max_fuse_group >= 1)
      << "Compile: max_fuse_group must be at least 1, got " << options.max_fuse_group;
  LOOM_CHECK_USER(module.Contains("main"))
      << "Compile: the module has no function \"main\" (the model to compile)";
  for (const Var& input : module.main()->params) {
    LOOM_CHECK_USER(input.type().is_tensor() && input.type().ConstShape().has_value())
        << "Compile: model input '" << input->name_hint << "' is " << input.type().str()
        << "; every input needs a constant shape (bind its symbolic dimensions first)";
  }
}

// The graph passes of an optimization level, in order.
//   -O0: every operator its own kernel, the model as written.
//   -O1: fusion.
//   -O2: inference simplifications, constants folded, common subexpressions merged.
//   -O3: per-channel scales folded into weights, blocked layouts for the x86 kernels.
std::vector<Pass> GraphPasses(const CompileOptions& options, const Target& target) {
  if (options.opt_level == 0) return {FuseOps(/*max_group_size=*/1)};
  std::vector<Pass> passes;
  if (options.opt_level >= 2) {
    passes.push_back(SimplifyInference());  // batch_norm -> scale and shift; dropout gone
    passes.push_back(FoldConstant(target));  // ... which become constants here
    passes.push_back(EliminateCommonSubexpr());
  }
  if (options.opt_level >= 3) {
    passes.push_back(FoldScaleAxis());  // the scales into conv / dense weights
    passes.push_back(AlterOpLayout(target));
    passes.push_back(FoldConstant(target));  // the scaled, re-laid-out and transformed weights
  }
  if (options.opt_level >= 2) passes.push_back(DeadCodeElimination());
  passes.push_back(FuseOps(options.max_fuse_group));
  return passes;
}

}  // namespace

CompiledModel Compile(const IRModule& module, const CompileOptions& options) {
  CheckOptions(module, options);
  Target target = Target::Parse(options.target);
  // 1. Graph rewrites, ending with fusion: main calls one primitive function per kernel.
  IRModule fused = RunPasses(module, GraphPasses(options, target));
  // 2. Each distinct group to a PrimFunc (TE compute + group schedule + te::lower).
  LoweredModel lowered = LowerToTIR(fused, target);
  // 3. The execution graph and its static memory plan.
  ExecutionGraph graph = BuildExecutionGraph(fused.main(), lowered);
  MemoryPlan plan = PlanMemory(graph.PlanProblem());
  // 4. Code generation, the weights and the graph's text.
  CompiledModel model;
  model.kernels_tir = lowered.tir;
  model.kernels = build(lowered.tir, target);
  std::vector<size_t> param_offsets;
  model.params = ParamsBlob(graph, &param_offsets);
  model.graph_json = ExecutionGraphJson(graph, plan, param_offsets, target.str());
  model.memory = plan.stats;
  for (const ExecutionGraph::Kernel& kernel : graph.kernels) model.kernel_names.push_back(kernel.func);
  return model;
}

std::shared_ptr<const runtime::GraphModel> MakeGraphModel(const CompiledModel& model) {
  constexpr std::align_val_t kAlignment{64};  // what kernels require of every tensor
  size_t size = model.params.size();
  std::shared_ptr<uint8_t> params(new (kAlignment) uint8_t[std::max<size_t>(size, 1)],
                                  [](uint8_t* p) { operator delete[](p, kAlignment); });
  if (size > 0) std::memcpy(params.get(), model.params.data(), size);
  return runtime::MakeGraphModel(model.kernels, model.graph_json, params.get(), size, params);
}

void ExportModel(const CompiledModel& model, const std::string& path) {
  ExportLibrary(model.kernels, path,
                {{"loom_graph_json", model.graph_json.data(), model.graph_json.size()},
                 {"loom_params", model.params.data(), model.params.size()}});
}

}  // namespace loom::graph
