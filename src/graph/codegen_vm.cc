#include "graph/codegen_vm.h"

#include <map>
#include <nlohmann/json.hpp>

#include "loom/ir/printer.h"
#include "loom/support/error.h"

namespace loom::graph {
namespace {

using nlohmann::ordered_json;

// Size variables (the inputs' symbolic dimensions) numbered in the order the inputs give them.
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

  // `size` as the program writes it: an integer, {"var": i}, or {"op": ..., "args": [a, b]}.
  ordered_json Expr(const PrimExpr& size, const std::string& entry) const {
    int64_t value = 0;
    if (IsConstInt(size, &value)) return value;
    if (const auto* var = size.as<loom::VarNode>()) {
      auto it = index_.find(var);
      LOOM_CHECK_USER(it != index_.end())
          << "the size of '" << entry << "' depends on '" << var->name_hint
          << "', which is no dimension of the model's inputs; the VM computes sizes from the "
          << "inputs' dimensions only";
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

}  // namespace

std::string VmProgramJson(const ExecutionGraph& graph, const std::vector<size_t>& param_offsets,
                          const std::string& target, const std::string& precision,
                          int64_t max_allocation_bytes) {
  SizeVars vars(graph);
  auto shape_of = [&](const ExecutionGraph::Entry& entry) {
    ordered_json dims = ordered_json::array();
    for (const PrimExpr& dim : entry.dims) dims.push_back(vars.Expr(dim, entry.name));
    return dims;
  };
  ordered_json doc;
  doc["format"] = "loom-vm-1";
  doc["target"] = target;
  doc["precision"] = precision;
  doc["max_allocation_bytes"] = max_allocation_bytes;
  doc["size_vars"] = vars.names();
  doc["registers"] = graph.entries.size();  // one per entry

  ordered_json inputs = ordered_json::array();
  for (const ExecutionGraph::IO& io : graph.inputs) {
    const ExecutionGraph::Entry& entry = graph.entries[io.entry];
    inputs.push_back({{"name", io.name},
                      {"register", io.entry},
                      {"dtype", entry.dtype.str()},
                      {"shape", shape_of(entry)}});
  }
  doc["inputs"] = std::move(inputs);

  // Each intermediate is released after the last kernel that reads it.
  std::vector<int> last_read(graph.entries.size(), -1);
  for (size_t k = 0; k < graph.kernels.size(); ++k) {
    for (int arg : graph.kernels[k].args) last_read[static_cast<size_t>(arg)] = static_cast<int>(k);
  }
  ordered_json params = ordered_json::array(), code = ordered_json::array(),
               kernels = ordered_json::array();
  for (size_t e = 0; e < graph.entries.size(); ++e) {
    const ExecutionGraph::Entry& entry = graph.entries[e];
    if (entry.kind != MemoryPlanProblem::EntryKind::kParam) continue;
    code.push_back({{"op", "load_param"},
                    {"dst", e},
                    {"param", params.size()},
                    {"dtype", entry.dtype.str()},
                    {"shape", entry.shape}});
    params.push_back({{"name", entry.name},
                      {"offset", param_offsets.at(params.size())},
                      {"bytes", entry.constant.NumBytes()}});
  }
  for (size_t k = 0; k < graph.kernels.size(); ++k) {
    const ExecutionGraph::Kernel& kernel = graph.kernels[k];
    LOOM_CHECK_USER(!kernel.on_device)
        << "kernel '" << kernel.name << "' runs on a device; the VM runs host kernels only "
        << "(compile a model of symbolic dimensions for a CPU target)";
    for (size_t a = kernel.args.size() - static_cast<size_t>(kernel.num_outputs);
         a < kernel.args.size(); ++a) {
      const ExecutionGraph::Entry& out = graph.entries[static_cast<size_t>(kernel.args[a])];
      code.push_back({{"op", "alloc"},
                      {"dst", kernel.args[a]},
                      {"dtype", out.dtype.str()},
                      {"shape", shape_of(out)}});
    }
    code.push_back({{"op", "invoke"}, {"kernel", kernels.size()}, {"args", kernel.args}});
    kernels.push_back({{"func", kernel.func}, {"name", kernel.name}});
    std::vector<int> done;
    for (int arg : kernel.args) {
      const ExecutionGraph::Entry& entry = graph.entries[static_cast<size_t>(arg)];
      bool intermediate = entry.kind == MemoryPlanProblem::EntryKind::kIntermediate;
      if (intermediate && last_read[static_cast<size_t>(arg)] == static_cast<int>(k) &&
          std::find(done.begin(), done.end(), arg) == done.end()) {
        code.push_back({{"op", "release"}, {"register", arg}});
        done.push_back(arg);
      }
    }
  }
  doc["params"] = std::move(params);
  doc["kernels"] = std::move(kernels);
  doc["instructions"] = std::move(code);
  ordered_json outputs = ordered_json::array();
  for (const ExecutionGraph::IO& io : graph.outputs) {
    outputs.push_back({{"name", io.name}, {"register", io.entry}});
  }
  doc["outputs"] = std::move(outputs);
  return doc.dump(1);
}

}  // namespace loom::graph
