// StorageRewrite: allocations whose lifetimes do not overlap share storage.
//
// Planning is per attach scope: the function body, and the body of every loop whose
// iterations may run at the same time (parallel, vectorized, thread-bound). An allocation
// never leaves its attach scope -- storage inside a parallel loop is per iteration -- and
// only allocations of one scope are merged. Within a scope the statements are numbered in
// program order; an allocation is live from its first access to its last, where an access
// inside a loop that the allocation encloses stands for the whole loop (the next iteration
// may read what this one wrote). A loop that encloses the allocation itself does not widen:
// each iteration had fresh storage, whose contents are undefined until written.
// Allocations are taken by first access; each reuses a free slot (dtype and storage scope
// equal, previous occupant dead) whose size fits it best, or opens a new slot. Every slot
// becomes one Allocate at the top of the scope, of the largest member's size.
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

bool IsAttachScope(const ForNode* loop) {
  return loop->for_kind == ForKind::kParallel || loop->for_kind == ForKind::kVectorized ||
         loop->for_kind == ForKind::kThreadBinding;
}

PrimExpr ElementCount(const AllocateNode* alloc) {
  PrimExpr count;
  for (const PrimExpr& extent : alloc->extents) count = count.defined() ? count * extent : extent;
  return count;
}

// An allocation the scope may move and merge, and where it is live.
struct Candidate {
  const AllocateNode* alloc = nullptr;
  size_t order = 0;       // position of the Allocate in program order
  size_t loop_depth = 0;  // loops of the scope enclosing the Allocate
  bool escapes = false;   // its handle is bound to another variable: accesses are hidden
  int64_t first = -1;     // live range, in statement numbers; -1: never accessed
  int64_t last = -1;
  // Loops that stand for accesses (resolved once every loop's range is known).
  std::vector<size_t> touched_loops;
};

// Numbers the statements of one attach scope and finds the live range of the allocations
// the scope owns (those not inside a nested attach scope).
class LivenessFinder : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  std::vector<Candidate> Find(const Stmt& scope_body) {
    VisitStmt(scope_body);
    for (Candidate& candidate : candidates_) {
      for (size_t loop : candidate.touched_loops) {
        Extend(&candidate, loops_[loop].first);
        Extend(&candidate, loops_[loop].second);
      }
    }
    return std::move(candidates_);
  }

  void VisitStmt(const Stmt& stmt) override {
    ++position_;
    StmtExprVisitor::VisitStmt(stmt);
  }

  void VisitStmt_(const AllocateNode* op) override {
    for (const PrimExpr& extent : op->extents) VisitExpr(extent);
    VisitExpr(op->condition);
    if (nested_scopes_ == 0 && is_const_true(op->condition) && !UsesLocalVar(op)) {
      index_of_[op->buffer_var.get()] = candidates_.size();
      Candidate candidate;
      candidate.alloc = op;
      candidate.order = candidates_.size();
      candidate.loop_depth = open_loops_.size();
      candidates_.push_back(std::move(candidate));
    }
    Defining defining(this, op->buffer_var);
    VisitStmt(op->body);
  }

  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    int nested = IsAttachScope(op) ? 1 : 0;
    nested_scopes_ += nested;
    Defining defining(this, op->loop_var);
    EnterLoop();
    VisitStmt(op->body);
    ExitLoop();
    nested_scopes_ -= nested;
  }

  void VisitStmt_(const WhileNode* op) override {
    EnterLoop();  // the condition is evaluated on every iteration
    VisitExpr(op->condition);
    VisitStmt(op->body);
    ExitLoop();
  }

  void VisitStmt_(const LetStmtNode* op) override {
    VisitBoundValue(op->value);
    Defining defining(this, op->var);
    VisitStmt(op->body);
  }

  void VisitExpr_(const LetNode* op) override {
    VisitBoundValue(op->value);
    VisitExpr(op->body);
  }

  void VisitExpr_(const VarNode* op) override {
    if (Candidate* candidate = Find(op)) {
      if (binding_value_) candidate->escapes = true;
      Touch(candidate);
    }
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    if (Candidate* candidate = Find(op->buffer->data.get())) Touch(candidate);
    StmtExprVisitor::VisitExpr_(op);
  }

  void VisitStmt_(const BufferStoreNode* op) override {
    if (Candidate* candidate = Find(op->buffer->data.get())) Touch(candidate);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  // Marks a variable as bound inside the scope while its statement is visited.
  class Defining {
   public:
    Defining(LivenessFinder* finder, const Var& var) : finder_(finder), var_(var.get()) {
      finder_->local_vars_.insert(var_);
    }
    ~Defining() { finder_->local_vars_.erase(var_); }
    Defining(const Defining&) = delete;
    Defining& operator=(const Defining&) = delete;

   private:
    LivenessFinder* finder_;
    const Object* var_;
  };

  // Whether the allocation's size depends on a variable bound inside the scope: then it
  // cannot move to the top of the scope.
  bool UsesLocalVar(const AllocateNode* op) const {
    bool uses = false;
    for (const PrimExpr& extent : op->extents) {
      PostOrderVisit(extent, [&](const ObjectRef& node) {
        uses |= node.as<VarNode>() && local_vars_.count(node.get());
      });
    }
    return uses;
  }

  void VisitBoundValue(const PrimExpr& value) {
    bool outer = binding_value_;
    binding_value_ = true;
    VisitExpr(value);
    binding_value_ = outer;
  }

  Candidate* Find(const Object* var) {
    auto it = index_of_.find(var);
    return it == index_of_.end() ? nullptr : &candidates_[it->second];
  }

  void Touch(Candidate* candidate) {
    if (open_loops_.size() > candidate->loop_depth) {
      candidate->touched_loops.push_back(open_loops_[candidate->loop_depth]);
    } else {
      Extend(candidate, position_);
    }
  }

  static void Extend(Candidate* candidate, int64_t position) {
    if (candidate->first < 0 || position < candidate->first) candidate->first = position;
    candidate->last = std::max(candidate->last, position);
  }

  void EnterLoop() {
    open_loops_.push_back(loops_.size());
    loops_.emplace_back(++position_, 0);
  }
  void ExitLoop() {
    loops_[open_loops_.back()].second = ++position_;
    open_loops_.pop_back();
  }

  int64_t position_ = 0;
  int nested_scopes_ = 0;
  bool binding_value_ = false;
  std::vector<Candidate> candidates_;
  std::unordered_map<const Object*, size_t> index_of_;
  std::unordered_set<const Object*> local_vars_;
  std::vector<std::pair<int64_t, int64_t>> loops_;  // [first, last] statement numbers
  std::vector<size_t> open_loops_;
};

