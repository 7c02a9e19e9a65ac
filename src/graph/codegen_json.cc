// The execution graph and its JSON (docs/graph_artifact.md).
#include "graph/codegen_json.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "loom/graph/functor.h"
#include "loom/ir/structural.h"

namespace loom::graph {
namespace {

using EntryKind = MemoryPlanProblem::EntryKind;

constexpr size_t kParamAlignment = 64;

int64_t EntryBytes(const ExecutionGraph::Entry& entry) {
  int64_t count = 1;
  for (int64_t d : entry.shape) count *= d;
  return count * static_cast<int64_t>(runtime::ElementBytes(entry.dtype));
}

// A kernel may write its output over an input when it reads each element right before
// writing the same index: elementwise/broadcast operators only, an input of the output's
// shape and dtype.
bool ElementwiseOnly(const Function& function) {
  bool elementwise = function->checked_type.is_tensor();
  PostOrderVisit(function->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call != nullptr && call->op->pattern > OpPattern::kBroadcast) elementwise = false;
  });
  return elementwise;
}

// Whether two shapes are the same at every size (symbolic dimensions the same expressions).
bool SameDims(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const PrimExpr& x, const PrimExpr& y) {
           int64_t cx = 0, cy = 0;
           if (IsConstInt(x, &cx) && IsConstInt(y, &cy)) return cx == cy;
           return StructuralEqual(x, y);
         });
}

class Builder {
 public:
  Builder(const LoweredModel& lowered, ExecutionGraph* graph) : lowered_(lowered), graph_(graph) {}

  void Run(const Function& main, const std::vector<std::string>& output_names) {
    for (const Var& param : main->params) {
      int entry = AddEntry(param->name_hint, param.type(), EntryKind::kInput);
      entries_of_[param.get()] = {entry};
      graph_->inputs.push_back({param->name_hint, entry});
    }
    for (const CallNode* call : CallsInOrder(main)) AddKernel(*call);
    std::vector<int> results = Entries(main->body);
    for (size_t i = 0; i < results.size(); ++i) {
      ExecutionGraph::Entry& entry = graph_->entries[results[i]];
      if (entry.kind == EntryKind::kIntermediate) entry.kind = EntryKind::kOutput;
      bool named = i < output_names.size() && !output_names[i].empty();
      graph_->outputs.push_back({named ? output_names[i] : "output" + std::to_string(i), results[i]});
    }
  }

 private:
  int AddEntry(const std::string& name, const Type& type, EntryKind kind) {
    LOOM_ICHECK(type.is_tensor()) << "entry '" << name << "' of type " << type.str()
                                  << " is no tensor";
    graph_->entries.push_back({name,
                               type.ConstShape().value_or(std::vector<int64_t>{}),
                               type.shape(),
                               type.dtype(),
                               kind,
                               {}});
    return static_cast<int>(graph_->entries.size()) - 1;
  }

  // The entries a value of main is: one per tensor it holds.
  std::vector<int> Entries(const Expr& e) {
    auto it = entries_of_.find(e.get());
    if (it != entries_of_.end()) return it->second;
    std::vector<int> entries;
    if (const auto* constant = e.as<ConstantNode>()) {
      std::string name = constant->name_hint.empty()
                             ? "param" + std::to_string(graph_->entries.size())
                             : constant->name_hint;
      entries.push_back(AddEntry(name, e.type(), EntryKind::kParam));
      graph_->entries.back().constant = constant->data;
    } else if (const auto* tuple = e.as<TupleNode>()) {
      for (const Expr& field : tuple->fields) {
        std::vector<int> more = Entries(field);
        entries.insert(entries.end(), more.begin(), more.end());
      }
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      entries = {Entries(item->tuple).at(item->index)};
    } else {
      LOOM_ICHECK(false) << "the execution graph reached a " << ExprKindName(e->expr_kind)
                         << " before the kernel that makes it";
    }
    entries_of_[e.get()] = entries;
    return entries;
  }

  // The entries of `call`'s results, one per tensor of its type.
  std::vector<int> AddResults(const CallNode& call, const std::string& name) {
    std::vector<Type> types = call.checked_type.is_tuple() ? call.checked_type.fields()
                                                           : std::vector<Type>{call.checked_type};
    std::vector<int> outputs;
    for (size_t i = 0; i < types.size(); ++i) {
      std::string entry = name + (types.size() > 1 ? "." + std::to_string(i) : "");
      outputs.push_back(AddEntry(entry, types[i], EntryKind::kIntermediate));
    }
    return outputs;
  }

