#include "graph/codegen_vm.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "graph/vm_memory_plan.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"

namespace loom::graph {
namespace {

using nlohmann::ordered_json;

// Size variables: the inputs' symbolic dimensions in the order the inputs give them, then the
// sizes the program reads from tensors (dims_of_value) in the order it reads them.
class SizeVars {
 public:
  explicit SizeVars(const ExecutionGraph& graph) {
    for (const ExecutionGraph::IO& input : graph.inputs) {
      for (const PrimExpr& dim : graph.entries[input.entry].dims) {
        const auto* var = dim.as<loom::VarNode>();
        if (var != nullptr && index_.emplace(var, names_.size()).second) {
          names_.push_back(var->name_hint);
        }
      }
    }
  }

  const std::vector<std::string>& names() const { return names_; }

  // A variable of the program's own (a loop's trip count and iteration number), which no
  // size of a tensor's type names.
  // A loop written in several programs (buckets) gets one per program, told apart by a
  // suffix.
  size_t Fresh(const std::string& name) {
    std::string unique = name;
    for (int copy = 1; std::find(names_.begin(), names_.end(), unique) != names_.end(); ++copy) {
      unique = name + "#" + std::to_string(copy);
    }
    names_.push_back(unique);
    return names_.size() - 1;
  }

  // The number of a size the program reads from a tensor.
  size_t Read(const loom::Var& var) {
    auto [it, fresh] = index_.emplace(var.get(), names_.size());
    if (fresh) names_.push_back(var->name_hint);
    return it->second;
  }

  // `size` as the program writes it: an integer, {"var": i}, or {"op": ..., "args": [a, b]}.
  ordered_json Expr(const PrimExpr& size, const std::string& entry) const {
    int64_t value = 0;
    if (IsConstInt(size, &value)) return value;
    if (const auto* var = size.as<loom::VarNode>()) {
      auto it = index_.find(var);
      LOOM_CHECK_USER(it != index_.end())
          << "the size of '" << entry << "' depends on '" << var->name_hint
          << "', neither a dimension of the model's inputs nor a size read before it; the VM "
          << "computes sizes from those only";
      return {{"var", it->second}};
    }
    if (const auto* cast = size.as<CastNode>()) return Expr(cast->value, entry);
    static const std::map<NodeKind, const char*> kOps = {{NodeKind::Add, "add"},
                                                         {NodeKind::Sub, "sub"},
                                                         {NodeKind::Mul, "mul"},
                                                         {NodeKind::FloorDiv, "floordiv"},
                                                         {NodeKind::FloorMod, "floormod"},
                                                         {NodeKind::Min, "min"},
                                                         {NodeKind::Max, "max"}};
    auto op = kOps.find(size.kind());
    LOOM_CHECK_USER(op != kOps.end())
        << "the size of '" << entry << "' is computed in a way the VM does not evaluate (" << size
        << "); it computes sizes with +, -, *, floor division and remainder, min, max";
    ordered_json args = ordered_json::array();
    ForEachOperand(size, [&](const PrimExpr& operand) { args.push_back(Expr(operand, entry)); });
    return {{"op", op->second}, {"args", std::move(args)}};
  }

 private:
  template <typename Visit>
  static void ForEachOperand(const PrimExpr& e, const Visit& visit) {
    switch (e.kind()) {
#define LOOM_BINARY(Kind)                  \
  case NodeKind::Kind: {                   \
    const auto* node = e.as<Kind##Node>(); \
    visit(node->a);                        \
    visit(node->b);                        \
    break;                                 \
  }
      LOOM_BINARY(Add)
      LOOM_BINARY(Sub)
      LOOM_BINARY(Mul)
      LOOM_BINARY(FloorDiv)
      LOOM_BINARY(FloorMod)
      LOOM_BINARY(Min)
      LOOM_BINARY(Max)
#undef LOOM_BINARY
      default:
        LOOM_ICHECK(false) << "ForEachOperand of a non-binary size";
    }
  }

