// Compile: the graph compiler's pipeline, top to bottom.
#include "loom/graph/compile.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>

#include "graph/codegen_json.h"
#include "graph/codegen_vm.h"
#include "graph/size_constraint.h"
#include "loom/graph/functor.h"
#include "loom/graph/lower.h"
#include "loom/graph/op_util.h"
#include "loom/graph/strategy.h"
#include "loom/graph/transform.h"
#include "loom/ir/pass_context.h"
#include "loom/runtime/vm.h"
#include "loom/support/bytes_text.h"
#include "loom/target/build.h"

namespace loom::graph {

std::optional<DataType> ProductOperandType(const std::string& precision) {
  if (precision == "bf16") return DataType::BFloat16();
  if (precision == "fp16") return DataType::Float(16);
  return std::nullopt;
}

namespace {

// The bytes a compile may plan for: the options' limit, else this machine's memory.
int64_t MemoryLimit(const CompileOptions& options) {
  if (options.memory_limit_bytes > 0) return options.memory_limit_bytes;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page
                               : std::numeric_limits<int64_t>::max();
}

// A loom::Error when `bytes` (what `what` needs) exceed the limit.
void CheckMemoryFits(double bytes, const std::string& what, const CompileOptions& options) {
  const int64_t limit = MemoryLimit(options);
  LOOM_CHECK_USER(bytes <= static_cast<double>(limit))
      << "Compile: " << what << " " << BytesText(bytes) << ", more than "
      << (options.memory_limit_bytes > 0 ? "the memory limit of " : "this machine's memory, ")
      << BytesText(static_cast<double>(limit))
      << "; give the inputs smaller shapes (--input-shape), "
      << "or raise the limit to compile for a larger machine (CompileOptions::"
      << "memory_limit_bytes, loom compile --memory-limit)";
}

// Before lowering: no single tensor of the fused graph may exceed the memory limit (a model
// whose input has a dimension of 2^40, say).
void CheckTensorsFit(const Function& main, const CompileOptions& options) {
  auto check = [&](const Type& type, const std::string& name) {
    std::vector<Type> tensors = type.is_tuple() ? type.fields() : std::vector<Type>{type};
    for (const Type& t : tensors) {
      std::optional<std::vector<int64_t>> shape = t.is_tensor() ? t.ConstShape() : std::nullopt;
      if (!shape) continue;
      double bytes = t.dtype().bytes();
      for (int64_t d : *shape) bytes *= static_cast<double>(d);
      CheckMemoryFits(bytes, "the tensor '" + name + "' (" + t.str() + ") needs", options);
    }
  };
  for (const Var& input : main->params) check(input.type(), input->name_hint);
  PostOrderVisitDataflow(main->body, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) check(call->checked_type, call->name_hint);
  });
}

constexpr size_t kMaxSpecializations = 64;

