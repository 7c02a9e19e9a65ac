#include "graph/codegen_vm.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

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

// Writes one program's instructions: its weights loaded, then per kernel its outputs
// allocated, the kernel invoked, and the intermediates it read last released. Entry e of
// `graph` lives in register reg_of[e]; weight entries load params[param_of(entry)].
class ProgramWriter {
 public:
  ProgramWriter(SizeVars* vars, ordered_json* code, ordered_json* kernels)
      : vars_(*vars), code_(*code), kernels_(*kernels) {}

  ordered_json Shape(const ExecutionGraph::Entry& entry) const {
    ordered_json dims = ordered_json::array();
    for (const PrimExpr& dim : entry.dims) dims.push_back(vars_.Expr(dim, entry.name));
    return dims;
  }

  void Write(const ExecutionGraph& graph, const std::vector<int>& reg_of,
             const std::vector<int>& param_of) {
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
    // Each intermediate is released after the last kernel that reads it.
    std::vector<int> last_read(graph.entries.size(), -1);
    for (size_t k = 0; k < graph.kernels.size(); ++k) {
      for (int arg : graph.kernels[k].args) {
        last_read[static_cast<size_t>(arg)] = static_cast<int>(k);
      }
    }
    for (size_t k = 0; k < graph.kernels.size(); ++k) {
      const ExecutionGraph::Kernel& kernel = graph.kernels[k];
      LOOM_CHECK_USER(!kernel.on_device)
          << "kernel '" << kernel.name << "' runs on a device; the VM runs host kernels only "
          << "(compile a model of symbolic dimensions for a CPU target)";
      ordered_json args = ordered_json::array();
      for (int arg : kernel.args) args.push_back(reg_of[static_cast<size_t>(arg)]);
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
        const ExecutionGraph::Entry& out = graph.entries[static_cast<size_t>(kernel.args[a])];
        code_.push_back(
            {{"op", "alloc"}, {"dst", args[a]}, {"dtype", out.dtype.str()}, {"shape", Shape(out)}});
      }
      code_.push_back({{"op", "invoke"}, {"kernel", kernels_.size()}, {"args", args}});
      kernels_.push_back({{"func", kernel.func}, {"name", kernel.name}});
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

 private:
  SizeVars& vars_;
  ordered_json& code_;
  ordered_json& kernels_;
};

// {"op": name, "args": [a, b]}
ordered_json Operation(const char* name, ordered_json a, ordered_json b) {
  ordered_json args = ordered_json::array();
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return {{"op", name}, {"args", std::move(args)}};
}

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
                          const std::string& precision, int64_t max_allocation_bytes) {
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

  ordered_json code = ordered_json::array(), kernels = ordered_json::array();
  ProgramWriter writer(&vars, &code, &kernels);
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

  // One "params" item per distinct weight (the parts' offsets into one blob coincide where
  // they hold the same bytes).
  ordered_json params = ordered_json::array();
  std::map<size_t, int> param_at_offset;
  auto params_of = [&](const VmProgramPart& part) {
    std::vector<int> param_of;
    size_t weight = 0;
    for (const ExecutionGraph::Entry& entry : part.graph->entries) {
      if (entry.kind != MemoryPlanProblem::EntryKind::kParam) continue;
      size_t offset = part.param_offsets.at(weight++);
      auto [it, fresh] = param_at_offset.emplace(offset, static_cast<int>(params.size()));
      if (fresh) {
        params.push_back(
            {{"name", entry.name}, {"offset", offset}, {"bytes", entry.constant.NumBytes()}});
      }
      param_of.push_back(it->second);
    }
    return param_of;
  };

  // Registers: the general program's entries first (its inputs and outputs are the model's),
  // then each specialization's, its inputs shared.
  size_t registers = general.entries.size();
  for (const VmProgramPart& part : parts) {
    const ExecutionGraph& graph = *part.graph;
    if (part.when.empty()) {
      std::vector<int> reg_of(graph.entries.size());
      for (size_t e = 0; e < reg_of.size(); ++e) reg_of[e] = static_cast<int>(e);
      writer.Write(graph, reg_of, params_of(part));
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
      if (reg < 0) reg = static_cast<int>(registers++);
    }
    const size_t branch = code.size();
    code.push_back({{"op", "if"}, {"cond", BucketCondition(part.when, vars.names())}});
    writer.Write(graph, reg_of, params_of(part));
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
  for (ordered_json& insn : code) {
    if (insn["op"] == "goto") insn["target"] = code.size();
  }
  doc["size_vars"] = vars.names();
  doc["registers"] = registers;
  doc["params"] = std::move(params);
  doc["kernels"] = std::move(kernels);
  doc["instructions"] = std::move(code);
  doc["outputs"] = ios(general.outputs);
  return doc.dump(1);
}

}  // namespace loom::graph
