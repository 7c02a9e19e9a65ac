// create_schedule and the schedule primitives: each checks its request and records it on
// the stage; lowering interprets the record.
#include "loom/te/schedule.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"

namespace loom::te {
namespace {

std::string Names(const Array<IterVar>& ivars) {
  std::string out;
  for (const IterVar& iv : ivars) out += (out.empty() ? "" : ", ") + iv->var.name();
  return out;
}

// "split of stage 'C': " -- the prefix of every schedule error.
#define LOOM_SCHEDULE_CHECK(cond, primitive, stage) \
  LOOM_CHECK_USER(cond) << primitive << " of stage '" << (stage).name() << "': "

// Why iv is not a leaf, for the error message.
std::string NotLeafReason(const StageNode& stage, const IterVar& iv) {
  for (const IterVarRelation& rel : stage.relations) {
    if (const auto* split = std::get_if<SplitRelation>(&rel); split && split->parent.same_as(iv)) {
      return "it was already split into " + Names({split->outer, split->inner});
    }
    if (const auto* fuse = std::get_if<FuseRelation>(&rel);
        fuse && (fuse->outer.same_as(iv) || fuse->inner.same_as(iv))) {
      return "it was already fused into " + fuse->fused->var.name();
    }
  }
  bool known = std::any_of(stage.all_iter_vars.begin(), stage.all_iter_vars.end(),
                           [&](const IterVar& v) { return v.same_as(iv); });
  return known ? "it is not a loop of the stage"
               : "it does not belong to this stage (its loops are " +
                     Names(stage.leaf_iter_vars) + ")";
}

void CheckLeaf(const StageNode& stage, const IterVar& iv, const char* primitive) {
  LOOM_SCHEDULE_CHECK(!dynamic_cast<const ExternOpNode*>(stage.op.get()), primitive, stage)
      << "it is an extern operation, which has no loops to schedule";
  LOOM_CHECK_USER(iv.defined()) << primitive << " of stage '" << stage.name()
                                << "': the axis is undefined";
  LOOM_SCHEDULE_CHECK(stage.IsLeaf(iv), primitive, stage)
      << "axis '" << iv->var.name() << "' is not a leaf axis (" << NotLeafReason(stage, iv)
      << ")";
}

void CheckPositiveConstant(const StageNode& stage, const PrimExpr& value, const char* primitive,
                           const char* what) {
  int64_t v = 0;
  LOOM_SCHEDULE_CHECK(value.defined() && (!IsConstInt(value, &v) || v > 0), primitive, stage)
      << what << " must be positive, got " << (value.defined() ? ToScript(value) : "none");
}

// parent is a copy: callers often pass an element of leaf_iter_vars, which this edits.
std::pair<IterVar, IterVar> SplitImpl(StageNode* stage, IterVar parent, PrimExpr factor,
                                      PrimExpr nparts, const char* primitive) {
  CheckLeaf(*stage, parent, primitive);
  const std::string& name = parent->var.name();
  DataType t = parent->var.dtype();
  IterVar outer(Range(), Var(name + ".outer", t), parent->iter_type, "");
  IterVar inner(Range(), Var(name + ".inner", t), parent->iter_type, "");
  if (factor.defined()) factor = cast(t, factor);
  if (nparts.defined()) nparts = cast(t, nparts);
  stage->relations.push_back(SplitRelation{parent, outer, inner, factor, nparts});
  stage->all_iter_vars.push_back(outer);
  stage->all_iter_vars.push_back(inner);
  auto it = stage->leaf_iter_vars.begin() + stage->LeafIndex(parent);
  it = stage->leaf_iter_vars.erase(it);
  stage->leaf_iter_vars.insert(it, {outer, inner});
  return {outer, inner};
}

IterVarAttr& AttrOf(StageNode* stage, const IterVar& iv) { return stage->iter_var_attrs[iv.get()]; }

void SetKind(StageNode* stage, const IterVar& iv, ForKind kind, const char* primitive) {
  CheckLeaf(*stage, iv, primitive);
  IterVarAttr& attr = AttrOf(stage, iv);
  LOOM_SCHEDULE_CHECK(attr.for_kind == ForKind::kSerial || attr.for_kind == kind, primitive,
                      *stage)
      << "axis '" << iv->var.name() << "' is already " << ForKindName(attr.for_kind);
  if (kind == ForKind::kParallel) {
    LOOM_SCHEDULE_CHECK(iv->iter_type != IterVarType::kCommReduce, primitive, *stage)
        << "axis '" << iv->var.name() << "' is a reduction axis; its iterations depend on "
        << "each other and cannot run in parallel";
  }
  attr.for_kind = kind;
}

// Compared by buffer: the consumer may read a tensor of an operation the schedule replaced.
// Transitive, as a stage may be attached in a consumer of its readers (the VTA GEMM computes
// its accumulator inside the output's tile loop, where the shift and clip stages read it);
// lowering checks that every reader can see the stage there.
bool Reads(const Operation& consumer, const Operation& producer) {
  for (const Tensor& t : consumer->InputTensors()) {
    for (const Buffer& b : producer->output_buffers) {
      if (t.buffer().same_as(b)) return true;
    }
    if (Reads(t.op(), producer)) return true;
  }
  return false;
}

}  // namespace

bool StageNode::IsLeaf(const IterVar& iv) const { return LeafIndex(iv) >= 0; }

int StageNode::LeafIndex(const IterVar& iv) const {
  for (size_t i = 0; i < leaf_iter_vars.size(); ++i) {
    if (leaf_iter_vars[i].same_as(iv)) return static_cast<int>(i);
  }
  return -1;
}

const IterVarAttr* StageNode::Attr(const IterVar& iv) const {
  auto it = iter_var_attrs.find(iv.get());
  return it == iter_var_attrs.end() ? nullptr : &it->second;
}

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, PrimExpr factor) {
  CheckPositiveConstant(**this, factor, "split", "the factor");
  return SplitImpl(node_.get(), parent, std::move(factor), PrimExpr(), "split");
}

