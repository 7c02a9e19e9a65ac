// What bound inference and loop-nest construction share: the operation graph after
// inlining, and the arithmetic of iteration-variable relations.
#pragma once

#include <map>
#include <unordered_map>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/te/lower.h"

namespace loom::te::detail {

using IterVarValueMap = std::unordered_map<IterVar, PrimExpr, ObjectHash, ObjectEqual>;

// The schedule with inlined stages substituted into their readers.
struct ScheduleGraph {
  // For each compute stage that is not inlined: its bodies, with every read of an inlined
  // tensor replaced by that tensor's (recursively inlined) body.
  std::map<const StageNode*, Array<PrimExpr>> bodies;
  // For each such stage: the stages whose bodies read it, in schedule order.
  std::map<const StageNode*, Array<Stage>> readers;
  // Stages that are computes and not inlined, or extern operations (whose bodies are
  // empty: they read their inputs whole), in schedule order.
  Array<Stage> compute_stages;
  // The compute stage writing a buffer (keyed by buffer: a stage's operation may have been
  // replaced by one writing the same buffers).
  std::map<const Object*, Stage> stage_of;
};

// loom::Error when a stage is attached where its readers cannot see it.
ScheduleGraph BuildScheduleGraph(const Schedule& schedule);

// Ranges of the iteration variables made by the stage's relations, from its roots' ranges
// (which `bounds` must hold).
void PassDownDomain(const StageNode& stage, arith::Analyzer* analyzer, BoundMap* bounds);

// The value of every iteration variable of the stage in terms of its leaf loops. A leaf loop
// runs its own variable over [0, extent); its value is the variable plus the leaf's start.
IterVarValueMap PassUpValues(const StageNode& stage, const BoundMap& bounds,
                             arith::Analyzer* analyzer);

// The stages whose loops enclose `stage`'s loops, innermost first (not `stage` itself).
Array<Stage> EnclosingStages(const StageNode& stage);

// The leaf iteration variables whose loops enclose `stage`'s loops.
std::vector<IterVar> EnclosingLoops(const StageNode& stage);

}  // namespace loom::te::detail