  std::map<const Object*, size_t> index_;
  std::vector<std::string> names_;
};

// {"op": name, "args": [a, b]}
ordered_json Operation(const char* name, ordered_json a, ordered_json b) {
  ordered_json args = ordered_json::array();
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return {{"op", name}, {"args", std::move(args)}};
}

ordered_json SizeVar(size_t var) { return {{"var", var}}; }

// Writes one program's instructions: its weights loaded, then per kernel its outputs
// allocated, the kernel invoked, and the intermediates it read last released; a loop's body
// program inside the loop's own instructions. Entry e of the part's graph lives in register
// reg_of[e]. An intermediate whose size has a bound is allocated in a storage of the memory
// plan: each program's storages from 0 on (only one runs), a loop body's after those of the
// program running it (two loops of one program share theirs).
class ProgramWriter {
 public:
  ProgramWriter(SizeVars* vars, size_t first_register, int64_t max_allocation_bytes)
      : vars_(*vars), registers_(first_register), max_allocation_bytes_(max_allocation_bytes) {}

  ordered_json Shape(const ExecutionGraph::Entry& entry) const {
    ordered_json dims = ordered_json::array();
    for (const PrimExpr& dim : entry.dims) dims.push_back(vars_.Expr(dim, entry.name));
    return dims;
  }

  int NewRegister() { return static_cast<int>(registers_++); }
  size_t registers() const { return registers_; }
  ordered_json& code() { return code_; }
  ordered_json TakeCode() { return std::move(code_); }
  ordered_json TakeKernels() { return std::move(kernels_); }
  ordered_json TakeParams() { return std::move(params_); }
  // Per storage of the memory plan, its bytes: the most any program placed there needs.
  const std::vector<int64_t>& storages() const { return storages_; }

  void Write(const VmProgramPart& part, const std::vector<int>& reg_of,
             const std::vector<SizeConstraint>& constraints) {
    SizeBounds bounds(*part.graph, constraints);
    const Placement placed = Place(*part.graph, &bounds, 0);
    WriteWeights(part, reg_of);
    WriteKernels(part, reg_of, placed);
  }

 private:
  // A program's memory plan, its storages numbered from `base` on.
  struct Placement {
    VmMemoryPlan plan;
    size_t base = 0;
    SizeBounds* bounds = nullptr;  // the sizes' bounds where the program runs
    // Storage of entry e, or nullopt (from the pool when the program runs).
    std::optional<size_t> StorageOf(size_t e) const {
      if (plan.storage_of[e] < 0) return std::nullopt;
      return base + static_cast<size_t>(plan.storage_of[e]);
    }
    size_t end() const { return base + plan.storage_bytes.size(); }
  };

  Placement Place(const ExecutionGraph& graph, SizeBounds* bounds, size_t base) {
    Placement placed{PlanVmMemory(graph, bounds, max_allocation_bytes_), base, bounds};
    if (storages_.size() < placed.end()) storages_.resize(placed.end(), 0);
    for (size_t s = 0; s < placed.plan.storage_bytes.size(); ++s) {
      storages_[base + s] = std::max(storages_[base + s], placed.plan.storage_bytes[s]);
    }
    return placed;
  }

  // The part's weights loaded (before a loop, for its body: the views stay for every
  // iteration).
  void WriteWeights(const VmProgramPart& part, const std::vector<int>& reg_of) {
    const ExecutionGraph& graph = *part.graph;
    std::vector<int> param_of = ParamsOf(part);
    size_t weight = 0;
    for (size_t e = 0; e < graph.entries.size(); ++e) {
      const ExecutionGraph::Entry& entry = graph.entries[e];
      if (entry.kind != MemoryPlanProblem::EntryKind::kParam) continue;
      code_.push_back({{"op", "load_param"},
                       {"dst", reg_of[e]},
                       {"param", param_of.at(weight++)},
                       {"dtype", entry.dtype.str()},
                       {"shape", entry.shape}});
    }
  }

