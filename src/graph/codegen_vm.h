// The VM's program (docs/vm_artifact.md) for an execution graph whose shapes may hold size
// variables: each weight loaded, each kernel's outputs allocated at the shapes their
// expressions give, the kernel invoked, each tensor released after its last use. Used by
// compile.cc for models of symbolic input dimensions (or CompileOptions::executor "vm").
#pragma once

#include <string>
#include <vector>

#include "graph/codegen_json.h"

namespace loom::graph {

// The "loom-vm-1" document; `param_offsets` as ParamsBlob gives them; an allocation past
// `max_allocation_bytes` is refused at run time (0: no limit).
std::string VmProgramJson(const ExecutionGraph& graph, const std::vector<size_t>& param_offsets,
                          const std::string& target, const std::string& precision,
                          int64_t max_allocation_bytes);

}  // namespace loom::graph