  std::vector<int> Arguments(const CallNode& call) {
    std::vector<int> args;
    for (const Expr& arg : call.args) {
      std::vector<int> entries = Entries(arg);
      LOOM_ICHECK(entries.size() == 1) << call.Where() << ": a tuple argument";
      args.push_back(entries[0]);
    }
    return args;
  }

  void AddLoop(const CallNode& call, ops::LoopAttrs loop) {
    ExecutionGraph::Kernel kernel;
    kernel.name = call.name_hint.empty() ? loop.body : call.name_hint;
    kernel.args = Arguments(call);
    std::vector<int> outputs = AddResults(call, kernel.name);
    kernel.args.insert(kernel.args.end(), outputs.begin(), outputs.end());
    kernel.num_outputs = static_cast<int>(outputs.size());
    kernel.nodes = {kernel.name};
    kernel.loop = std::move(loop);
    entries_of_[&call] = outputs;
    graph_->kernels.push_back(std::move(kernel));
  }

  void AddKernel(const CallNode& call) {
    if (std::optional<ops::LoopAttrs> loop = ops::LoopOf(call)) return AddLoop(call, *loop);
    const Function function = Downcast<Function>(call.callee);
    ExecutionGraph::Kernel kernel;
    kernel.func = lowered_.KernelName(call);
    kernel.on_device = lowered_.device_tir.Contains(kernel.func);
    kernel.name = call.name_hint.empty() ? kernel.func : call.name_hint;
    kernel.args = Arguments(call);
    std::vector<int> outputs = AddResults(call, kernel.name);
    if (ElementwiseOnly(function)) {
      const ExecutionGraph::Entry& out = graph_->entries[outputs[0]];
      for (int arg : kernel.args) {
        const ExecutionGraph::Entry& in = graph_->entries[arg];
        if (in.dtype == out.dtype && SameDims(in.dims, out.dims)) {
          kernel.in_place_candidates.push_back(arg);
        }
      }
    }
    if (const auto* body = function->body.as<CallNode>()) {
      kernel.reads_sizes = ops::ValueSizesOf(*body);
      for (size_t p = 0; kernel.reads_sizes && p < function->params.size(); ++p) {
        if (body->args[0].same_as(function->params[p])) kernel.value_arg = static_cast<int>(p);
      }
      LOOM_ICHECK(!kernel.reads_sizes || kernel.value_arg >= 0)
          << call.Where() << ": dims_of_value's value is no parameter of its kernel";
    }
    kernel.args.insert(kernel.args.end(), outputs.begin(), outputs.end());
    kernel.num_outputs = static_cast<int>(outputs.size());
    PostOrderVisit(function->body, [&](const Expr& e) {
      if (const auto* inner = e.as<CallNode>()) {
        kernel.nodes.push_back(inner->name_hint.empty() ? inner->op->name : inner->name_hint);
      }
    });
    entries_of_[&call] = outputs;
    graph_->kernels.push_back(std::move(kernel));
  }

  const LoweredModel& lowered_;
  ExecutionGraph* graph_;
  std::unordered_map<const Object*, std::vector<int>> entries_of_;
};

}  // namespace

MemoryPlanProblem ExecutionGraph::PlanProblem() const {
  MemoryPlanProblem problem;
  for (const Entry& entry : entries) problem.entries.push_back({EntryBytes(entry), entry.kind});
  for (const Kernel& kernel : kernels) {
    auto outputs_begin = kernel.args.end() - kernel.num_outputs;
    problem.kernels.push_back({std::vector<int>(kernel.args.begin(), outputs_begin),
                               std::vector<int>(outputs_begin, kernel.args.end()),
                               kernel.in_place_candidates});
  }
  return problem;
}

ExecutionGraph BuildExecutionGraph(const Function& main, const LoweredModel& lowered,
                                   const std::vector<std::string>& output_names) {
  ExecutionGraph graph;
  Builder(lowered, &graph).Run(main, output_names);
  return graph;
}

std::vector<uint8_t> ParamsBlob(const ExecutionGraph& graph, std::vector<size_t>* offsets) {
  std::vector<std::vector<size_t>> per_graph;
  std::vector<uint8_t> blob = ParamsBlob({&graph}, &per_graph);
  *offsets = std::move(per_graph.front());
  return blob;
}