// Storage shared by allocations with disjoint live ranges.
struct Slot {
  const AllocateNode* owner;  // the first member: its variable names the storage
  size_t order;               // the owner's Candidate::order
  PrimExpr elements;
  int64_t last;
};

// How badly `elements` fits `slot`: the elements wasted or added, for constant sizes.
int64_t FitCost(const Slot& slot, const PrimExpr& elements) {
  int64_t have = 0, need = 0;
  if (IsConstInt(slot.elements, &have) && IsConstInt(elements, &need)) {
    return have >= need ? have - need : need - have;
  }
  return StructuralEqual(slot.elements, elements) ? 0 : std::numeric_limits<int64_t>::max();
}

struct ScopePlan {
  std::vector<Slot> slots;
  // Allocations removed from their place (all hoisted into a slot).
  std::unordered_set<const AllocateNode*> hoisted;
  // Data variables of members that use another member's storage -> the slot's variable.
  std::unordered_map<const Object*, Var> storage_of;
};

ScopePlan Plan(std::vector<Candidate> candidates) {
  std::erase_if(candidates, [](const Candidate& c) { return c.escapes; });
  // Never-accessed allocations sort first and share nothing (their range is empty).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.first < b.first; });
  ScopePlan plan;
  for (const Candidate& candidate : candidates) {
    const AllocateNode* alloc = candidate.alloc;
    PrimExpr elements = ElementCount(alloc);
    plan.hoisted.insert(alloc);
    Slot* best = nullptr;
    int64_t best_cost = 0;
    if (candidate.first >= 0) {
      for (Slot& slot : plan.slots) {
        bool free = slot.last >= 0 && slot.last < candidate.first;
        if (!free || slot.owner->dtype != alloc->dtype ||
            slot.owner->storage_scope != alloc->storage_scope) {
          continue;
        }
        int64_t cost = FitCost(slot, elements);
        if (!best || cost < best_cost) {
          best = &slot;
          best_cost = cost;
        }
      }
    }
    if (!best) {
      plan.slots.push_back(Slot{alloc, candidate.order, elements, candidate.last});
      continue;
    }
    best->elements = max(best->elements, elements);
    best->last = candidate.last;
    plan.storage_of.emplace(alloc->buffer_var.get(), best->owner->buffer_var);
  }
  // Slots are allocated in the order the program declared their owners.
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const Slot& a, const Slot& b) { return a.order < b.order; });
  return plan;
}