  void WriteKernels(const VmProgramPart& part, const std::vector<int>& reg_of,
                    const Placement& placed) {
    const ExecutionGraph& graph = *part.graph;
    // Each intermediate is released after the last kernel that reads it.
    std::vector<int> last_read(graph.entries.size(), -1);
    for (size_t k = 0; k < graph.kernels.size(); ++k) {
      for (int arg : graph.kernels[k].args) {
        last_read[static_cast<size_t>(arg)] = static_cast<int>(k);
      }
    }
    for (size_t k = 0; k < graph.kernels.size(); ++k) {
      const ExecutionGraph::Kernel& kernel = graph.kernels[k];
      std::vector<int> args;
      for (int arg : kernel.args) args.push_back(reg_of[static_cast<size_t>(arg)]);
      if (kernel.loop) {
        WriteLoop(graph, kernel, args, BodyOf(part, kernel.loop->body), placed);
      } else {
        WriteInvoke(graph, kernel, args, placed);
      }
      std::vector<int> done;
      for (int arg : kernel.args) {
        const ExecutionGraph::Entry& entry = graph.entries[static_cast<size_t>(arg)];
        bool intermediate = entry.kind == MemoryPlanProblem::EntryKind::kIntermediate;
        if (intermediate && last_read[static_cast<size_t>(arg)] == static_cast<int>(k) &&
            std::find(done.begin(), done.end(), arg) == done.end()) {
          code_.push_back({{"op", "release"}, {"register", reg_of[static_cast<size_t>(arg)]}});
          done.push_back(arg);
        }
      }
    }
  }

  static const VmProgramPart& BodyOf(const VmProgramPart& part, const std::string& name) {
    for (const VmProgramPart& body : part.bodies) {
      if (body.body == name) return body;
    }
    LOOM_ICHECK(false) << "VmProgramJson: no program for loop body '" << name << "'";
    return part;
  }

  // One "params" item per distinct weight (the parts' offsets into one blob coincide where
  // they hold the same bytes); the item of each of the part's weights.
  std::vector<int> ParamsOf(const VmProgramPart& part) {
    std::vector<int> param_of;
    size_t weight = 0;
    for (const ExecutionGraph::Entry& entry : part.graph->entries) {
      if (entry.kind != MemoryPlanProblem::EntryKind::kParam) continue;
      size_t offset = part.param_offsets.at(weight++);
      auto [it, fresh] = param_at_offset_.emplace(offset, static_cast<int>(params_.size()));
      if (fresh) {
        params_.push_back(
            {{"name", entry.name}, {"offset", offset}, {"bytes", entry.constant.NumBytes()}});
      }
      param_of.push_back(it->second);
    }
    return param_of;
  }

  void WriteInvoke(const ExecutionGraph& graph, const ExecutionGraph::Kernel& kernel,
                   const std::vector<int>& args, const Placement& placed) {
    LOOM_CHECK_USER(!kernel.on_device)
        << "kernel '" << kernel.name << "' runs on a device; the VM runs host kernels only "
        << "(compile a model of symbolic dimensions for a CPU target)";
    if (kernel.reads_sizes) {
      const std::vector<loom::Var>& read = kernel.reads_sizes->vars;
      for (size_t i = 0; i < read.size(); ++i) {
        ordered_json load = {{"op", "load_size"},
                             {"var", vars_.Read(read[i])},
                             {"src", args[static_cast<size_t>(kernel.value_arg)]},
                             {"index", i},
                             {"name", kernel.name}};
        if (kernel.reads_sizes->upper.defined()) {
          load["upper"] = vars_.Expr(kernel.reads_sizes->upper, kernel.name);
        }
        code_.push_back(std::move(load));
      }
    }
    for (size_t a = kernel.args.size() - static_cast<size_t>(kernel.num_outputs);
         a < kernel.args.size(); ++a) {
      const size_t e = static_cast<size_t>(kernel.args[a]);
      const ExecutionGraph::Entry& out = graph.entries[e];
      ordered_json alloc = {
          {"op", "alloc"}, {"dst", args[a]}, {"dtype", out.dtype.str()}, {"shape", Shape(out)}};
      if (std::optional<size_t> storage = placed.StorageOf(e)) alloc["storage"] = *storage;
      code_.push_back(std::move(alloc));
    }
    code_.push_back({{"op", "invoke"}, {"kernel", kernels_.size()}, {"args", args}});
    kernels_.push_back({{"func", kernel.func}, {"name", kernel.name}});
  }