std::pair<IterVar, IterVar> Stage::split_by_nparts(const IterVar& parent, PrimExpr nparts) {
  CheckPositiveConstant(**this, nparts, "split_by_nparts", "the number of parts");
  return SplitImpl(node_.get(), parent, PrimExpr(), std::move(nparts), "split_by_nparts");
}

std::array<IterVar, 4> Stage::tile(IterVar x, IterVar y, PrimExpr x_factor, PrimExpr y_factor) {
  LOOM_SCHEDULE_CHECK(!x.same_as(y), "tile", **this) << "x and y are the same axis";
  auto [xo, xi] = split(x, std::move(x_factor));
  auto [yo, yi] = split(y, std::move(y_factor));
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageNode* stage = node_.get();
  CheckLeaf(*stage, outer, "fuse");
  CheckLeaf(*stage, inner, "fuse");
  int pos = stage->LeafIndex(outer);
  LOOM_SCHEDULE_CHECK(stage->LeafIndex(inner) == pos + 1, "fuse", *stage)
      << "axes '" << outer->var.name() << "' and '" << inner->var.name()
      << "' are not adjacent loops with the first outside the second (the loops are "
      << Names(stage->leaf_iter_vars) << ")";
  LOOM_SCHEDULE_CHECK(outer->iter_type == inner->iter_type, "fuse", *stage)
      << "cannot fuse a data-parallel axis with a reduction axis ('" << outer->var.name()
      << "', '" << inner->var.name() << "')";
  // The wider of the two index types holds the product of the extents.
  DataType index = outer->var.dtype().bits() >= inner->var.dtype().bits() ? outer->var.dtype()
                                                                          : inner->var.dtype();
  IterVar fused(Range(), Var(outer->var.name() + "." + inner->var.name() + ".fused", index),
                outer->iter_type, "");
  stage->relations.push_back(FuseRelation{outer, inner, fused});
  stage->all_iter_vars.push_back(fused);
  stage->leaf_iter_vars.erase(stage->leaf_iter_vars.begin() + pos,
                              stage->leaf_iter_vars.begin() + pos + 2);
  stage->leaf_iter_vars.insert(stage->leaf_iter_vars.begin() + pos, fused);
  return fused;
}

