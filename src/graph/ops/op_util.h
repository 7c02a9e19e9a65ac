// Shared pieces of operator registrations: common type relations and checks whose messages
// name the call (CallInfo::where).
#pragma once

#include <string>
#include <vector>

#include "loom/graph/op.h"

namespace loom::graph::ops {

// NumPy broadcasting of every input's shape; all inputs share one dtype, the output's.
TypeRelationFn BroadcastInputs();

// Input i's name: the operator's, or "input<i>" for a variadic operator.
std::string InputName(const CallInfo& info, size_t i);

// Input `index` is a tensor of float type; a loom::Error naming the call otherwise.
void RequireFloatTensor(const CallInfo& info, int index);
// Input `index`'s rank is `rank`.
void RequireRank(const CallInfo& info, int index, int rank);
// Input `index`'s shape, which must be constant.
std::vector<int64_t> ConstInputShape(const CallInfo& info, int index);

}  // namespace loom::graph::ops
