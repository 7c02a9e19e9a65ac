// The VM's static memory plan: where a program's intermediate tensors have sizes with an
// upper bound (constant shapes, a declared constraint `seq <= 512`, a count bounded by the
// tensor it counts), they are planned as the graph executor's are,
// at those bounds: slots shared by tensors whose lifetimes do not overlap, allocated once
// per machine. A tensor whose size has no bound is taken from the machine's pool when the
// program runs.
//
//   SizeBounds bounds(graph, constraints);
//   VmMemoryPlan plan = PlanVmMemory(graph, &bounds, max_allocation_bytes);
//   plan.storage_of[entry]   // its slot, or -1: the pool
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/codegen_json.h"
#include "graph/size_constraint.h"
#include "loom/arith/analyzer.h"

namespace loom::graph {

// What the sizes of a program's tensors can be at most: the inputs' size variables at least
// 1 and within the declared constraints; the sizes a kernel reads at run time within the
// bound it is read with (dims_of_value's `upper`). A loop's iteration count has none: its
// limit (--max-loop-iterations) stops a runaway loop, and planning at it would reserve far
// more than loops take. A loop's body shares its program's bounds.
class SizeBounds {
 public:
  SizeBounds(const ExecutionGraph& graph, const std::vector<SizeConstraint>& constraints);
  SizeBounds(const SizeBounds&) = delete;
  SizeBounds& operator=(const SizeBounds&) = delete;

  // Records the bounds of the sizes `kernel` makes known.
  void Learn(const ExecutionGraph::Kernel& kernel);
  // The most bytes `entry` can take, or nullopt when one of its dimensions has no bound.
  std::optional<int64_t> MaxBytes(const ExecutionGraph::Entry& entry);

 private:
  void Bound(const loom::Var& var, int64_t min, int64_t max);

  arith::Analyzer analyzer_;
};

struct VmMemoryPlan {
  std::vector<int> storage_of;         // per entry: its slot, -1 when not planned
  std::vector<int64_t> storage_bytes;  // per slot, at the bounds
};

// The plan of `graph`'s intermediates that a kernel writes (a loop's results are moved into
// place, not allocated) and whose bytes have a bound of at most `max_allocation_bytes` (0:
// no limit); the kernels' size bounds are learned on the way.
VmMemoryPlan PlanVmMemory(const ExecutionGraph& graph, SizeBounds* bounds,
                          int64_t max_allocation_bytes);

}  // namespace loom::graph