void Stage::reorder(const Array<IterVar>& order) {
  StageNode* stage = node_.get();
  std::vector<int> positions;
  for (const IterVar& iv : order) {
    CheckLeaf(*stage, iv, "reorder");
    int pos = stage->LeafIndex(iv);
    LOOM_SCHEDULE_CHECK(std::find(positions.begin(), positions.end(), pos) == positions.end(),
                        "reorder", *stage)
        << "axis '" << iv->var.name() << "' is listed twice";
    positions.push_back(pos);
  }
  std::vector<int> slots = positions;
  std::sort(slots.begin(), slots.end());
  Array<IterVar> leaves = stage->leaf_iter_vars;
  for (size_t i = 0; i < order.size(); ++i) leaves[slots[i]] = order[i];
  stage->leaf_iter_vars = leaves;
}

void Stage::compute_at(const Stage& parent, const IterVar& scope) {
  StageNode* stage = node_.get();
  LOOM_CHECK_USER(parent.defined()) << "compute_at of stage '" << stage->name()
                                    << "': the target stage is undefined";
  std::string what = "compute_at of stage '" + stage->name() + "' into '" + parent->name() + "'";
  LOOM_CHECK_USER(!dynamic_cast<const ExternOpNode*>(stage->op.get()))
      << what << ": an extern operation computes its outputs whole at the root";
  LOOM_CHECK_USER(dynamic_cast<const ComputeOpNode*>(stage->op.get()))
      << what << ": only a compute has loops to attach ('" << stage->name()
      << "' is a placeholder)";
  LOOM_CHECK_USER(!parent.same_as(*this)) << what << ": a stage cannot be attached to itself";
  LOOM_CHECK_USER(!stage->is_output)
      << what << ": '" << stage->name() << "' is an output of the schedule and stays at the root";
  LOOM_CHECK_USER(Reads(parent->op, stage->op))
      << what << ": '" << parent->name() << "' does not consume '" << stage->name() << "'";
  LOOM_CHECK_USER(scope.defined() && parent->IsLeaf(scope))
      << what << ": '" << (scope.defined() ? scope->var.name() : "(undefined)")
      << "' is not a loop of '" << parent->name() << "' (its loops are "
      << Names(parent->leaf_iter_vars) << ")";
  for (Stage s = parent; s.defined() && s->attach_type == AttachType::kScope; s = s->attach_stage) {
    LOOM_CHECK_USER(!s->attach_stage.same_as(*this))
        << what << ": '" << parent->name() << "' is itself computed inside '" << stage->name()
        << "'; the attachment would be circular";
  }
  stage->attach_type = AttachType::kScope;
  stage->attach_stage = parent;
  stage->attach_ivar = scope;
}

void Stage::compute_inline() {
  StageNode* stage = node_.get();
  const auto* compute = dynamic_cast<const ComputeOpNode*>(stage->op.get());
  LOOM_SCHEDULE_CHECK(!dynamic_cast<const ExternOpNode*>(stage->op.get()), "compute_inline",
                      *stage)
      << "an extern operation computes its outputs whole; it cannot be inlined";
  LOOM_SCHEDULE_CHECK(compute != nullptr, "compute_inline", *stage)
      << "only a compute can be inlined (this is a placeholder)";
  LOOM_SCHEDULE_CHECK(compute->reduce_axis.empty(), "compute_inline", *stage)
      << "a reduction cannot be inlined";
  LOOM_SCHEDULE_CHECK(compute->num_outputs() == 1, "compute_inline", *stage)
      << "a compute with several outputs cannot be inlined";
  LOOM_SCHEDULE_CHECK(!stage->is_output, "compute_inline", *stage)
      << "an output of the schedule cannot be inlined";
  stage->attach_type = AttachType::kInline;
  stage->attach_stage = Stage();
  stage->attach_ivar = IterVar();
}

