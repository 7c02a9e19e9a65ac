// Loop-nest construction: each stage's loops from its leaves, its stores from its bodies,
// attached stages inside their attach loops, and intermediate stages allocated over the
// region bound inference found for them.
#include "te/schedule_ops.h"

#include <algorithm>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"
#include "te/tensorize.h"

namespace loom::te::detail {
namespace {

Stmt Seq(Stmt first, Stmt second) {
  Array<Stmt> seq;
  for (const Stmt& s : {first, second}) {
    if (const auto* inner = s.as<SeqStmtNode>()) {
      seq.insert(seq.end(), inner->seq.begin(), inner->seq.end());
    } else {
      seq.push_back(s);
    }
  }
  return SeqStmt(seq);
}

Stmt SeqOf(const Array<Stmt>& stmts) {
  return stmts.size() == 1 ? stmts[0] : SeqStmt(stmts);
}

PrimExpr Likely(PrimExpr cond) { return call_intrin(DataType::Bool(), "likely", {cond}); }

Stmt Guard(const Array<PrimExpr>& conditions, Stmt body) {
  if (conditions.empty()) return body;
  PrimExpr all = Likely(conditions[0]);
  for (size_t i = 1; i < conditions.size(); ++i) all = all && Likely(conditions[i]);
  return IfThenElse(all, body, Stmt());
}

// Where an intermediate tensor lives while it is alive: a buffer over its region, indexed
// relative to the region's start.
struct Region {
  Buffer buffer;
  Array<PrimExpr> mins;
};

class RegionRewriter : public StmtExprMutator {
 public:
  explicit RegionRewriter(const std::map<const Object*, Region>& regions) : regions_(regions) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr load = StmtExprMutator::VisitExpr_(op);
    const auto* rebuilt = load.as<BufferLoadNode>();
    auto it = regions_.find(rebuilt->buffer.get());
    if (it == regions_.end()) return load;
    return BufferLoad(it->second.buffer, Relative(rebuilt->indices, it->second.mins));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt store = StmtExprMutator::VisitStmt_(op);
    const auto* rebuilt = store.as<BufferStoreNode>();
    auto it = regions_.find(rebuilt->buffer.get());
    if (it == regions_.end()) return store;
    return BufferStore(it->second.buffer, rebuilt->value,
                       Relative(rebuilt->indices, it->second.mins));
  }

 private:
  Array<PrimExpr> Relative(const Array<PrimExpr>& indices, const Array<PrimExpr>& mins) {
    Array<PrimExpr> out;
    for (size_t d = 0; d < indices.size(); ++d) out.push_back(analyzer_.Simplify(indices[d] - mins[d]));
    return out;
  }
  const std::map<const Object*, Region>& regions_;
  arith::Analyzer analyzer_;
};

class NestBuilder {
 public:
  NestBuilder(const ScheduleGraph& graph, const BoundMap& bounds,
              const std::set<const StageNode*>& materialized)
      : graph_(graph), bounds_(bounds), materialized_(materialized) {}

  Stmt Build() {
    Array<Stage> roots;
    for (const Stage& s : graph_.compute_stages) {
      if (s->attach_type == AttachType::kScope) {
        attached_[{s->attach_stage.operator->(), s->attach_ivar.get()}].push_back(s);
      } else {
        roots.push_back(s);
      }
    }
    Stmt body = RealizeAll(roots, Stmt());
    return BindTensorizedBuffers(RegionRewriter(regions_).VisitStmt(body));
  }

 private:
  // The nests of `stages` in order, each intermediate one allocated around itself and
  // everything after it (its readers), followed by `rest`.
  Stmt RealizeAll(const Array<Stage>& stages, Stmt rest) {
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      const StageNode& stage = **it;
      Array<Buffer> buffers = materialized_.count(&stage) ? Array<Buffer>() : MakeRegions(stage);
      Stmt nest = MakeNest(stage);
      if (stage.double_buffered) {
        for (const Buffer& b : buffers) {
          nest = AttrStmt(b->data, tir::transform::attr::kDoubleBufferScope, 1, nest);
        }
      }
      rest = rest.defined() ? Seq(nest, rest) : nest;
      for (auto b = buffers.rbegin(); b != buffers.rend(); ++b) {
        if (stage.double_buffered) {
          // InjectDoubleBuffer needs the allocation outside the loop it pipelines: MakeNest
          // places it around the attach loop.
          CheckFixedAcrossAttachLoop(stage, *b);
          hoisted_.emplace_back(&stage, *b);
        } else {
          rest = AllocateRegion(stage, *b, rest);
        }
      }
    }
    return rest;
  }

