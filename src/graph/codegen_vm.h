// The VM's program (docs/vm_artifact.md) for an execution graph whose shapes may hold size
// variables: each weight loaded, each kernel's outputs allocated at the shapes their
// expressions give, the kernel invoked, each tensor released after its last use; programs
// specialized for buckets of sizes first, each behind the `if` that tests its sizes. Used by
// compile.cc for models of symbolic input dimensions (or CompileOptions::executor "vm").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/codegen_json.h"
#include "graph/size_constraint.h"

namespace loom::graph {

// "seq = 16, batch = 1": a bucket's sizes, for messages.
std::string BucketText(const std::map<std::string, int64_t>& when);

// One program of a VM document: the general one (`when` empty), or one specialized for
// sizes of some variables (a bucket, seq = 128: the model compiled with them bound).
struct VmProgramPart {
  const ExecutionGraph* graph = nullptr;
  std::vector<size_t> param_offsets;    // its weights' offsets in the parameters blob
  std::map<std::string, int64_t> when;  // the sizes it was specialized for
  // The programs of the bodies of its loops (ExecutionGraph::Kernel::loop), each named by
  // its body function.
  std::string body;
  std::vector<VmProgramPart> bodies;
};

// The "loom-vm-1" document: each specialization, in order, runs when the inputs' sizes are
// its own, the general program (last in `parts`) otherwise; an allocation past
// `max_allocation_bytes` is refused at run time (0: no limit).
// `constraints` (on the general program's size variables) are checked when a run binds them,
// and bound the sizes of the tensors the memory plan places (vm_memory_plan.h); `stats`, when
// given, takes the plan's storages and their bytes.
std::string VmProgramJson(const std::vector<VmProgramPart>& parts,
                          const std::vector<SizeConstraint>& constraints, const std::string& target,
                          const std::string& precision, int64_t max_allocation_bytes,
                          MemoryPlanStats* stats = nullptr);

}  // namespace loom::graph
