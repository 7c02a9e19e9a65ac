// Inlining, readers of each stage, and how iteration-variable relations map ranges down to
// the leaves and values up to the roots.
#include "te/schedule_graph.h"

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/stmt_functor.h"

namespace loom::te::detail {
namespace {

// Replaces reads of inlined tensors by their bodies at the read's indices.
class InlineReads : public ExprMutator {
 public:
  explicit InlineReads(const std::map<const Object*, PrimExpr>& inlined_bodies,
                       const std::map<const Object*, Array<IterVar>>& inlined_axes)
      : bodies_(inlined_bodies), axes_(inlined_axes) {}

  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr load = ExprMutator::VisitExpr_(op);
    const auto* rebuilt = load.as<BufferLoadNode>();
    auto it = bodies_.find(rebuilt->buffer.get());
    if (it == bodies_.end()) return load;
    const Array<IterVar>& axis = axes_.at(rebuilt->buffer.get());
    tir::VarMap vmap;
    for (size_t d = 0; d < axis.size(); ++d) vmap[axis[d]->var] = rebuilt->indices[d];
    return tir::Substitute(it->second, vmap);
  }

 private:
  const std::map<const Object*, PrimExpr>& bodies_;
  const std::map<const Object*, Array<IterVar>>& axes_;
};

std::string LoopNames(const StageNode& stage) {
  std::string out;
  for (const IterVar& iv : stage.leaf_iter_vars) out += (out.empty() ? "" : ", ") + iv->var.name();
  return out;
}

// A stage computed inside a loop of another serves only readers running inside that loop.
void CheckAttachments(const ScheduleGraph& graph) {
  for (const Stage& stage : graph.compute_stages) {
    if (stage->attach_type != AttachType::kScope) continue;
    const StageNode& parent = *stage->attach_stage;
    std::string what = "compute_at of stage '" + stage->name() + "' into '" + parent.name() + "'";
    LOOM_CHECK_USER(parent.attach_type != AttachType::kInline)
        << what << ": '" << parent.name() << "' is inlined and has no loops; compute it at a "
        << "stage that keeps its loops";
    int scope = parent.LeafIndex(stage->attach_ivar);
    LOOM_CHECK_USER(scope >= 0)
        << what << ": '" << stage->attach_ivar->var.name() << "' is no longer a loop of '"
        << parent.name() << "' (its loops are " << LoopNames(parent)
        << "); call compute_at after the target's splits and fuses";
    auto readers = graph.readers.find(stage.operator->());
    if (readers == graph.readers.end()) continue;
    for (const Stage& reader : readers->second) {
      bool inside = false;
      for (const StageNode* s = reader.operator->(); s != nullptr;
           s = s->attach_stage.defined() ? s->attach_stage.operator->() : nullptr) {
        if (s == &parent) {
          inside = true;
          break;
        }
        if (s->attach_stage.operator->() == &parent) {
          inside = parent.LeafIndex(s->attach_ivar) >= scope;
          break;
        }
      }
      LOOM_CHECK_USER(inside) << what << ": '" << reader->name() << "' also reads '"
                              << stage->name() << "' but does not run inside loop '"
                              << stage->attach_ivar->var.name() << "'";
    }
  }
}

}  // namespace

ScheduleGraph BuildScheduleGraph(const Schedule& schedule) {
  ScheduleGraph graph;
  // Inlined bodies keyed by the buffer they replace; stages come producers first, so a body
  // is already free of inlined reads when a later stage substitutes it.
  std::map<const Object*, PrimExpr> inlined_bodies;
  std::map<const Object*, Array<IterVar>> inlined_axes;
  InlineReads inliner(inlined_bodies, inlined_axes);
  for (const Stage& stage : schedule.stages()) {
    if (const auto* external = dynamic_cast<const ExternOpNode*>(stage->op.get())) {
      for (const Tensor& input : external->inputs) {
        LOOM_CHECK_USER(!inlined_bodies.count(input.buffer().get()))
            << "compute_inline of stage '" << input.op()->name << "': extern operation '"
            << external->name << "' reads it through its buffer, so it must be computed; "
            << "remove compute_inline";
      }
      graph.bodies[stage.operator->()] = {};
      graph.compute_stages.push_back(stage);
      for (const Buffer& b : external->output_buffers) graph.stage_of[b.get()] = stage;
      continue;
    }
    const auto* compute = dynamic_cast<const ComputeOpNode*>(stage->op.get());
    if (!compute) continue;
    Array<PrimExpr> bodies;
    for (const PrimExpr& body : compute->body) bodies.push_back(inliner(body));
    if (stage->attach_type == AttachType::kInline) {
      inlined_bodies[compute->output_buffers[0].get()] = bodies[0];
      inlined_axes[compute->output_buffers[0].get()] = compute->axis;
      continue;
    }
    graph.bodies[stage.operator->()] = bodies;
    graph.compute_stages.push_back(stage);
    for (const Buffer& b : compute->output_buffers) graph.stage_of[b.get()] = stage;
  }
  for (const Stage& reader : graph.compute_stages) {
    std::map<const StageNode*, bool> seen;
    if (const auto* external = dynamic_cast<const ExternOpNode*>(reader->op.get())) {
      for (const Tensor& input : external->inputs) {
        auto it = graph.stage_of.find(input.buffer().get());
        if (it == graph.stage_of.end() || seen[it->second.operator->()]) continue;
        seen[it->second.operator->()] = true;
        graph.readers[it->second.operator->()].push_back(reader);
      }
    }
    for (const PrimExpr& body : graph.bodies.at(reader.operator->())) {
      PostOrderVisit(body, [&](const ObjectRef& node) {
        const auto* load = node.as<BufferLoadNode>();
        if (!load) return;
        auto it = graph.stage_of.find(load->buffer.get());
        if (it == graph.stage_of.end() || seen[it->second.operator->()]) return;
        seen[it->second.operator->()] = true;
        graph.readers[it->second.operator->()].push_back(reader);
      });
    }
  }
  CheckAttachments(graph);
  return graph;
}