  // A loop: its state in registers of its own (the carried values copied in, the scan outputs
  // stacked in buffers of the trip count's rows), the body's program run while the
  // iteration number is below the trip count and the condition holds, each iteration's carried
  // results taking the state's place; at the end the state and the buffers' first rows
  // become the loop's results.
  void WriteLoop(const ExecutionGraph& graph, const ExecutionGraph::Kernel& kernel,
                 const std::vector<int>& args, const VmProgramPart& body, const Placement& outer) {
    const ops::LoopAttrs& loop = *kernel.loop;
    const ExecutionGraph& inner = *body.graph;
    const size_t carried = static_cast<size_t>(loop.num_carried);
    const size_t scans = loop.scan_shapes.size();
    const size_t outputs_at = args.size() - carried - scans;
    const size_t captured = outputs_at - 2 - carried;
    LOOM_ICHECK(inner.inputs.size() == 2 + carried + captured &&
                inner.outputs.size() == 1 + carried + scans)
        << "VmProgramJson: loop '" << kernel.name << "' and its body disagree on their values";
    auto entry_of = [&](size_t arg) -> const ExecutionGraph::Entry& {
      return graph.entries[static_cast<size_t>(kernel.args[arg])];
    };
    const size_t trip = vars_.Fresh(kernel.name + ".trip_count");
    const size_t cond = vars_.Fresh(kernel.name + ".condition");
    const size_t iteration = vars_.Fresh(kernel.name + ".iteration");
    const size_t count = vars_.Read(loop.iterations);  // the scan outputs' first dimension
    code_.push_back({{"op", "load_size"},
                     {"var", trip},
                     {"src", args[0]},
                     {"index", 0},
                     {"name", kernel.name + "'s trip count"}});
    code_.push_back({{"op", "load_size"},
                     {"var", cond},
                     {"src", args[1]},
                     {"index", 0},
                     {"name", kernel.name + "'s condition"}});
    code_.push_back({{"op", "set_size"}, {"var", iteration}, {"value", 0}});
    // The body's inputs: the iteration number, the condition (true whenever it runs), the
    // state, the captured values where the loop's arguments are.
    std::vector<int> reg_of(inner.entries.size(), -1);
    const int iteration_reg = NewRegister(), cond_reg = NewRegister();
    code_.push_back({{"op", "alloc"},
                     {"dst", iteration_reg},
                     {"dtype", "int64"},
                     {"shape", ordered_json::array()}});
    code_.push_back(
        {{"op", "alloc"}, {"dst", cond_reg}, {"dtype", "bool"}, {"shape", ordered_json::array()}});
    code_.push_back({{"op", "write_size"}, {"dst", cond_reg}, {"value", 1}});
    reg_of[static_cast<size_t>(inner.inputs[0].entry)] = iteration_reg;
    reg_of[static_cast<size_t>(inner.inputs[1].entry)] = cond_reg;
    std::vector<int> state(carried);
    for (size_t k = 0; k < carried; ++k) {
      state[k] = NewRegister();
      const ExecutionGraph::Entry& initial = entry_of(2 + k);
      code_.push_back({{"op", "alloc"},
                       {"dst", state[k]},
                       {"dtype", initial.dtype.str()},
                       {"shape", Shape(initial)}});
      code_.push_back({{"op", "copy"}, {"dst", state[k]}, {"src", args[2 + k]}});
      reg_of[static_cast<size_t>(inner.inputs[2 + k].entry)] = state[k];
    }
    for (size_t c = 0; c < captured; ++c) {
      reg_of[static_cast<size_t>(inner.inputs[2 + carried + c].entry)] = args[2 + carried + c];
    }
    for (int& reg : reg_of) {
      if (reg < 0) reg = NewRegister();
    }
    // Scan buffers of the trip count's rows (at most the iteration limit). A slice dimension
    // only a run knows is 0 until the first iteration gives it, and the buffer empty.
    const ordered_json rows = Operation("min", SizeVar(trip), loop.max_iterations);
    std::vector<int> stacked(scans);
    std::vector<std::vector<size_t>> slice_vars(scans);  // per dimension, or SIZE_MAX
    auto buffer_shape = [&](size_t j) {
      ordered_json shape = Shape(entry_of(outputs_at + carried + j));
      shape[0] = rows;
      return shape;
    };
    for (size_t j = 0; j < scans; ++j) {
      stacked[j] = NewRegister();
      const ExecutionGraph::Entry& result = entry_of(outputs_at + carried + j);
      bool sized_by_a_run = false;
      for (size_t d = 1; d < result.dims.size(); ++d) {
        const auto* var = result.dims[d].as<loom::VarNode>();
        slice_vars[j].push_back(var == nullptr ? SIZE_MAX
                                               : vars_.Read(Downcast<loom::Var>(result.dims[d])));
        if (var == nullptr) continue;
        code_.push_back({{"op", "set_size"}, {"var", slice_vars[j].back()}, {"value", 0}});
        sized_by_a_run = true;
      }
      ordered_json shape = buffer_shape(j);
      if (sized_by_a_run) shape[0] = 0;
      code_.push_back(
          {{"op", "alloc"}, {"dst", stacked[j]}, {"dtype", result.dtype.str()}, {"shape", shape}});
    }
    WriteWeights(body, reg_of);
    const size_t head = code_.size();
    code_.push_back({{"op", "if"},
                     {"cond", Operation("mul", Operation("lt", SizeVar(iteration), SizeVar(trip)),
                                        Operation("lt", 0, SizeVar(cond)))}});
    code_.push_back(
        {{"op", "check"},
         {"cond", Operation("lt", SizeVar(iteration), loop.max_iterations)},
         {"message", kernel.name + ": the loop does not end within " +
                         std::to_string(loop.max_iterations) +
                         " iterations, the limit it was compiled with; raise it with "
                         "--max-loop-iterations (ImportOptions::max_loop_iterations) if the "
                         "loop does end"}});
    code_.push_back({{"op", "write_size"}, {"dst", iteration_reg}, {"value", SizeVar(iteration)}});
    WriteKernels(body, reg_of, Place(inner, outer.bounds, outer.end()));
    auto output_reg = [&](size_t o) { return reg_of[static_cast<size_t>(inner.outputs[o].entry)]; };
    auto fresh = [&](size_t o) {
      // A result a body kernel computed (not an input or a weight it hands back).
      MemoryPlanProblem::EntryKind kind =
          inner.entries[static_cast<size_t>(inner.outputs[o].entry)].kind;
      return kind == MemoryPlanProblem::EntryKind::kOutput;
    };
    code_.push_back({{"op", "load_size"},
                     {"var", cond},
                     {"src", output_reg(0)},
                     {"index", 0},
                     {"name", kernel.name + "'s condition"}});
    for (size_t j = 0; j < scans; ++j) {
      const ordered_json got =
          Shape(inner.entries[static_cast<size_t>(inner.outputs[1 + carried + j].entry)]);
      const std::vector<size_t>& known = slice_vars[j];
      if (std::any_of(known.begin(), known.end(), [](size_t v) { return v != SIZE_MAX; })) {
        // The first iteration's slice sizes the buffer; the others' must agree.
        const size_t branch = code_.size();
        code_.push_back({{"op", "if"}, {"cond", Operation("eq", SizeVar(iteration), 0)}});
        for (size_t d = 0; d < known.size(); ++d) {
          if (known[d] != SIZE_MAX) {
            code_.push_back({{"op", "set_size"}, {"var", known[d]}, {"value", got[d]}});
          }
        }
        code_.push_back({{"op", "release"}, {"register", stacked[j]}});
        code_.push_back({{"op", "alloc"},
                         {"dst", stacked[j]},
                         {"dtype", entry_of(outputs_at + carried + j).dtype.str()},
                         {"shape", buffer_shape(j)}});
        code_[branch]["else"] = code_.size();
        for (size_t d = 0; d < known.size(); ++d) {
          if (known[d] == SIZE_MAX) continue;
          code_.push_back({{"op", "check"},
                           {"cond", Operation("eq", got[d], SizeVar(known[d]))},
                           {"message", kernel.name + ": scan output " + std::to_string(j) +
                                           "'s slices differ in dimension " + std::to_string(d) +
                                           " between iterations; they are stacked, so they "
                                           "must agree"}});
        }
      }
      code_.push_back({{"op", "store_row"},
                       {"dst", stacked[j]},
                       {"src", output_reg(1 + carried + j)},
                       {"row", SizeVar(iteration)}});
    }
    // A carried value's dimension only a run knows must be the state's.
    for (size_t k = 0; k < carried; ++k) {
      const ordered_json want = Shape(entry_of(2 + k));
      const ordered_json got =
          Shape(inner.entries[static_cast<size_t>(inner.outputs[1 + k].entry)]);
      for (size_t d = 0; d < want.size(); ++d) {
        if (got[d] == want[d]) continue;
        code_.push_back({{"op", "check"},
                         {"cond", Operation("eq", got[d], want[d])},
                         {"message", kernel.name + ": loop-carried value " + std::to_string(k) +
                                         " changes its dimension " + std::to_string(d) +
                                         " in an iteration; a loop keeps each carried value's "
                                         "shape"}});
      }
    }
    // The next state, gathered before any of it is replaced (a body may swap carried values):
    // a result the body computed is moved, anything else copied.
    std::map<int, int> moved;  // body result register -> where it went
    std::vector<int> next(carried, -1);
    for (size_t k = 0; k < carried; ++k) {
      const int src = output_reg(1 + k);
      if (src == state[k]) continue;
      next[k] = NewRegister();
      auto done = moved.find(src);
      if (fresh(1 + k) && done == moved.end()) {
        code_.push_back({{"op", "move"}, {"dst", next[k]}, {"src", src}});
        moved[src] = next[k];
        continue;
      }
      const ExecutionGraph::Entry& value = entry_of(2 + k);
      code_.push_back({{"op", "alloc"},
                       {"dst", next[k]},
                       {"dtype", value.dtype.str()},
                       {"shape", Shape(value)}});
      code_.push_back(
          {{"op", "copy"}, {"dst", next[k]}, {"src", done == moved.end() ? src : done->second}});
    }
    std::set<int> released;
    for (size_t o = 0; o < inner.outputs.size(); ++o) {
      const int reg = output_reg(o);
      if (fresh(o) && !moved.count(reg) && released.insert(reg).second) {
        code_.push_back({{"op", "release"}, {"register", reg}});
      }
    }
    for (size_t k = 0; k < carried; ++k) {
      if (next[k] < 0) continue;
      code_.push_back({{"op", "release"}, {"register", state[k]}});
      code_.push_back({{"op", "move"}, {"dst", state[k]}, {"src", next[k]}});
    }
    code_.push_back({{"op", "set_size"},
                     {"var", iteration},
                     {"value", Operation("add", SizeVar(iteration), 1)}});
    code_.push_back({{"op", "goto"}, {"target", head}});
    code_[head]["else"] = code_.size();
    code_.push_back({{"op", "set_size"}, {"var", count}, {"value", SizeVar(iteration)}});
    for (size_t k = 0; k < carried; ++k) {
      code_.push_back({{"op", "move"}, {"dst", args[outputs_at + k]}, {"src", state[k]}});
    }
    for (size_t j = 0; j < scans; ++j) {
      const ExecutionGraph::Entry& result = entry_of(outputs_at + carried + j);
      code_.push_back({{"op", "move"},
                       {"dst", args[outputs_at + carried + j]},
                       {"src", stacked[j]},
                       {"shape", Shape(result)}});
    }
    code_.push_back({{"op", "release"}, {"register", iteration_reg}});
    code_.push_back({{"op", "release"}, {"register", cond_reg}});
  }