void Stage::compute_root() {
  StageNode* stage = node_.get();
  stage->attach_type = AttachType::kRoot;
  stage->attach_stage = Stage();
  stage->attach_ivar = IterVar();
}

void Stage::vectorize(const IterVar& var) {
  SetKind(node_.get(), var, ForKind::kVectorized, "vectorize");
}
void Stage::unroll(const IterVar& var) { SetKind(node_.get(), var, ForKind::kUnrolled, "unroll"); }
void Stage::parallel(const IterVar& var) {
  SetKind(node_.get(), var, ForKind::kParallel, "parallel");
}

void Stage::pragma(const IterVar& var, const std::string& key, PrimExpr value) {
  CheckLeaf(**this, var, "pragma");
  LOOM_SCHEDULE_CHECK(!key.empty(), "pragma", **this) << "the pragma key is empty";
  AttrOf(node_.get(), var).pragmas.emplace_back(key, std::move(value));
}

void Stage::bind(const IterVar& var, const IterVar& thread) {
  LOOM_SCHEDULE_CHECK(thread.defined() && !thread->thread_tag.empty(), "bind", **this)
      << "bind '" << var->var.name() << "' to a thread axis made by thread_axis()";
  StageNode* stage = node_.get();
  for (const auto& [key, attr] : stage->iter_var_attrs) {
    if (!attr.bind_thread.defined() || key == var.get()) continue;
    LOOM_SCHEDULE_CHECK(!attr.bind_thread.same_as(thread), "bind", *stage)
        << "thread axis '" << thread->thread_tag << "' is already bound to loop '"
        << static_cast<const IterVarNode*>(key)->var.name() << "'";
    // Virtual threads of one tag may nest (each axis is replicated on its own); a launch
    // axis indexes one loop.
    if (thread->iter_type == IterVarType::kVirtualThread) continue;
    LOOM_SCHEDULE_CHECK(attr.bind_thread->thread_tag != thread->thread_tag, "bind", *stage)
        << "thread axis '" << thread->thread_tag << "' is already bound to loop '"
        << static_cast<const IterVarNode*>(key)->var.name() << "'; each thread axis indexes "
        << "one loop of a stage";
  }
  // Threads of one block combine their partial results (LowerThreadAllreduce); blocks and
  // virtual threads cannot.
  LOOM_SCHEDULE_CHECK(
      var->iter_type != IterVarType::kCommReduce || thread->thread_tag.rfind("threadIdx.", 0) == 0,
      "bind", *stage)
      << "axis '" << var->var.name() << "' is a reduction axis, which only threadIdx axes "
      << "can run (a cross-thread reduction), not " << thread->thread_tag
      << "; bind it to a threadIdx axis, or rfactor the reduction and bind the partial "
      << "reductions' axis";
  SetKind(stage, var, ForKind::kThreadBinding, "bind");
  AttrOf(stage, var).bind_thread = thread;
}

void Stage::set_scope(const std::string& scope) {
  StageNode* stage = node_.get();
  LOOM_SCHEDULE_CHECK(!scope.empty(), "set_scope", *stage) << "the scope is empty";
  LOOM_SCHEDULE_CHECK(dynamic_cast<const ComputeOpNode*>(stage->op.get()), "set_scope", *stage)
      << "a placeholder is an argument of the function and is not allocated";
  LOOM_SCHEDULE_CHECK(!stage->is_output, "set_scope", *stage)
      << "an output of the schedule lives in the function's argument buffer; cache_write it "
         "to compute it in scope '"
      << scope << "'";
  stage->scope = scope;
}