  // The buffers holding `stage`'s region, one per output, recorded for RegionRewriter. Each
  // carries the stage's storage_align requests as buffer_dim_align attributes.
  Array<Buffer> MakeRegions(const StageNode& stage) {
    Array<PrimExpr> extents, mins;
    if (const auto* compute = dynamic_cast<const ComputeOpNode*>(stage.op.get())) {
      for (const IterVar& iv : compute->axis) {
        extents.push_back(bounds_.at(iv)->extent);
        mins.push_back(bounds_.at(iv)->min);
      }
    }
    Array<Buffer> buffers;
    for (const Buffer& output : stage.op->output_buffers) {
      if (dynamic_cast<const ExternOpNode*>(stage.op.get())) {
        // An extern operation writes its outputs whole.
        extents = output->shape;
        mins.assign(extents.size(), IntImm(DataType::Int(32), 0));
      }
      const std::string& name = output->name;
      // The data variable gets its own name so that the buffer prints as the tensor's name.
      Buffer region(Var(name + "_data", DataType::Handle()), output->dtype, extents, {},
                    IntImm(DataType::Int(32), 0), name, stage.scope, 64, 1);
      regions_[output.get()] = Region{region, mins};
      buffers.push_back(region);
    }
    return buffers;
  }

  static Stmt AllocateRegion(const StageNode& stage, const Buffer& region, Stmt body) {
    for (const StageNode::StorageAlignment& align : stage.storage_alignments) {
      PrimExpr tuple = call_intrin(DataType::Handle(), "tvm_tuple",
                                   {IntImm(DataType::Int(32), align.dim),
                                    IntImm(DataType::Int(32), align.factor),
                                    IntImm(DataType::Int(32), align.offset)});
      body = AttrStmt(region, tir::transform::kBufferDimAlign, tuple, body);
    }
    // A 0-d tensor (a full reduction without keepdims) is one element.
    Array<PrimExpr> extents = region->shape;
    if (extents.empty()) extents.push_back(IntImm(DataType::Int(32), 1));
    return Allocate(region->data, region->dtype, extents, const_true(), body, region->scope);
  }

  void CheckFixedAcrossAttachLoop(const StageNode& stage, const Buffer& region) const {
    for (const PrimExpr& extent : region->shape) {
      LOOM_CHECK_USER(!tir::UsesVar(extent, stage.attach_ivar->var))
          << "double_buffer of stage '" << stage.name() << "': the size of its region ("
          << ToScript(extent) << ") changes with loop '" << stage.attach_ivar->var.name()
          << "', so one allocation outside that loop cannot hold it; split the loops so that "
          << "every iteration needs a tile of one size";
    }
  }

  Stmt MakeLoop(const StageNode& stage, const IterVar& leaf, const Var& var, Stmt body) {
    PrimExpr extent = cast(var.dtype(), bounds_.at(leaf)->extent);
    const IterVarAttr* attr = stage.Attr(leaf);
    ForKind kind = attr ? attr->for_kind : ForKind::kSerial;
    IterVar thread;
    if (kind == ForKind::kThreadBinding) {
      const IterVar& axis = attr->bind_thread;
      thread = IterVar(Range(make_zero(extent.dtype()), extent), axis->var, axis->iter_type,
                       axis->thread_tag);
    }
    Stmt loop;
    if (thread.defined() && thread->iter_type == IterVarType::kVirtualThread) {
      // Virtual threads are a scope, not a loop: InjectVirtualThread interleaves their bodies.
      loop = AttrStmt(IterVar(thread->dom, var, IterVarType::kVirtualThread, thread->thread_tag),
                      tir::transform::attr::kVirtualThread, extent, body);
    } else {
      loop = For(var, make_zero(var.dtype()), extent, kind, body, thread, {});
    }
    if (attr) {
      for (auto it = attr->pragmas.rbegin(); it != attr->pragmas.rend(); ++it) {
        loop = AttrStmt(var, "pragma_" + it->first, it->second, loop);
      }
    }
    return loop;
  }