std::vector<uint8_t> ParamsBlob(const std::vector<const ExecutionGraph*>& graphs,
                                std::vector<std::vector<size_t>>* offsets) {
  std::vector<uint8_t> blob;
  offsets->assign(graphs.size(), {});
  // Offsets of the weights stored so far, by a hash of their bytes (compared in full).
  std::unordered_multimap<size_t, size_t> stored;
  for (size_t g = 0; g < graphs.size(); ++g) {
    for (const ExecutionGraph::Entry& entry : graphs[g]->entries) {
      if (entry.kind != EntryKind::kParam) continue;
      size_t offset = (blob.size() + kParamAlignment - 1) / kParamAlignment * kParamAlignment;
      size_t bytes = static_cast<size_t>(EntryBytes(entry));
      blob.resize(offset + bytes);
      entry.constant.CopyToBytes(blob.data() + offset, bytes);
      size_t hash = std::hash<std::string_view>()(
          std::string_view(reinterpret_cast<const char*>(blob.data() + offset), bytes));
      auto [first, last] = stored.equal_range(hash);
      for (auto it = first; it != last; ++it) {
        size_t before = it->second;
        if (before + bytes <= offset &&
            std::memcmp(blob.data() + before, blob.data() + offset, bytes) == 0) {
          blob.resize(offset);  // the same bytes are there already
          offset = before;
          break;
        }
      }
      if (offset + bytes == blob.size()) stored.emplace(hash, offset);
      (*offsets)[g].push_back(offset);
    }
  }
  return blob;
}

std::string ExecutionGraphJson(const ExecutionGraph& graph, const MemoryPlan& plan,
                               const std::vector<size_t>& param_offsets, const std::string& target,
                               const std::string& precision, int device_type,
                               const std::string& device_config,
                               const std::vector<LayerPlacement>& placements) {
  nlohmann::ordered_json doc;
  doc["format"] = "loom-graph-1";
  doc["target"] = target;
  doc["precision"] = precision;
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (size_t e = 0; e < graph.entries.size(); ++e) {
    const ExecutionGraph::Entry& entry = graph.entries[e];
    nlohmann::ordered_json item = {
        {"name", entry.name}, {"shape", entry.shape}, {"dtype", entry.dtype.str()}};
    if (entry.kind == EntryKind::kParam) {
      item["param"] = params.size();
      params.push_back({{"name", entry.name},
                        {"offset", param_offsets.at(params.size())},
                        {"bytes", EntryBytes(entry)}});
    } else {
      item["storage"] = plan.storage_of.at(e);
      item["offset"] = 0;
    }
    entries.push_back(std::move(item));
  }
  doc["entries"] = std::move(entries);
  nlohmann::ordered_json storages = nlohmann::ordered_json::array();
  for (int64_t bytes : plan.storage_bytes) storages.push_back({{"bytes", bytes}});
  doc["storages"] = std::move(storages);
  doc["params"] = std::move(params);
  for (const char* field : {"inputs", "outputs"}) {
    const auto& list = std::string(field) == "inputs" ? graph.inputs : graph.outputs;
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const ExecutionGraph::IO& io : list) items.push_back({{"name", io.name}, {"entry", io.entry}});
    doc[field] = std::move(items);
  }
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const ExecutionGraph::Kernel& kernel : graph.kernels) {
    LOOM_ICHECK(!kernel.loop) << "ExecutionGraphJson: loop '" << kernel.name
                              << "' needs the VM (Compile chooses it)";
    nlohmann::ordered_json item = {{"func", kernel.func},
                                   {"name", kernel.name},
                                   {"args", kernel.args},
                                   {"num_outputs", kernel.num_outputs},
                                   {"nodes", kernel.nodes}};
    // A kernel of the device: its tensors are passed as the device's (kDLCPU otherwise).
    if (kernel.on_device) item["device_type"] = device_type;
    kernels.push_back(std::move(item));
  }
  const bool any_on_device =
      std::any_of(graph.kernels.begin(), graph.kernels.end(),
                  [](const ExecutionGraph::Kernel& kernel) { return kernel.on_device; });
  if (any_on_device && !device_config.empty()) doc["device_config"] = device_config;
  doc["kernels"] = std::move(kernels);
  if (!placements.empty()) {
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const LayerPlacement& p : placements) {
      items.push_back({{"layer", p.layer}, {"device", p.device}, {"reason", p.reason}});
    }
    doc["placements"] = std::move(items);
  }
  return doc.dump(1);
}

}  // namespace loom::graph
