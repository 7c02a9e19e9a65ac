// Building the loop nests of a schedule (used by lower()).
#pragma once

#include <set>

#include "te/schedule_graph.h"

namespace loom::te::detail {

// The statement computing every stage of `graph`. Stages in `materialized` (outputs and
// tensors passed as arguments) write their own tensor's buffer; the others are allocated
// over the region `bounds` gives them and accessed relative to its start.
Stmt ScheduleOps(const ScheduleGraph& graph, const BoundMap& bounds,
                 const std::set<const StageNode*>& materialized);

}  // namespace loom::te::detail