void CheckOptions(const IRModule& module, const CompileOptions& options) {
  LOOM_CHECK_USER(options.opt_level >= 0 && options.opt_level <= 3)
      << "Compile: opt_level must be 0, 1, 2 or 3, got " << options.opt_level;
  LOOM_CHECK_USER(options.precision == "float32" || ProductOperandType(options.precision))
      << "Compile: precision must be \"float32\", \"bf16\" or \"fp16\", got \"" << options.precision
      << "\"";
  LOOM_CHECK_USER(options.max_fuse_group >= 1)
      << "Compile: max_fuse_group must be at least 1, got " << options.max_fuse_group;
  LOOM_CHECK_USER(options.executor == "auto" || options.executor == "graph" ||
                  options.executor == "vm")
      << "Compile: executor must be \"auto\", \"graph\" or \"vm\", got \"" << options.executor
      << "\"";
  LOOM_CHECK_USER(options.memory_limit_bytes >= 0)
      << "Compile: memory_limit_bytes must not be negative (0: this machine's memory), got "
      << options.memory_limit_bytes;
  LOOM_CHECK_USER(module.Contains("main"))
      << "Compile: the module has no function \"main\" (the model to compile)";
  size_t combinations = 1;
  for (const auto& [name, sizes] : options.dynamic_buckets) {
    LOOM_CHECK_USER(options.executor != "graph")
        << "Compile: dynamic buckets specialize the virtual machine's program; the graph "
        << "executor runs one shape (drop the buckets, or compile for executor \"vm\")";
    LOOM_CHECK_USER(!sizes.empty()) << "Compile: dynamic bucket '" << name << "' lists no size";
    for (size_t i = 0; i < sizes.size(); ++i) {
      LOOM_CHECK_USER(sizes[i] >= 1)
          << "Compile: dynamic bucket " << name << " = " << sizes[i] << ": sizes are at least 1";
      LOOM_CHECK_USER(std::find(sizes.begin(), sizes.begin() + i, sizes[i]) == sizes.begin() + i)
          << "Compile: dynamic bucket " << name << " lists " << sizes[i] << " twice";
    }
    combinations *= sizes.size();
    LOOM_CHECK_USER(combinations <= kMaxSpecializations)
        << "Compile: the dynamic buckets make more than " << kMaxSpecializations
        << " combinations of sizes, each a compile of its own; declare fewer";
  }
  const std::vector<Var>& inputs = module.main()->params;
  std::map<std::string, size_t> index_of_name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Var& input = inputs[i];
    LOOM_CHECK_USER(input.type().is_tensor())
        << "Compile: model input '" << input->name_hint << "' is " << input.type().str()
        << "; every input must be a tensor";
    // Executors set inputs by name.
    auto [it, fresh] = index_of_name.emplace(input->name_hint, i);
    LOOM_CHECK_USER(fresh) << "Compile: model inputs " << it->second << " and " << i
                           << " are both named '" << input->name_hint << "'";
  }
  const std::vector<std::string>& output_names = module.output_names();
  const Type& result = module.main()->body.type();
  size_t num_results = result.is_tensor() ? 1 : result.fields().size();
  LOOM_CHECK_USER(output_names.empty() || output_names.size() == num_results)
      << "Compile: the module names " << output_names.size() << " outputs, but main returns "
      << num_results;
}

// Times the stages of one compile for its CompileStageCallback.
class StageTimer {
 public:
  explicit StageTimer(const CompileStageCallback& on_stage) : on_stage_(on_stage) {}
  void Done(const char* stage) {
    auto now = std::chrono::steady_clock::now();
    if (on_stage_) on_stage_(stage, std::chrono::duration<double>(now - start_).count());
    start_ = now;
  }

 private:
  const CompileStageCallback& on_stage_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The result with every constant in it (a field of the result tuple, or the result) read
// through a copy call: the executor hands model outputs out of storage slots, and a constant
// lives in the parameters blob.
Expr CopyConstants(const Expr& result) {
  if (const auto* constant = result.as<ConstantNode>()) {
    return MakeCall("copy", {result}, {}, constant->name_hint);
  }
  if (const auto* item = result.as<TupleGetItemNode>()) {
    if (const auto* tuple = item->tuple.as<TupleNode>()) {
      return CopyConstants(tuple->fields[item->index]);
    }
  }
  const auto* tuple = result.as<TupleNode>();
  if (tuple == nullptr) return result;
  std::vector<Expr> fields;
  bool changed = false;
  for (const Expr& field : tuple->fields) {
    fields.push_back(CopyConstants(field));
    changed |= !fields.back().same_as(field);
  }
  return changed ? Expr(MakeTuple(std::move(fields))) : result;
}

Pass CopyConstantOutputs() {
  return {"CopyConstantOutputs", [](const IRModule& module) {
            const Function& main = module.main();
            Expr body = CopyConstants(main->body);
            if (body.same_as(main->body)) return module;
            IRModule result = module;
            result.Add("main", MakeFunction(main->params, body, main->attrs), /*replace=*/true);
            return result;
          }};
}

// The graph passes, in order, each at the lowest level it runs at (the compile's PassContext
// skips the others):
//   -O0: every operator its own kernel, the model as written.
//   -O1: fusion.
//   -O2: max pooling, data movement and products of dequantized 8-bit operands made integer,
//        costly functions of 8-bit tensors tabulated, inference simplifications, constants
//        folded, common subexpressions merged.
//   -O3: per-channel scales folded into weights, the layouts the target's strategies prefer.
//   -O1 and up: the target's own graph passes (TargetGraphPasses: VTA's packing), last.
// At every level float16 computes in float32, and a constant model output becomes the
// output of a copy kernel.
std::vector<Pass> GraphPasses(const CompileOptions& options, const Target& target) {
  // First: every later pass and kernel sees float32 arithmetic.
  std::vector<Pass> passes = {WidenFloat16()};
  // Next: the products it marks are the model's own, before any rewrite.
  if (std::optional<DataType> half = ProductOperandType(options.precision)) {
    passes.push_back(ToHalfPrecisionProducts(*half, HasHalfPrecisionProducts(target, *half)));
  }
  std::vector<Pass> rest = {
      AtLevel(2, CommuteDequantize()),  // max pooling and data movement on the 8-bit values
      // before FoldConstant makes its weights float
      AtLevel(2, FoldQuantizedProducts([target](const CallNode& product) {
                return HasIntegerKernel(product, target);
              })),
      AtLevel(2, TabulateByteFunctions()),  // its tables computed by FoldConstant below
      AtLevel(2, SimplifyInference()),      // batch_norm -> scale and shift; dropout gone
      AtLevel(2, FoldConstant(target)),     // ... which become constants here
      AtLevel(2, EliminateCommonSubexpr()),
      AtLevel(3, FoldScaleAxis()),  // the scales into conv / dense weights
      AtLevel(3, AlterOpLayout(target)),
      // A weight read by several products (a recurrent layer's every step, tied weights) is
      // re-laid-out once, not once per product.
      AtLevel(3, EliminateCommonSubexpr()),
      AtLevel(3, FoldConstant(target)),  // the scaled, re-laid-out and transformed weights
  };
  // The target's own rewrites (VTA's graph packing), on the folded graph.
  std::vector<Pass> target_passes = TargetGraphPasses(target);
  LOOM_CHECK_USER(options.opt_level >= 1 || target_passes.empty())
      << "Compile: target '" << options.target << "' needs -O1 or higher: its device's kernels "
      << "fuse each layer with its tail";
  for (const Pass& pass : target_passes) rest.push_back(AtLevel(1, pass));
  std::vector<Pass> last = {
      AtLevel(2, DeadCodeElimination()),
      CopyConstantOutputs(),  // after folding, which may make outputs constant
      // -O0 fuses nothing: a group of one operator each.
      FuseOps(options.opt_level >= 1 ? options.max_fuse_group : 1),
  };
  passes.insert(passes.end(), rest.begin(), rest.end());
  passes.insert(passes.end(), last.begin(), last.end());
  return passes;
}

// One context for the whole compile, graph and TIR passes alike: the caller's (its
// instruments, config and disabled passes) at the options' level.
transform::PassContext CompileContext(const CompileOptions& options) {
  transform::PassContext context = transform::PassContext::Current();
  context.opt_level = options.opt_level;
  return context;
}

}  // namespace