void Stage::storage_align(const IterVar& axis, int64_t factor, int64_t offset) {
  StageNode* stage = node_.get();
  const auto* compute = dynamic_cast<const ComputeOpNode*>(stage->op.get());
  LOOM_SCHEDULE_CHECK(compute != nullptr, "storage_align", *stage)
      << "a placeholder is an argument of the function, whose layout the caller decides";
  LOOM_SCHEDULE_CHECK(!stage->is_output, "storage_align", *stage)
      << "an output of the schedule lives in the function's argument buffer, whose layout the "
         "caller decides; align a cache_write stage instead";
  LOOM_CHECK_USER(axis.defined()) << "storage_align of stage '" << stage->name()
                                  << "': the axis is undefined";
  auto it = std::find_if(compute->axis.begin(), compute->axis.end(),
                         [&](const IterVar& a) { return a.same_as(axis); });
  LOOM_SCHEDULE_CHECK(it != compute->axis.end(), "storage_align", *stage)
      << "'" << axis->var.name() << "' is not an axis of the stage's operation (its axes are "
      << Names(compute->axis) << "); pass one of op->axis";
  LOOM_SCHEDULE_CHECK(factor > 0 && offset >= 0 && offset < factor, "storage_align", *stage)
      << "factor " << factor << " and offset " << offset
      << " are invalid: need factor > 0 and 0 <= offset < factor";
  int dim = static_cast<int>(it - compute->axis.begin());
  for (const StageNode::StorageAlignment& existing : stage->storage_alignments) {
    LOOM_SCHEDULE_CHECK(existing.dim != dim, "storage_align", *stage)
        << "axis '" << axis->var.name() << "' is already aligned";
  }
  stage->storage_alignments.push_back({dim, factor, offset});
}

void Stage::double_buffer() {
  StageNode* stage = node_.get();
  LOOM_SCHEDULE_CHECK(dynamic_cast<const ComputeOpNode*>(stage->op.get()), "double_buffer",
                      *stage)
      << "a placeholder is not computed by the schedule";
  LOOM_SCHEDULE_CHECK(!stage->is_output, "double_buffer", *stage)
      << "an output of the schedule lives in the function's argument buffer and is computed "
         "at the root; double-buffer a stage attached with compute_at";
  stage->double_buffered = true;
}

Schedule::Schedule() : state_(std::make_shared<State>()) {}

Stage Schedule::operator[](const Operation& op) const {
  for (const Stage& s : state_->stages) {
    if (s->op == op || s->origin_op == op) return s;
  }
  LOOM_THROW << "operation '" << (op ? op->name : "(null)")
             << "' is not part of this schedule (create_schedule reaches only the operations "
                "its outputs depend on)";
}

Schedule create_schedule(const Array<Operation>& outputs) {
  Schedule sch;
  sch.state_->outputs = outputs;
  std::unordered_set<const OperationNode*> visited;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (!visited.insert(op.get()).second) return;
    for (const Tensor& t : op->InputTensors()) visit(t.op());
    auto node = std::make_shared<StageNode>();
    node->op = op;
    node->origin_op = op;
    if (const auto* compute = dynamic_cast<const ComputeOpNode*>(op.get())) {
      node->root_iter_vars = compute->root_iter_vars();
    }
    node->all_iter_vars = node->root_iter_vars;
    node->leaf_iter_vars = node->root_iter_vars;
    sch.state_->stages.emplace_back(std::move(node));
  };
  for (const Operation& op : outputs) {
    LOOM_CHECK_USER(op != nullptr) << "create_schedule: an output operation is null";
    visit(op);
  }
  for (const Operation& op : outputs) sch[op]->is_output = true;
  return sch;
}

IterVar thread_axis(const std::string& tag) {
  LOOM_CHECK_USER(!tag.empty()) << "thread_axis: the tag is empty (use \"threadIdx.x\", ...)";
  // "cthread": the virtual threads of a co-processor (VTA), each with its own buffers.
  IterVarType type = tag.rfind("vthread", 0) == 0 || tag == "cthread"
                         ? IterVarType::kVirtualThread
                         : IterVarType::kThreadIndex;
  return IterVar(Range(), Var(tag), type, tag);
}

}  // namespace loom::te
