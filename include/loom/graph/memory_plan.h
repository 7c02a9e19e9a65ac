// Static memory planning of an execution graph: every tensor a kernel produces gets a
// storage slot, and values whose lifetimes (in kernel order) do not overlap share slots.
//
//   MemoryPlanProblem problem;                 // entries (sizes) and kernels (args), in order
//   MemoryPlan plan = PlanMemory(problem);
//   plan.storage_of[entry]                     // its slot, -1 for a parameter
//
// Slots are picked best-fit by size; when no free slot is large enough the largest free
// one grows (that costs less than a new slot). An elementwise kernel may write its output
// into the slot of an input of the same shape and dtype that dies at it: it reads each
// element before writing the same index. Model inputs and outputs get slots of their own.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::graph {

struct MemoryPlanStats {
  int64_t planned_bytes = 0;      // the sum of the slot sizes
  int64_t lower_bound_bytes = 0;  // the largest total size of simultaneously live entries
  int num_storages = 0;
};

struct MemoryPlanProblem {
  enum class EntryKind : uint8_t { kInput, kParam, kIntermediate, kOutput };
  struct Entry {
    int64_t bytes = 0;
    EntryKind kind = EntryKind::kIntermediate;
  };
  struct Kernel {
    std::vector<int> inputs;   // entry ids the kernel reads
    std::vector<int> outputs;  // entry ids it writes
    // Inputs whose slot output 0 may take (same shape and dtype, an elementwise kernel).
    std::vector<int> in_place_candidates;
  };
  std::vector<Entry> entries;
  std::vector<Kernel> kernels;  // in execution order
};

struct MemoryPlan {
  std::vector<int> storage_of;         // per entry: its slot, -1 for a parameter
  std::vector<int64_t> storage_bytes;  // per slot
  MemoryPlanStats stats;
};

MemoryPlan PlanMemory(const MemoryPlanProblem& problem);

}  // namespace loom::graph