IRModule OptimizeGraph(const IRModule& module, const CompileOptions& options) {
  CheckOptions(module, options);
  Target target = Target::Parse(options.target);
  transform::PassContextScope scope(CompileContext(options));
  ConfigDispatchScope configs(options.configs);
  return RunPasses(module, GraphPasses(options, target));
}

namespace {

// One program of a compile: the fused graph (kept: `lowered` is keyed by its functions), its
// kernels and its execution graph.
struct Program {
  IRModule fused;
  LoweredModel lowered;
  ExecutionGraph graph;
  std::vector<LayerPlacement> placements;  // where the target's graph passes put layers
  std::map<std::string, int64_t> when;     // the sizes it is specialized for (none: general)
  // A loop body's program: the body's function name; and the programs of this program's
  // loops' bodies.
  std::string body;
  std::vector<Program> bodies;

  // This program and its bodies' (and theirs), depth first.
  template <typename Visit>
  void ForEach(const Visit& visit) const {
    visit(*this);
    for (const Program& inner : bodies) inner.ForEach(visit);
  }
};

// The module whose main is `module`'s function `body` (a loop's body), with the other
// functions that are not main (the bodies of loops inside it).
IRModule BodyModule(const IRModule& module, const std::string& body) {
  IRModule result = IRModule::FromFunction(module.Lookup(body));
  for (const auto& [name, function] : module.functions()) {
    if (name != "main" && name != body) result.Add(name, function);
  }
  return result;
}

// "Loop_3_body_": a loop body's kernel prefix (a C identifier's characters).
std::string BodyPrefix(const std::string& body) {
  std::string prefix;
  for (char c : body) prefix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return prefix + "_";
}

// Graph passes, lowering and the execution graph of `module`, its kernels named with
// `kernel_prefix`; then, for each loop, the program of its body.
Program CompileProgram(const IRModule& module, const CompileOptions& options, const Target& target,
                       const std::string& kernel_prefix, StageTimer* timer) {
  Program program;
  // 1. Graph rewrites, ending with fusion: main calls one primitive function per kernel.
  // The strategies take tuned configurations from options.configs; the target's passes
  // record where they placed layers.
  TakePlacements();
  program.fused = OptimizeGraph(module, options);
  program.placements = TakePlacements();
  CheckTensorsFit(program.fused.main(), options);
  timer->Done("graph passes");
  // 2. Each distinct group to a PrimFunc (TE compute + group schedule + te::lower); with a
  // device target, the groups its implementations take to the device, the rest to the host.
  program.lowered = LowerToTIR(program.fused, target, kernel_prefix);
  timer->Done("lowering");
  // 3. The execution graph.
  program.graph = BuildExecutionGraph(program.fused.main(), program.lowered, module.output_names());
  for (const ExecutionGraph::Kernel& kernel : program.graph.kernels) {
    if (!kernel.loop) continue;
    const std::string& body = kernel.loop->body;
    auto compiled = [&](const Program& p) { return p.body == body; };
    if (std::any_of(program.bodies.begin(), program.bodies.end(), compiled)) continue;
    try {
      program.bodies.push_back(CompileProgram(BodyModule(module, body), options, target,
                                              kernel_prefix + BodyPrefix(body), timer));
    } catch (const Error& error) {
      LOOM_THROW << "Compile: the body of loop '" << kernel.name << "': " << error.what();
    }
    program.bodies.back().body = body;
  }
  return program;
}

// The VM's view of `program` and its bodies, with their weights' offsets (`offsets`, in the
// order Program::ForEach visits the programs, from `*next` on).
VmProgramPart VmPart(const Program& program, const std::vector<std::vector<size_t>>& offsets,
                     size_t* next) {
  VmProgramPart part{&program.graph, offsets.at((*next)++), program.when, program.body, {}};
  for (const Program& body : program.bodies) part.bodies.push_back(VmPart(body, offsets, next));
  return part;
}

// Every combination of the buckets' sizes ({seq: 16, batch: 1}, ...), the last variable
// varying fastest.
std::vector<std::map<std::string, int64_t>> BucketCombinations(
    const std::map<std::string, std::vector<int64_t>>& buckets) {
  std::vector<std::map<std::string, int64_t>> combinations;
  if (buckets.empty()) return combinations;
  combinations.emplace_back();
  for (const auto& [name, sizes] : buckets) {
    std::vector<std::map<std::string, int64_t>> longer;
    for (const auto& combination : combinations) {
      for (int64_t size : sizes) {
        longer.push_back(combination);
        longer.back()[name] = size;
      }
    }
    combinations = std::move(longer);
  }
  return combinations;
}

// "seq128_": the prefix of a specialization's kernels (a C identifier's characters, a
// letter first).
std::string SpecializationPrefix(const std::map<std::string, int64_t>& when) {
  std::string prefix;
  for (const auto& [name, size] : when) {
    for (char c : name) prefix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    prefix += std::to_string(size) + "_";
  }
  return std::isalpha(static_cast<unsigned char>(prefix[0])) ? prefix : "v" + prefix;
}

// The first call of main whose result has a size that is not constant, or nullptr: in a
// model of constant inputs, a size read from a tensor at run time (NonZero's count).
const CallNode* FirstCallSizedAtRunTime(const Function& main) {
  const CallNode* found = nullptr;
  auto constant = [](const Type& type) {
    if (!type.is_tuple()) return !type.is_tensor() || type.ConstShape().has_value();
    return std::all_of(type.fields().begin(), type.fields().end(),
                       [](const Type& field) { return field.ConstShape().has_value(); });
  };
  PostOrderVisit(main->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (found == nullptr && call != nullptr && !constant(call->checked_type)) found = call;
  });
  return found;
}