  // Conditions keeping every iteration variable made of loops inside its range (a split
  // that does not divide makes its parent overshoot), and each root variable inside its axis
  // too (bound inference may give a region wider than the tensor).
  Array<PrimExpr> BoundChecks(const StageNode& stage, const IterVarValueMap& values,
                              arith::Analyzer* analyzer, bool reduce_axes) {
    Array<PrimExpr> checks;
    for (const IterVar& iv : stage.all_iter_vars) {
      if ((iv->iter_type == IterVarType::kCommReduce) != reduce_axes) continue;
      const PrimExpr& value = values.at(iv);
      const Range& range = bounds_.at(iv);
      PrimExpr range_end = range->min + range->extent;
      // A leaf's loop runs exactly over its range.
      if (!stage.IsLeaf(iv) && !analyzer->CanProve(value < range_end)) {
        checks.push_back(analyzer->Simplify(value < range_end));
      }
      bool is_root = std::any_of(stage.root_iter_vars.begin(), stage.root_iter_vars.end(),
                                 [&](const IterVar& root) { return root.same_as(iv); });
      if (!is_root) continue;
      PrimExpr axis_end = iv->dom->min + iv->dom->extent;
      if (!analyzer->CanProve(range_end <= axis_end) && !analyzer->CanProve(value < axis_end)) {
        checks.push_back(analyzer->Simplify(value < axis_end));
      }
      if (!analyzer->CanProve(range->min >= iv->dom->min) &&
          !analyzer->CanProve(value >= iv->dom->min)) {
        checks.push_back(analyzer->Simplify(value >= iv->dom->min));
      }
    }
    return checks;
  }

  Stmt MakeNest(const StageNode& stage) {
    if (const auto* external = dynamic_cast<const ExternOpNode*>(stage.op.get())) {
      return external->body;
    }
    const auto* compute = static_cast<const ComputeOpNode*>(stage.op.get());
    arith::Analyzer analyzer;
    for (const IterVar& loop : EnclosingLoops(stage)) {
      analyzer.Bind(loop->var, Range(make_zero(loop->var.dtype()), bounds_.at(loop)->extent));
    }
    for (const IterVar& leaf : stage.leaf_iter_vars) {
      analyzer.Bind(leaf->var, Range(make_zero(leaf->var.dtype()), bounds_.at(leaf)->extent));
    }
    IterVarValueMap values = PassUpValues(stage, bounds_, &analyzer);
    tir::VarMap root_values;
    for (const IterVar& root : stage.root_iter_vars) root_values[root->var] = values.at(root);
    Array<PrimExpr> indices;
    for (const IterVar& iv : compute->axis) indices.push_back(values.at(iv));
    Array<PrimExpr> bodies;
    for (const PrimExpr& body : graph_.bodies.at(&stage)) {
      bodies.push_back(tir::Substitute(body, root_values));
    }
    Array<PrimExpr> data_checks = BoundChecks(stage, values, &analyzer, false);
    const auto* reduce = bodies[0].as<ReduceNode>();
    const int tensorized = TensorizedLeaf(stage);
    if (reduce != nullptr && HasThreadBoundReduction(stage)) {
      LOOM_CHECK_USER(tensorized < 0)
          << "tensorize of stage '" << stage.name() << "': its reduction runs across threads "
          << "(a reduction loop is bound to a threadIdx axis), which an intrinsic cannot do";
      Array<PrimExpr> checks = data_checks;
      Array<PrimExpr> reduce_checks = BoundChecks(stage, values, &analyzer, true);
      checks.insert(checks.end(), reduce_checks.begin(), reduce_checks.end());
      return MakeCrossThreadReduction(stage, *compute, reduce, indices, checks, data_checks);
    }
    Stmt inner;
    Stmt init;
    int first_reduce_leaf = -1;
    int loop_count = static_cast<int>(stage.leaf_iter_vars.size());
    if (tensorized >= 0) {
      loop_count = tensorized;
      inner = MakeTensorized(stage, values, data_checks, &analyzer, tensorized, &init,
                             &first_reduce_leaf);
    } else if (!reduce) {
      Array<Stmt> stores;
      for (size_t k = 0; k < bodies.size(); ++k) {
        stores.push_back(BufferStore(compute->output_buffers[k], bodies[k], indices));
      }
      inner = Guard(data_checks, SeqOf(stores));
    } else {
      Array<PrimExpr> checks = data_checks;
      Array<PrimExpr> reduce_checks = BoundChecks(stage, values, &analyzer, true);
      checks.insert(checks.end(), reduce_checks.begin(), reduce_checks.end());
      inner = Guard(checks, MakeUpdate(compute->output_buffers, reduce, indices));
      for (size_t i = 0; i < stage.leaf_iter_vars.size(); ++i) {
        if (stage.leaf_iter_vars[i]->iter_type == IterVarType::kCommReduce) {
          first_reduce_leaf = static_cast<int>(i);
          break;
        }
      }
      LOOM_ICHECK(first_reduce_leaf >= 0) << "reduction stage '" << stage.name()
                                          << "' has no reduction loop";
      init = MakeInit(stage, *compute, reduce, indices, data_checks, first_reduce_leaf);
    }
    Stmt nest = inner;
    for (int pos = loop_count - 1; pos >= 0; --pos) {
      nest = MakeLeafLoop(stage, pos, nest);
      if (pos == first_reduce_leaf) nest = Seq(init, nest);
    }
    return nest;
  }

