#include "graph/vm_memory_plan.h"

#include <algorithm>
#include <map>

#include "loom/graph/memory_plan.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom::graph {

using EntryKind = MemoryPlanProblem::EntryKind;
using arith::ConstIntBound;

SizeBounds::SizeBounds(const ExecutionGraph& graph,
                       const std::vector<SizeConstraint>& constraints) {
  // A size variable of an input is at least 1 (the machine refuses less); the constraints on
  // it narrow that.
  std::map<std::string, std::pair<loom::Var, ConstIntBound>> inputs;
  for (const ExecutionGraph::IO& input : graph.inputs) {
    for (const PrimExpr& dim : graph.entries[static_cast<size_t>(input.entry)].dims) {
      if (const auto* var = dim.as<loom::VarNode>()) {
        inputs.emplace(var->name_hint, std::make_pair(Downcast<loom::Var>(dim),
                                                      ConstIntBound{1, ConstIntBound::kPosInf}));
      }
    }
  }
  for (const SizeConstraint& constraint : constraints) {
    auto it = inputs.find(constraint.var);
    if (it == inputs.end() || constraint.modulus > 0) continue;  // bound in a bucket; no bound
    ConstIntBound& bound = it->second.second;
    const int64_t v = constraint.value;
    if (constraint.op == "==" || constraint.op == "<=")
      bound.max_value = std::min(bound.max_value, v);
    if (constraint.op == "<") bound.max_value = std::min(bound.max_value, v - 1);
    if (constraint.op == "==" || constraint.op == ">=")
      bound.min_value = std::max(bound.min_value, v);
    if (constraint.op == ">") bound.min_value = std::max(bound.min_value, v + 1);
  }
  for (const auto& [name, var_bound] : inputs) {
    const auto& [var, bound] = var_bound;
    // A constraint no size satisfies leaves nothing to plan for (the machine refuses every run).
    if (bound.min_value <= bound.max_value) Bound(var, bound.min_value, bound.max_value);
  }
}

void SizeBounds::Bound(const loom::Var& var, int64_t min, int64_t max) {
  analyzer_.const_int_bound.Update(var, ConstIntBound{min, max}, /*allow_override=*/true);
}

void SizeBounds::Learn(const ExecutionGraph::Kernel& kernel) {
  if (kernel.reads_sizes) {
    int64_t max = ConstIntBound::kPosInf;
    if (kernel.reads_sizes->upper.defined()) {
      max = std::max<int64_t>(analyzer_.const_int_bound(kernel.reads_sizes->upper).max_value, 0);
    }
    for (const loom::Var& var : kernel.reads_sizes->vars) Bound(var, 0, max);
  }
}

std::optional<int64_t> SizeBounds::MaxBytes(const ExecutionGraph::Entry& entry) {
  int64_t bytes = static_cast<int64_t>(runtime::ElementBytes(entry.dtype));
  for (const PrimExpr& dim : entry.dims) {
    const int64_t max = analyzer_.const_int_bound(dim).max_value;
    if (max == ConstIntBound::kPosInf) return std::nullopt;
    if (__builtin_mul_overflow(bytes, std::max<int64_t>(max, 0), &bytes)) return std::nullopt;
  }
  return bytes;
}

VmMemoryPlan PlanVmMemory(const ExecutionGraph& graph, SizeBounds* bounds,
                          int64_t max_allocation_bytes) {
  // The graph executor's planner, over the entries planned here: one left to the pool is
  // handed to it as an input (live throughout, of no bytes), so it takes no slot a planned
  // tensor could share.
  MemoryPlanProblem problem;
  std::vector<bool> planned(graph.entries.size(), false);
  for (const ExecutionGraph::Entry& entry : graph.entries)
    problem.entries.push_back({0, entry.kind});
  for (const ExecutionGraph::Kernel& kernel : graph.kernels) {
    bounds->Learn(kernel);
    const auto outputs_begin = kernel.args.end() - kernel.num_outputs;
    MemoryPlanProblem::Kernel step{std::vector<int>(kernel.args.begin(), outputs_begin), {}, {}};
    for (auto out = outputs_begin; out != kernel.args.end(); ++out) {
      const size_t e = static_cast<size_t>(*out);
      MemoryPlanProblem::Entry& problem_entry = problem.entries[e];
      if (problem_entry.kind != EntryKind::kIntermediate) {
        step.outputs.push_back(*out);  // a model's output: a slot of its own, unused
        continue;
      }
      std::optional<int64_t> bytes =
          kernel.loop ? std::nullopt : bounds->MaxBytes(graph.entries[e]);
      if (bytes && (max_allocation_bytes <= 0 || *bytes <= max_allocation_bytes)) {
        planned[e] = true;
        problem_entry.bytes = *bytes;
        step.outputs.push_back(*out);
      } else {
        problem_entry.kind = EntryKind::kInput;
      }
    }
    // Output 0 may take a dying input's slot when both are planned.
    if (!step.outputs.empty() && step.outputs.front() == *outputs_begin &&
        planned[*outputs_begin]) {
      for (int candidate : kernel.in_place_candidates) {
        if (planned[static_cast<size_t>(candidate)]) step.in_place_candidates.push_back(candidate);
      }
    }
    problem.kernels.push_back(std::move(step));
  }
  const MemoryPlan plan = PlanMemory(problem);
  // The slots planned tensors use, renumbered from 0.
  VmMemoryPlan result;
  result.storage_of.assign(graph.entries.size(), -1);
  std::map<int, int> slot_of;
  for (size_t e = 0; e < graph.entries.size(); ++e) {
    if (!planned[e]) continue;
    const int slot = plan.storage_of[e];
    LOOM_ICHECK(slot >= 0) << "PlanVmMemory: entry " << e << " was given no slot";
    auto [it, fresh] = slot_of.emplace(slot, static_cast<int>(result.storage_bytes.size()));
    if (fresh) result.storage_bytes.push_back(plan.storage_bytes[static_cast<size_t>(slot)]);
    result.storage_of[e] = it->second;
  }
  return result;
}

}  // namespace loom::graph