Stmt RewriteScope(const Stmt& scope_body);

// Applies one scope's plan: removes the hoisted Allocates, points merged members at their
// slot's variable, plans nested attach scopes, and allocates the slots at the top.
class ScopeRewriter : public StorageRenamer {
 public:
  explicit ScopeRewriter(const ScopePlan& plan) : plan_(plan) {}

  using StorageRenamer::VisitExpr_;
  using StorageRenamer::VisitStmt_;

  Stmt Rewrite(const Stmt& scope_body) {
    Stmt body = VisitStmt(scope_body);
    for (auto slot = plan_.slots.rbegin(); slot != plan_.slots.rend(); ++slot) {
      const AllocateNode* owner = slot->owner;
      Array<PrimExpr> extents = owner->extents;
      if (!StructuralEqual(slot->elements, ElementCount(owner))) extents = {slot->elements};
      body = Allocate(owner->buffer_var, owner->dtype, extents, owner->condition, body,
                      owner->storage_scope);
    }
    return body;
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    if (plan_.hoisted.count(op)) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    if (!IsAttachScope(op)) return visited;
    const auto* loop = visited.as<ForNode>();
    Stmt body = RewriteScope(loop->body);
    if (body.same_as(loop->body)) return visited;
    return For(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->thread_binding,
               loop->annotations);
  }

 private:
  PrimExpr RewriteVar(const VarNode* op) override {
    if (const Var* storage = StorageOf(op)) return *storage;
    return PrimExpr(op);
  }

  Buffer RewriteBuffer(const Buffer& buffer) override { return Remap(buffer); }

  const Var* StorageOf(const Object* var) const {
    auto it = plan_.storage_of.find(var);
    return it == plan_.storage_of.end() ? nullptr : &it->second;
  }

  // The buffer over its slot's storage (one new Buffer per original, shared by accesses).
  Buffer Remap(const Buffer& buffer) {
    const Var* storage = StorageOf(buffer->data.get());
    if (!storage) return buffer;
    auto [it, inserted] = remapped_.try_emplace(buffer.get());
    if (inserted) {
      it->second =
          Buffer(*storage, buffer->dtype, buffer->shape, buffer->strides, buffer->elem_offset,
                 buffer->name, buffer->scope, buffer->data_alignment, buffer->offset_factor);
    }
    return it->second;
  }

  const ScopePlan& plan_;
  std::unordered_map<const BufferNode*, Buffer> remapped_;
};

Stmt RewriteScope(const Stmt& scope_body) {
  ScopePlan plan = Plan(LivenessFinder().Find(scope_body));
  return ScopeRewriter(plan).Rewrite(scope_body);
}

}  // namespace

Pass StorageRewrite() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = RewriteScope(func->body);
    // Allocations already at the top of their scope come back as new but equal nodes.
    if (StructuralEqual(body, func->body)) return func;
    return PrimFunc(func->params, func->buffer_map, body, func->ret_type, func->attrs);
  };
  return CreatePrimFuncPass(rewrite, 1, "StorageRewrite");
}

int64_t AllocatedBytes(const PrimFunc& func) {
  int64_t total = 0;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* alloc = node.as<AllocateNode>();
    if (!alloc) return;
    int64_t bytes = int64_t{alloc->dtype.bytes()} * alloc->dtype.lanes();
    for (const PrimExpr& extent : alloc->extents) {
      int64_t n = 0;
      LOOM_CHECK_USER(IsConstInt(extent, &n))
          << "cannot count the bytes of allocation '" << alloc->buffer_var.name()
          << "': its extent " << ToScript(extent) << " is not a constant";
      LOOM_CHECK_USER(!const_int::MulOverflows(bytes, n, &bytes))
          << "the size of allocation '" << alloc->buffer_var.name() << "' overflows int64";
    }
    LOOM_CHECK_USER(!const_int::AddOverflows(total, bytes, &total))
        << "the total size of the allocations overflows int64";
  });
  return total;
}

}  // namespace loom::tir::transform