// The first call of `loop` in main, or nullptr.
const CallNode* FirstLoop(const Function& main) {
  const CallNode* found = nullptr;
  PostOrderVisit(main->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (found == nullptr && call != nullptr && ops::LoopOf(*call)) found = call;
  });
  return found;
}

// The names of the size variables of main's inputs; two variables of one name are an error
// (buckets, constraints and the VM's program name them).
std::set<std::string> InputSizeVars(const Function& main) {
  std::map<std::string, const Object*> vars;
  for (const Var& input : main->params) {
    if (!input.type().is_tensor()) continue;
    for (const PrimExpr& dim : input.type().shape()) {
      const auto* var = dim.as<loom::VarNode>();
      if (var == nullptr) continue;
      auto [it, fresh] = vars.emplace(var->name_hint, var);
      LOOM_CHECK_USER(fresh || it->second == var)
          << "Compile: the inputs have two different size variables named '" << var->name_hint
          << "'; give them distinct names";
    }
  }
  std::set<std::string> names;
  for (const auto& [name, var] : vars) names.insert(name);
  return names;
}

}  // namespace

CompiledModel Compile(const IRModule& module, const CompileOptions& options,
                      const CompileStageCallback& on_stage) {
  CheckOptions(module, options);
  const std::set<std::string> size_vars = InputSizeVars(module.main());
  for (const auto& [name, sizes] : options.dynamic_buckets) {
    std::string known;
    for (const std::string& var : size_vars) known += (known.empty() ? "'" : ", '") + var + "'";
    LOOM_CHECK_USER(size_vars.count(name))
        << "Compile: dynamic bucket '" << name << "' names no symbolic dimension of the model's "
        << "inputs; " << (known.empty() ? "it has none" : "they are " + known);
  }
  std::vector<SizeConstraint> constraints;
  for (const std::string& text : options.size_constraints) {
    constraints.push_back(ParseSizeConstraint(text));
    const SizeConstraint& constraint = constraints.back();
    LOOM_CHECK_USER(size_vars.count(constraint.var))
        << "Compile: size constraint '" << constraint.text << "' is on '" << constraint.var
        << "', no symbolic dimension of the model's inputs";
    auto bucket = options.dynamic_buckets.find(constraint.var);
    if (bucket == options.dynamic_buckets.end()) continue;
    for (int64_t size : bucket->second) {
      LOOM_CHECK_USER(constraint.Holds(size))
          << "Compile: dynamic bucket " << constraint.var << " = " << size
          << " violates the size constraint " << constraint.text;
    }
  }
  const bool symbolic =
      std::any_of(module.main()->params.begin(), module.main()->params.end(),
                  [](const Var& input) { return !input.type().ConstShape().has_value(); });
  // Symbolic inputs choose the VM already; a size read at run time needs it as well.
  const CallNode* sized_at_run_time = symbolic ? nullptr : FirstCallSizedAtRunTime(module.main());
  if (sized_at_run_time == nullptr && !symbolic) sized_at_run_time = FirstLoop(module.main());
  const bool vm = options.executor == "vm" ||
                  (options.executor == "auto" && (symbolic || sized_at_run_time != nullptr));
  // The graph executor's memory plan and calls are laid out for one shape per tensor.
  for (const Var& input : module.main()->params) {
    LOOM_CHECK_USER(vm || input.type().ConstShape().has_value())
        << "Compile: model input '" << input->name_hint << "' is " << input.type().str()
        << "; the graph executor needs constant shapes: bind its symbolic dimensions, or "
        << "compile for the virtual machine (executor \"vm\" or \"auto\")";
  }
  LOOM_CHECK_USER(vm || sized_at_run_time == nullptr)
      << "Compile: " << sized_at_run_time->Where()
      << (ops::LoopOf(*sized_at_run_time)
              ? " is a loop run at run time, which the virtual machine runs; the graph executor "
                "runs kernels in a fixed order"
              : " computes " + sized_at_run_time->checked_type.str() +
                    ", a size known only when the model runs; the graph executor needs constant "
                    "shapes")
      << ": compile for the virtual machine (executor \"vm\" or \"auto\")";
  Target target = Target::Parse(options.target);
  transform::PassContextScope scope(CompileContext(options));
  StageTimer timer(on_stage);
  // 1-3. The model's program; for the VM, one more per combination of the buckets' sizes
  // (the model with those sizes bound), which runs first when the inputs have them.
  std::vector<Program> programs;
  for (const std::map<std::string, int64_t>& when : BucketCombinations(options.dynamic_buckets)) {
    try {
      IRModule bound = RunPasses(module, {BindSizeVars(when)});
      programs.push_back(
          CompileProgram(bound, options, target, SpecializationPrefix(when), &timer));
    } catch (const Error& error) {
      LOOM_THROW << "Compile: specializing for the bucket " << BucketText(when) << ": "
                 << error.what();
    }
    programs.back().when = when;
  }
  programs.push_back(CompileProgram(module, options, target, "", &timer));
  const Program& general = programs.back();
  // The graph executor's static memory plan (the VM's, of the tensors whose sizes have
  // bounds, comes with its program; the others it allocates at the sizes a run gives).
  MemoryPlan plan;
  if (!vm) {
    plan = PlanMemory(general.graph.PlanProblem());
    CheckMemoryFits(static_cast<double>(plan.stats.planned_bytes),
                    "the memory plan of the model's tensors needs", options);
    timer.Done("memory plan");
  }
  // 4. Code generation (host and device kernels, every program's, in one module), the
  // weights and the program's text.
  CompiledModel model;
  loom::IRModule device_tir;
  for (const Program& top : programs) {
    top.ForEach([&](const Program& program) {
      for (const auto& [name, func] : program.lowered.tir.functions()) {
        model.kernels_tir.Add(name, func);
      }
      for (const auto& [name, func] : program.lowered.device_tir.functions()) {
        device_tir.Add(name, func);
      }
    });
  }
  std::vector<BuildPart> parts = {{model.kernels_tir, target.host()}};
  if (device_tir.size() > 0) parts.push_back({device_tir, target});
  for (const auto& [name, func] : device_tir.functions()) model.kernels_tir.Add(name, func);
  model.kernels = build(parts);
  timer.Done("codegen");
  std::vector<const ExecutionGraph*> graphs;
  for (const Program& top : programs) {
    top.ForEach([&](const Program& program) { graphs.push_back(&program.graph); });
  }
  std::vector<std::vector<size_t>> param_offsets;
  model.params = ParamsBlob(graphs, &param_offsets);
  model.executor = vm ? "vm" : "graph";
  if (vm) {
    std::vector<VmProgramPart> vm_parts;
    size_t next = 0;
    for (const Program& program : programs)
      vm_parts.push_back(VmPart(program, param_offsets, &next));
    model.graph_json = VmProgramJson(vm_parts, constraints, target.str(), options.precision,
                                     MemoryLimit(options), &plan.stats);
    CheckMemoryFits(static_cast<double>(plan.stats.planned_bytes),
                    "the memory plan of the tensors whose sizes have bounds needs", options);
  } else {
    model.graph_json = ExecutionGraphJson(general.graph, plan, param_offsets.front(), target.str(),
                                          options.precision, target.kind_def().device_type,
                                          target.kind_def().device_configuration
                                              ? target.kind_def().device_configuration(target)
                                              : "",
                                          general.placements);
  }
  model.placements = general.placements;
  model.memory = plan.stats;
  for (const Program& top : programs) {
    top.ForEach([&](const Program& program) {
      for (const ExecutionGraph::Kernel& kernel : program.graph.kernels) {
        if (!kernel.loop) model.kernel_names.push_back(kernel.func);
      }
    });
  }
  return model;
}

