// Bound inference: the range of every iteration variable of every stage.
//
// A stage computes, per execution of its attach point, the region its readers need while
// they run inside that point. So for each read of the stage in a reader's body, the loops
// that enclose the attach point stay symbolic (the region moves with them), and every other
// loop of the reader -- its own inner loops and those of the stages it sits in -- is relaxed
// to its whole range. Readers are inferred before the stages they read (reverse schedule
// order), so their loop ranges are known by then.
#include <algorithm>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/stmt_functor.h"
#include "te/schedule_graph.h"

namespace loom::te {
namespace {

using detail::IterVarValueMap;
using detail::ScheduleGraph;

bool Contains(const std::vector<IterVar>& loops, const IterVar& iv) {
  return std::any_of(loops.begin(), loops.end(), [&](const IterVar& l) { return l.same_as(iv); });
}

// Who shares memory of a storage scope: every thread (global, 0), the threads of one block
// (shared, 1), or one thread alone (local, 2); and the level of a thread axis: blockIdx 0,
// threadIdx 1.
int StorageRank(const std::string& scope) {
  if (scope.rfind("shared", 0) == 0) return 1;
  if (scope.rfind("local", 0) == 0) return 2;
  return 0;
}
int ThreadRank(const std::string& tag) { return tag.rfind("blockIdx", 0) == 0 ? 0 : 1; }

// Loops bound to threads run all at once, so a stage computed inside them in memory those
// threads share must cover what every one of them needs: such a loop is relaxed when its
// threads share the producer's storage -- all of them for global memory, the threads of a
// block (threadIdx, not blockIdx) for shared memory, none for local memory, which each thread
// has its own of (as TVM's bound inference does). Virtual threads are relaxed except for
// thread-private ("local...") storage: InjectVirtualThread gives each of them its own copy.
bool StaysSymbolic(const StageNode& stage, const std::vector<IterVar>& fixed, const IterVar& leaf,
                   const std::string& producer_scope) {
  if (!Contains(fixed, leaf)) return false;
  const IterVarAttr* attr = stage.Attr(leaf);
  if (!attr || attr->for_kind != ForKind::kThreadBinding) return true;
  const IterVar& thread = attr->bind_thread;
  if (thread->iter_type == IterVarType::kVirtualThread) {
    return producer_scope.rfind("local", 0) == 0;
  }
  return ThreadRank(thread->thread_tag) < StorageRank(producer_scope);
}

// The sets of `indices` (read by `reader`, over its root variables) over every loop of the
// reader and its enclosing stages that is not in `fixed`.
Array<arith::IntSet> ReadRegion(const StageNode& reader, const Array<PrimExpr>& indices,
                                const std::vector<IterVar>& fixed, const std::string& scope,
                                const BoundMap& bounds, arith::Analyzer* analyzer) {
  Array<const StageNode*> levels{&reader};
  for (const Stage& s : detail::EnclosingStages(reader)) levels.push_back(s.operator->());
  IterVarValueMap values = detail::PassUpValues(reader, bounds, analyzer);
  tir::VarMap root_values;
  for (const IterVar& root : reader.root_iter_vars) root_values[root->var] = values.at(root);
  Array<PrimExpr> lo, hi;
  for (const PrimExpr& index : indices) {
    PrimExpr at_leaves = tir::Substitute(index, root_values);
    lo.push_back(at_leaves);
    hi.push_back(at_leaves);
  }
  // Innermost level first: each level's loop ranges may mention the loops around it.
  for (const StageNode* level : levels) {
    arith::VarIntSetMap dom;
    for (const IterVar& leaf : level->leaf_iter_vars) {
      if (StaysSymbolic(*level, fixed, leaf, scope)) continue;
      dom[leaf->var] = arith::IntSet::FromRange(Range(make_zero(leaf->var.dtype()),
                                                      bounds.at(leaf)->extent));
    }
    if (dom.empty()) continue;
    for (size_t d = 0; d < indices.size(); ++d) {
      arith::IntSet lo_set = analyzer->int_set(lo[d], dom);
      arith::IntSet hi_set = analyzer->int_set(hi[d], dom);
      // A loop of extent 0 reads nothing (an empty tensor): the region is empty.
      if (lo_set.is_nothing() || hi_set.is_nothing()) {
        return Array<arith::IntSet>(indices.size(), arith::IntSet::Nothing());
      }
      lo[d] = lo_set.min();
      hi[d] = hi_set.max();
    }
  }
  Array<arith::IntSet> region;
  for (size_t d = 0; d < indices.size(); ++d) region.push_back(arith::IntSet::Interval(lo[d], hi[d]));
  return region;
}

void InferStage(const Stage& stage, const ScheduleGraph& graph, arith::Analyzer* analyzer,
                BoundMap* bounds) {
  const auto* compute = dynamic_cast<const ComputeOpNode*>(stage->op.get());
  if (!compute) return;  // an extern operation: no iteration variables
  for (const IterVar& iv : compute->reduce_axis) (*bounds)[iv] = iv->dom;
  auto readers = graph.readers.find(stage.operator->());
  if (stage->is_output || readers == graph.readers.end()) {
    for (const IterVar& iv : compute->axis) (*bounds)[iv] = iv->dom;
    return;
  }
  std::vector<IterVar> fixed = detail::EnclosingLoops(*stage);
  Array<arith::IntSet> demand;
  for (const Stage& reader : readers->second) {
    if (dynamic_cast<const ExternOpNode*>(reader->op.get())) {
      // An extern operation reads its inputs whole.
      Array<arith::IntSet> whole;
      for (const IterVar& iv : compute->axis) whole.push_back(arith::IntSet::FromRange(iv->dom));
      demand = demand.empty() ? whole : arith::UnionRegion(analyzer, demand, whole);
      continue;
    }
    for (const PrimExpr& body : graph.bodies.at(reader.operator->())) {
      PostOrderVisit(body, [&](const ObjectRef& node) {
        const auto* load = node.as<BufferLoadNode>();
        if (!load) return;
        const Array<Buffer>& outputs = compute->output_buffers;
        if (std::none_of(outputs.begin(), outputs.end(),
                         [&](const Buffer& b) { return b.same_as(load->buffer); })) {
          return;
        }
        Array<arith::IntSet> region = ReadRegion(*reader, load->indices, fixed, stage->scope,
                                                  *bounds, analyzer);
        demand = demand.empty() ? region : arith::UnionRegion(analyzer, demand, region);
      });
    }
  }
  for (size_t d = 0; d < compute->axis.size(); ++d) {
    const IterVar& iv = compute->axis[d];
    (*bounds)[iv] = demand[d].CoverRange(analyzer, iv->dom);
  }
}

}  // namespace

BoundMap InferBound(const Schedule& schedule) {
  ScheduleGraph graph = detail::BuildScheduleGraph(schedule);
  arith::Analyzer analyzer;
  BoundMap bounds;
  for (auto it = graph.compute_stages.rbegin(); it != graph.compute_stages.rend(); ++it) {
    InferStage(*it, graph, &analyzer, &bounds);
    detail::PassDownDomain(**it, &analyzer, &bounds);
  }
  return bounds;
}

}  // namespace loom::te