  // The loop of leaf `pos` around `body`, with the stages attached at it realized inside.
  Stmt MakeLeafLoop(const StageNode& stage, int pos, Stmt body) {
    const IterVar& leaf = stage.leaf_iter_vars[pos];
    auto attached = attached_.find({&stage, leaf.get()});
    size_t hoisted_before = hoisted_.size();
    if (attached != attached_.end()) body = RealizeAll(attached->second, body);
    body = MakeLoop(stage, leaf, leaf->var, body);
    while (hoisted_.size() > hoisted_before) {
      body = AllocateRegion(*hoisted_.back().first, hoisted_.back().second, body);
      hoisted_.pop_back();
    }
    return body;
  }

  static bool IsThreadBound(const StageNode& stage, const IterVar& leaf) {
    const IterVarAttr* attr = stage.Attr(leaf);
    return attr != nullptr && attr->for_kind == ForKind::kThreadBinding;
  }

  static bool HasThreadBoundReduction(const StageNode& stage) {
    return std::any_of(
        stage.leaf_iter_vars.begin(), stage.leaf_iter_vars.end(), [&](const IterVar& leaf) {
          return leaf->iter_type == IterVarType::kCommReduce && IsThreadBound(stage, leaf);
        });
  }

  // A reduction whose reduction loops include threadIdx-bound ones (Stage::bind allows no
  // other thread axis there): each thread reduces its share -- the serial reduction loops --
  // into partial results of its own ("local"), the block's threads combine theirs (a
  // thread_allreduce, lowered for the target by LowerThreadAllreduce), and every thread, which
  // then holds the result, stores it: the same value to the same element, and where the
  // stage's buffer is each thread's own (a stage computed inside a kernel, whose readers
  // there run in every thread) each reader finds it. The reduction itself is never guarded,
  // as every thread of the block must take part: a thread outside the data or reduction range
  // contributes the identity. The nest keeps the data-parallel and thread-bound leaves in
  // order and moves the serial reduction leaves inside, around the update (moving a loop
  // outward only widens what the stages attached at it cover).
  Stmt MakeCrossThreadReduction(const StageNode& stage, const ComputeOpNode& compute,
                                const ReduceNode* reduce, const Array<PrimExpr>& indices,
                                const Array<PrimExpr>& checks, const Array<PrimExpr>& data_checks) {
    std::vector<int> outer, serial;
    Array<PrimExpr> reduce_threads;
    for (size_t i = 0; i < stage.leaf_iter_vars.size(); ++i) {
      const IterVar& leaf = stage.leaf_iter_vars[i];
      const bool reduction = leaf->iter_type == IterVarType::kCommReduce;
      const bool thread = IsThreadBound(stage, leaf);
      (reduction && !thread ? serial : outer).push_back(static_cast<int>(i));
      if (reduction && thread) reduce_threads.push_back(leaf->var);
      // A stage attached at a loop that moves outside a serial reduction loop would be
      // realized where that loop's variable, which its region may use, is not defined.
      const bool moves_out = !(reduction && !thread) && !serial.empty();
      LOOM_CHECK_USER(!moves_out || attached_.count({&stage, leaf.get()}) == 0)
          << "compute_at of stage '" << attached_.at({&stage, leaf.get()})[0]->name() << "' into '"
          << stage.name() << "': loop '" << leaf->var.name()
          << "' lies inside the serial reduction loop '"
          << stage.leaf_iter_vars[serial[0]]->var.name() << "', which a reduction across "
          << "threads moves inside the thread loops; reorder the serial reduction loops "
          << "innermost, or compute the stage at one of them";
    }
    const Array<PrimExpr> element{IntImm(DataType::Int(32), 0)};
    Array<Buffer> partials;
    Array<PrimExpr> partial_values;
    Array<Stmt> inits, stores;
    for (size_t k = 0; k < reduce->source.size(); ++k) {
      const Buffer& output = compute.output_buffers[k];
      const std::string name = output->name + ".partial";
      partials.push_back(Buffer(Var(name, DataType::Handle()), output->dtype, element, {},
                                IntImm(DataType::Int(32), 0), name, "local", 64, 1));
      partial_values.push_back(BufferLoad(partials[k], element));
      inits.push_back(BufferStore(partials[k], reduce->combiner->identity_element[k], element));
    }
    Stmt update = Guard(checks, MakeUpdate(partials, reduce, element));
    for (auto it = serial.rbegin(); it != serial.rend(); ++it)
      update = MakeLeafLoop(stage, *it, update);

    Array<PrimExpr> args{IntImm(DataType::Int(32), static_cast<int64_t>(partials.size()))};
    args.insert(args.end(), partial_values.begin(), partial_values.end());
    args.insert(args.end(), reduce_threads.begin(), reduce_threads.end());
    Stmt allreduce = AttrStmt(
        reduce->combiner, tir::transform::attr::kThreadAllreduce, IntImm(DataType::Int(32), 0),
        Evaluate(call_intrin(DataType::Int(32), tir::builtin::kThreadAllreduce, args)));
    // An explicit initial value is combined once, with the block's result.
    Array<PrimExpr> results =
        reduce->init.empty() ? partial_values
                             : tir::ApplyCombiner(reduce->combiner, reduce->init, partial_values);
    for (size_t k = 0; k < partials.size(); ++k) {
      stores.push_back(BufferStore(compute.output_buffers[k], results[k], indices));
    }
    Stmt body = SeqStmt({SeqOf(inits), update, allreduce, Guard(data_checks, SeqOf(stores))});
    for (auto it = partials.rbegin(); it != partials.rend(); ++it) {
      body = Allocate((*it)->data, (*it)->dtype, element, const_true(), body, "local");
    }
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) body = MakeLeafLoop(stage, *it, body);
    return body;
  }

  // The update of the accumulators `buffers` at `indices` with the reduction's sources.
  static Stmt MakeUpdate(const Array<Buffer>& buffers, const ReduceNode* reduce,
                         const Array<PrimExpr>& indices) {
    Array<PrimExpr> accumulators;
    for (const Buffer& buffer : buffers) accumulators.push_back(BufferLoad(buffer, indices));
    Array<PrimExpr> combined = tir::ApplyCombiner(reduce->combiner, accumulators, reduce->source);
    Stmt update;
    if (reduce->source.size() == 1) {
      update = BufferStore(buffers[0], combined[0], indices);
    } else {
      // Every combined value reads the old accumulators: compute all, then store all.
      Array<Var> temps;
      Array<Stmt> stores;
      for (size_t k = 0; k < reduce->source.size(); ++k) {
        temps.push_back(Var(buffers[k]->name + "_next", combined[k].dtype()));
        stores.push_back(BufferStore(buffers[k], temps[k], indices));
      }
      update = SeqStmt(stores);
      for (size_t k = reduce->source.size(); k-- > 0;)
        update = LetStmt(temps[k], combined[k], update);
    }
    if (!is_const_true(reduce->condition)) update = IfThenElse(reduce->condition, update, Stmt());
    return update;
  }

  // The accumulators' initial values, stored just outside the first reduction loop, by
  // loops of their own over the data-parallel leaves inside that point.
  Stmt MakeInit(const StageNode& stage, const ComputeOpNode& compute, const ReduceNode* reduce,
                const Array<PrimExpr>& indices, const Array<PrimExpr>& checks, int first) {
    Array<Stmt> stores;
    for (size_t k = 0; k < reduce->source.size(); ++k) {
      PrimExpr value = reduce->init.empty() ? reduce->combiner->identity_element[k] : reduce->init[k];
      stores.push_back(BufferStore(compute.output_buffers[k], value, indices));
    }
    return InitNest(stage, Guard(checks, SeqOf(stores)), first,
                    static_cast<int>(stage.leaf_iter_vars.size()));
  }

  // `init` inside loops of its own (variables renamed ".init") over the data-parallel leaves
  // in [first, end).
  Stmt InitNest(const StageNode& stage, Stmt init, int first, int end) {
    tir::VarMap renamed;
    std::vector<std::pair<IterVar, Var>> loops;
    for (int i = first; i < end; ++i) {
      const IterVar& leaf = stage.leaf_iter_vars[i];
      if (leaf->iter_type == IterVarType::kCommReduce) continue;
      Var init_var(leaf->var.name() + ".init", leaf->var.dtype());
      renamed[leaf->var] = init_var;
      loops.emplace_back(leaf, init_var);
    }
    init = tir::Substitute(init, renamed);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      init = MakeLoop(stage, it->first, it->second, init);
    }
    return init;
  }

  // The intrinsic's statements in place of the loops from leaf `tensorized` inward, and
  // (through init / first_reduce_leaf) its reduce_init when reduction loops lie outside.
  Stmt MakeTensorized(const StageNode& stage, const IterVarValueMap& values,
                      const Array<PrimExpr>& data_checks, arith::Analyzer* analyzer,
                      int tensorized, Stmt* init, int* first_reduce_leaf) {
    for (size_t i = tensorized; i < stage.leaf_iter_vars.size(); ++i) {
      auto attached = attached_.find({&stage, stage.leaf_iter_vars[i].get()});
      LOOM_CHECK_USER(attached == attached_.end())
          << "tensorize of stage '" << stage.name() << "': stage '"
          << attached->second[0]->name() << "' is computed at loop '"
          << stage.leaf_iter_vars[i]->var.name() << "', which tensorize replaces; compute it "
          << "at a loop outside '" << stage.leaf_iter_vars[tensorized]->var.name() << "'";
    }
    Array<PrimExpr> checks = data_checks;
    Array<PrimExpr> reduce_checks = BoundChecks(stage, values, analyzer, true);
    checks.insert(checks.end(), reduce_checks.begin(), reduce_checks.end());
    TensorizedLoops loops = TensorizeLoops(stage, graph_.bodies.at(&stage), values, bounds_,
                                           checks, tensorized, analyzer);
    if (loops.init.defined()) {
      for (int i = 0; i < tensorized && *first_reduce_leaf < 0; ++i) {
        if (stage.leaf_iter_vars[i]->iter_type == IterVarType::kCommReduce) *first_reduce_leaf = i;
      }
      *init = InitNest(stage, Guard(data_checks, loops.init), *first_reduce_leaf, tensorized);
    }
    return Guard(checks, loops.body);
  }

  const ScheduleGraph& graph_;
  const BoundMap& bounds_;
  const std::set<const StageNode*>& materialized_;
  std::map<std::pair<const StageNode*, const Object*>, Array<Stage>> attached_;
  std::map<const Object*, Region> regions_;
  // Allocations of double-buffered stages waiting to be placed around their attach loop.
  std::vector<std::pair<const StageNode*, Buffer>> hoisted_;
};

}  // namespace

Stmt ScheduleOps(const ScheduleGraph& graph, const BoundMap& bounds,
                 const std::set<const StageNode*>& materialized) {
  return NestBuilder(graph, bounds, materialized).Build();
}

}  // namespace loom::te::detail