namespace {

// A 64-byte aligned copy of the model's weights, as kernels require of every tensor.
std::shared_ptr<uint8_t> AlignedParams(const CompiledModel& model) {
  constexpr std::align_val_t kAlignment{64};
  size_t size = model.params.size();
  std::shared_ptr<uint8_t> params(new (kAlignment) uint8_t[std::max<size_t>(size, 1)],
                                  [](uint8_t* p) { operator delete[](p, kAlignment); });
  if (size > 0) std::memcpy(params.get(), model.params.data(), size);
  return params;
}

}  // namespace

std::shared_ptr<const runtime::GraphModel> MakeGraphModel(const CompiledModel& model) {
  LOOM_CHECK_USER(model.executor != "vm")
      << "MakeGraphModel: the model was compiled for the virtual machine; use MakeExecutor";
  std::shared_ptr<uint8_t> params = AlignedParams(model);
  return runtime::MakeGraphModel(model.kernels, model.graph_json, params.get(), model.params.size(),
                                 params);
}

runtime::LoadedModel MakeLoadedModel(const CompiledModel& model) {
  if (model.executor != "vm") return runtime::LoadedModel(MakeGraphModel(model));
  std::shared_ptr<uint8_t> params = AlignedParams(model);
  return runtime::LoadedModel(runtime::MakeVmModel(model.kernels, model.graph_json, params.get(),
                                                   model.params.size(), params));
}

std::unique_ptr<runtime::Executor> MakeExecutor(const CompiledModel& model) {
  return MakeLoadedModel(model).NewExecutor();
}

void ExportModel(const CompiledModel& model, const std::string& path) {
  const uint64_t unsealed = 0;  // SealArtifact writes the digest of the file as linked
  ExportLibrary(model.kernels, path,
                {{"loom_graph_json", model.graph_json.data(), model.graph_json.size()},
                 {"loom_params", model.params.data(), model.params.size()},
                 {"loom_digest", &unsealed, sizeof(unsealed)}});
  runtime::SealArtifact(path);
}

}  // namespace loom::graph