void PassDownDomain(const StageNode& stage, arith::Analyzer* analyzer, BoundMap* bounds) {
  for (const IterVarRelation& rel : stage.relations) {
    if (const auto* split = std::get_if<SplitRelation>(&rel)) {
      const Range& parent = bounds->at(split->parent);
      PrimExpr extent = parent->extent;
      DataType t = extent.dtype();
      if (split->factor.defined()) {
        PrimExpr factor = cast(t, split->factor);
        (*bounds)[split->outer] =
            Range(make_zero(t), analyzer->Simplify(floordiv(extent + factor - 1, factor)));
        (*bounds)[split->inner] = Range(make_zero(t), factor);
      } else {
        PrimExpr nparts = cast(t, split->nparts);
        (*bounds)[split->outer] = Range(make_zero(t), nparts);
        (*bounds)[split->inner] =
            Range(make_zero(t), analyzer->Simplify(floordiv(extent + nparts - 1, nparts)));
      }
    } else {
      const auto& fuse = std::get<FuseRelation>(rel);
      PrimExpr extent = bounds->at(fuse.outer)->extent * bounds->at(fuse.inner)->extent;
      (*bounds)[fuse.fused] = Range(make_zero(extent.dtype()), analyzer->Simplify(extent));
    }
  }
}

IterVarValueMap PassUpValues(const StageNode& stage, const BoundMap& bounds,
                             arith::Analyzer* analyzer) {
  IterVarValueMap values;
  for (const IterVar& leaf : stage.leaf_iter_vars) {
    values[leaf] = analyzer->Simplify(leaf->var + bounds.at(leaf)->min);
  }
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    if (const auto* split = std::get_if<SplitRelation>(&*it)) {
      PrimExpr inner_extent = bounds.at(split->inner)->extent;
      values[split->parent] = analyzer->Simplify(
          values.at(split->outer) * inner_extent + values.at(split->inner) +
          bounds.at(split->parent)->min);
    } else {
      const auto& fuse = std::get<FuseRelation>(*it);
      PrimExpr fused = values.at(fuse.fused);
      PrimExpr inner_extent = bounds.at(fuse.inner)->extent;
      int64_t inner_size = 0;
      if (IsConstInt(inner_extent, &inner_size) && inner_size == 0) {
        // An empty inner loop makes the fused loop empty: its body never runs, and dividing
        // by the extent 0 would be an error.
        values[fuse.outer] = bounds.at(fuse.outer)->min;
        values[fuse.inner] = bounds.at(fuse.inner)->min;
        continue;
      }
      // Each axis keeps its own index type (a symbolic int64 batch fused with int32 axes:
      // the fused index is int64, the axes' expressions compare it with their int32 values).
      auto typed = [](const IterVar& axis, PrimExpr value) {
        return value.dtype() == axis->var.dtype() ? value : cast(axis->var.dtype(), value);
      };
      values[fuse.outer] = analyzer->Simplify(
          typed(fuse.outer, floordiv(fused, inner_extent) + bounds.at(fuse.outer)->min));
      values[fuse.inner] = analyzer->Simplify(
          typed(fuse.inner, floormod(fused, inner_extent) + bounds.at(fuse.inner)->min));
    }
  }
  return values;
}

Array<Stage> EnclosingStages(const StageNode& stage) {
  Array<Stage> chain;
  for (Stage s = stage.attach_stage; s.defined(); s = s->attach_stage) {
    LOOM_ICHECK(chain.size() < 10000) << "circular compute_at chain";
    chain.push_back(s);
  }
  return chain;
}

std::vector<IterVar> EnclosingLoops(const StageNode& stage) {
  std::vector<IterVar> loops;
  const StageNode* inner = &stage;
  for (const Stage& outer : EnclosingStages(stage)) {
    int last = outer->LeafIndex(inner->attach_ivar);
    LOOM_ICHECK(last >= 0) << "attach point of '" << inner->name() << "' is not a loop";
    loops.insert(loops.end(), outer->leaf_iter_vars.begin(),
                 outer->leaf_iter_vars.begin() + last + 1);
    inner = outer.operator->();
  }
  return loops;
}

}  // namespace loom::te::detail