  SizeVars& vars_;
  size_t registers_;
  int64_t max_allocation_bytes_;
  std::vector<int64_t> storages_;
  ordered_json code_ = ordered_json::array();
  ordered_json kernels_ = ordered_json::array();
  ordered_json params_ = ordered_json::array();
  std::map<size_t, int> param_at_offset_;
};

// The condition under which a specialized program runs: each bound variable equal to its
// value (a product of comparisons, 1 when all hold).
ordered_json BucketCondition(const std::map<std::string, int64_t>& when,
                             const std::vector<std::string>& var_names) {
  ordered_json cond;
  for (const auto& [name, value] : when) {
    auto it = std::find(var_names.begin(), var_names.end(), name);
    LOOM_ICHECK(it != var_names.end()) << "bucket variable '" << name << "' is no size variable";
    ordered_json equal = Operation("eq", {{"var", it - var_names.begin()}}, value);
    cond = cond.is_null() ? std::move(equal) : Operation("mul", std::move(cond), std::move(equal));
  }
  return cond;
}

// The size expression that is 1 where `constraint` holds (on variable number `var`).
ordered_json ConstraintCondition(const SizeConstraint& constraint, size_t var) {
  ordered_json x = {{"var", var}};
  if (constraint.modulus > 0) x = Operation("floormod", std::move(x), constraint.modulus);
  const int64_t v = constraint.value;
  if (constraint.op == "==") return Operation("eq", std::move(x), v);
  if (constraint.op == "<") return Operation("lt", std::move(x), v);
  if (constraint.op == "<=") return Operation("lt", std::move(x), v + 1);
  if (constraint.op == ">") return Operation("lt", v, std::move(x));
  return Operation("lt", v - 1, std::move(x));  // >=
}

}  // namespace

std::string BucketText(const std::map<std::string, int64_t>& when) {
  std::string text;
  for (const auto& [name, size] : when) {
    text += (text.empty() ? "" : ", ") + name + " = " + std::to_string(size);
  }
  return text;
}

std::string VmProgramJson(const std::vector<VmProgramPart>& parts,
                          const std::vector<SizeConstraint>& constraints, const std::string& target,
                          const std::string& precision, int64_t max_allocation_bytes,
                          MemoryPlanStats* stats) {
  LOOM_ICHECK(!parts.empty() && parts.back().when.empty())
      << "VmProgramJson: the general program comes last";
  const ExecutionGraph& general = *parts.back().graph;
  SizeVars vars(general);
  ordered_json doc;
  doc["format"] = "loom-vm-1";
  doc["target"] = target;
  doc["precision"] = precision;
  doc["max_allocation_bytes"] = max_allocation_bytes;
  doc["size_vars"] = nullptr;  // below: the inputs' and those the program reads
  ordered_json declared = ordered_json::array();
  for (const SizeConstraint& constraint : constraints) {
    auto it = std::find(vars.names().begin(), vars.names().end(), constraint.var);
    LOOM_ICHECK(it != vars.names().end()) << "constraint on '" << constraint.var << "'";
    const size_t var = static_cast<size_t>(it - vars.names().begin());
    declared.push_back(
        {{"var", var}, {"text", constraint.text}, {"cond", ConstraintCondition(constraint, var)}});
  }
  doc["constraints"] = std::move(declared);

  // Registers: the general program's entries first (its inputs and outputs are the model's),
  // then each specialization's, its inputs shared, and the loops'.
  ProgramWriter writer(&vars, general.entries.size(), max_allocation_bytes);
  // The model's inputs and outputs: the general program's entries (their registers), with
  // dtype and sizes.
  auto ios = [&](const std::vector<ExecutionGraph::IO>& list) {
    ordered_json items = ordered_json::array();
    for (const ExecutionGraph::IO& io : list) {
      const ExecutionGraph::Entry& entry = general.entries[io.entry];
      items.push_back({{"name", io.name},
                       {"register", io.entry},
                       {"dtype", entry.dtype.str()},
                       {"shape", writer.Shape(entry)}});
    }
    return items;
  };
  doc["inputs"] = ios(general.inputs);

  ordered_json& code = writer.code();
  for (const VmProgramPart& part : parts) {
    const ExecutionGraph& graph = *part.graph;
    if (part.when.empty()) {
      std::vector<int> reg_of(graph.entries.size());
      for (size_t e = 0; e < reg_of.size(); ++e) reg_of[e] = static_cast<int>(e);
      writer.Write(part, reg_of, constraints);
      continue;
    }
    // if (seq == 16) { its program; its outputs moved to the model's; goto end }
    LOOM_ICHECK(graph.inputs.size() == general.inputs.size() &&
                graph.outputs.size() == general.outputs.size())
        << "VmProgramJson: a specialization has other inputs or outputs";
    std::vector<int> reg_of(graph.entries.size(), -1);
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      LOOM_ICHECK(graph.inputs[i].name == general.inputs[i].name);
      reg_of[graph.inputs[i].entry] = general.inputs[i].entry;
    }
    for (int& reg : reg_of) {
      if (reg < 0) reg = writer.NewRegister();
    }
    const size_t branch = code.size();
    code.push_back({{"op", "if"}, {"cond", BucketCondition(part.when, vars.names())}});
    writer.Write(part, reg_of, constraints);
    std::map<int, int> moved;  // source register -> the output register it went to
    for (size_t o = 0; o < graph.outputs.size(); ++o) {
      int src = reg_of[graph.outputs[o].entry], dst = general.outputs[o].entry;
      if (src == dst) continue;
      auto [it, fresh] = moved.emplace(src, dst);
      LOOM_CHECK_USER(fresh || it->second == dst)
          << "the program specialized for " << BucketText(part.when)
          << " returns one tensor as outputs the general program computes apart; compile "
          << "without dynamic buckets";
      if (fresh) code.push_back({{"op", "move"}, {"dst", dst}, {"src", src}});
    }
    code.push_back({{"op", "goto"}, {"target", -1}});  // the end, set below
    code[branch]["else"] = code.size();
  }
  const size_t end_of_program = code.size();
  for (ordered_json& insn : code) {
    if (insn["op"] == "goto" && insn["target"] == -1) insn["target"] = end_of_program;
  }
  doc["size_vars"] = vars.names();
  doc["registers"] = writer.registers();
  doc["storages"] = writer.storages();
  if (stats != nullptr) {
    *stats = MemoryPlanStats{};
    for (int64_t bytes : writer.storages()) stats->planned_bytes += bytes;
    stats->num_storages = static_cast<int>(writer.storages().size());
  }
  doc["params"] = writer.TakeParams();
  doc["kernels"] = writer.TakeKernels();
  doc["instructions"] = writer.TakeCode();
  doc["outputs"] = ios(general.outputs);
  return doc.dump(1);
}

}  // namespace loom::graph
