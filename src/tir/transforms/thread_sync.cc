// ThreadSync: barriers between the threads of a GPU block wherever one thread may read, or
// overwrite, shared memory another thread wrote, or read, since the last barrier.
//
// Each statement is summarized by the shared buffers it reads and writes (through a pointer
// handed to a callee, address_of, as the access it declares: both when it declares none): all of
// them, those before its first barrier (its head) and those after its last (its tail). In a
// sequence, a statement whose head reads a buffer written since the last barrier (read after
// write), or writes one read since then (write after read), gets a barrier before it. A serial loop
// is a sequence of its iterations: when the tail of one iteration conflicts with the head of the
// next (the next tile's fetch overwriting what this one computes from), the body ends with a
// barrier. Writes after writes need none: threads that fetch cooperatively write different
// elements. Which elements a thread touches is not analyzed, so a barrier may be one more than
// needed, never one fewer; except in a loop InjectDoubleBuffer pipelined over shared buffers:
// the producer of the next iteration's tiles (marked double_buffer_write, per buffer, with the
// loop's variable) writes the halves of those buffers that the rest of the iteration does not
// read, so, seen from that rest, its writes of them conflict with nothing; they do across
// iterations (the barrier at the body's end), outside the loop, and inside the producer
// itself, which is synchronized as any statement. Once the loop is gone (unrolled, or of one
// iteration and substituted), the mark names no enclosing loop and its writes are ordinary.
//
// A barrier must be reached by every thread of the block, as often. One needed inside a
// branch whose condition depends on a thread index, or inside a loop whose bounds do, is a
// loom::Error naming the kernel, the buffer and the condition or loop: such a branch is what
// a non-dividing split leaves around a block's work.
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

using BufferSet = std::set<const VarNode*>;

struct Accesses {
  BufferSet reads, writes;
  // Writes to the half of a double-buffered tile that this iteration of the pipelined loop
  // does not read.
  BufferSet next_half_writes;

  void Add(const Accesses& other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
    next_half_writes.insert(other.next_half_writes.begin(), other.next_half_writes.end());
  }
};

// `a` seen from across the pipelined loop's iterations, or from outside it: its next-half
// writes are writes.
Accesses Ordinary(Accesses a) {
  a.writes.insert(a.next_half_writes.begin(), a.next_half_writes.end());
  a.next_half_writes.clear();
  return a;
}

// The buffer of `b` that both sets hold, or null.
const VarNode* Common(const BufferSet& a, const BufferSet& b) {
  for (const VarNode* var : a) {
    if (b.count(var)) return var;
  }
  return nullptr;
}

// The buffer through which `next` conflicts with `pending` (read after write or write after
// read), or null.
const VarNode* Conflict(const Accesses& pending, const Accesses& next) {
  if (const VarNode* var = Common(next.reads, pending.writes)) return var;
  return Common(next.writes, pending.reads);
}

Accesses Combine(Accesses a, const Accesses& b) {
  a.Add(b);
  return a;
}

struct Summary {
  Accesses head, tail, all;
  bool has_barrier = false;
};

Stmt Barrier() { return Evaluate(call_intrin(DataType::Int(32), builtin::kThreadSync, {})); }

bool IsBarrier(const Stmt& s) {
  const auto* eval = s.as<EvaluateNode>();
  const auto* call = eval == nullptr ? nullptr : eval->value.as<CallNode>();
  return call != nullptr && call->op.name() == builtin::kThreadSync;
}

class BarrierPlanner : public StmtExprMutator {
 public:
  BarrierPlanner(std::string kernel, const Stmt& body) : kernel_(std::move(kernel)) {
    PostOrderVisit(body, [&](const ObjectRef& node) {
      if (const auto* op = node.as<AllocateNode>()) {
        if (op->storage_scope == "shared") shared_.insert(op->buffer_var.get());
      }
    });
  }

  bool HasShared() const { return !shared_.empty(); }

  Stmt VisitStmt(const Stmt& s) override {
    if (IsBarrier(s)) {
      summary_ = Summary{};
      summary_.has_barrier = true;
      return s;
    }
    if (s.as<BufferStoreNode>() != nullptr || s.as<EvaluateNode>() != nullptr) {
      summary_ = Summary{};
      summary_.all = AccessesOf(s);
      summary_.head = summary_.tail = summary_.all;
      return s;
    }
    if (const auto* let = s.as<LetStmtNode>()) {
      // A value computed from a thread index makes a branch on it divergent too.
      if (ReadsThreadIndex(let->value)) thread_vars_.insert(let->var.get());
    }
    // Wrappers (allocations, lets, attributes, assertions) pass their body's summary on,
    // after what their own expressions read (a let's value, loaded from shared memory, say).
    Stmt visited = StmtExprMutator::VisitStmt(s);
    if (s.as<LetStmtNode>() != nullptr || s.as<AssertStmtNode>() != nullptr ||
        s.as<WhileNode>() != nullptr) {
      Accesses own;
      if (const auto* let = s.as<LetStmtNode>()) own = AccessesOf(let->value);
      if (const auto* assert = s.as<AssertStmtNode>()) own = AccessesOf(assert->condition);
      if (const auto* loop = s.as<WhileNode>()) own = AccessesOf(loop->condition);
      summary_.head.Add(own);
      summary_.all.Add(own);
      if (!summary_.has_barrier) summary_.tail.Add(own);
    }
    return visited;
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Array<Stmt> seq;
    Summary whole;
    Accesses pending;  // since the last barrier
    for (const Stmt& stmt : op->seq) {
      Stmt visited = VisitStmt(stmt);
      const Summary part = summary_;
      if (const VarNode* var = Conflict(pending, part.head)) {
        seq.push_back(PlaceBarrier(var));
        whole.has_barrier = true;
        pending = Accesses{};
      }
      if (!whole.has_barrier) whole.head.Add(part.head);
      if (part.has_barrier) {
        whole.has_barrier = true;
        pending = part.tail;
      } else {
        pending.Add(part.all);
      }
      whole.all.Add(part.all);
      seq.push_back(visited);
    }
    whole.tail = pending;
    summary_ = whole;
    return SeqStmt(seq);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    const bool thread_index = op->for_kind == ForKind::kThreadBinding &&
                              op->thread_binding->thread_tag.rfind("threadIdx.", 0) == 0;
    // A loop whose trip count differs between threads (a loop partitioned on a condition
    // that reads a thread index) reaches a barrier in its body a different number of times.
    const bool divergent = ReadsThreadIndex(op->min) || ReadsThreadIndex(op->extent);
    if (divergent) {
      divergent_contexts_.push_back("loop '" + op->loop_var->name_hint + "' from " +
                                    ToScript(ObjectRef(op->min)) + " for " +
                                    ToScript(ObjectRef(op->extent)));
    }
    if (thread_index) thread_vars_.insert(op->loop_var.get());
    // Thread-bound loops are the block's threads side by side, not one after another.
    const bool sequential = op->for_kind != ForKind::kThreadBinding;
    if (sequential) sequential_loops_.push_back(op->loop_var.get());
    Stmt body = VisitStmt(op->body);
    if (sequential) sequential_loops_.pop_back();
    if (thread_index) thread_vars_.erase(op->loop_var.get());
    if (divergent) divergent_contexts_.pop_back();
    Summary summary = summary_;
    // The pipelined loop's next-half writes are writes from outside it. (A loop inside its
    // producer passes them on.)
    if (pipelined_loops_.erase(op->loop_var.get()) > 0) {
      summary.head = Ordinary(summary.head);
      summary.all = Ordinary(summary.all);
      summary.tail = Ordinary(summary.tail);
    }
    if (sequential) {
      const Accesses previous_iteration =
          Ordinary(summary.has_barrier ? summary.tail : summary.all);
      if (const VarNode* var = Conflict(previous_iteration, Ordinary(summary.head))) {
        body = SeqStmt({body, PlaceBarrier(var)});
        summary.has_barrier = true;
        summary.tail = Accesses{};
      }
    }
    const Accesses bounds = Combine(AccessesOf(op->min), AccessesOf(op->extent));
    summary.head.Add(bounds);
    summary.all.Add(bounds);
    if (!summary.has_barrier) summary.tail.Add(bounds);
    summary_ = summary;
    if (body.same_as(op->body)) return Stmt(op);
    return For(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_binding,
               op->annotations);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    // The producer's writes of the marked buffer, seen from after it, are next-half writes;
    // only directly in the loop the mark names (no other sequential loop between).
    const auto* buffer = op->node.as<VarNode>();
    const auto* loop = op->value.as<VarNode>();
    if (op->attr_key == attr::kDoubleBufferWrite && buffer != nullptr && loop != nullptr &&
        !sequential_loops_.empty() && loop == sequential_loops_.back()) {
      pipelined_loops_.insert(loop);
      for (Accesses* part : {&summary_.head, &summary_.all, &summary_.tail}) {
        if (part->writes.erase(buffer) > 0) part->next_half_writes.insert(buffer);
      }
    }
    return visited;
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    const bool divergent = ReadsThreadIndex(op->condition);
    if (divergent) divergent_contexts_.push_back("`if " + ToScript(ObjectRef(op->condition)) + "`");
    Stmt then_case = VisitStmt(op->then_case);
    const Summary then_summary = summary_;
    Stmt else_case = op->else_case;
    Summary else_summary;  // an empty path when there is no else
    if (else_case.defined()) {
      else_case = VisitStmt(else_case);
      else_summary = summary_;
    }
    if (divergent) divergent_contexts_.pop_back();
    // Either path may run: the accesses of both, and a barrier only when both have one (a
    // path without one leaves everything it did pending).
    Summary summary;
    const Accesses condition = AccessesOf(op->condition);
    summary.has_barrier = then_summary.has_barrier && else_summary.has_barrier;
    summary.head = Combine(condition, Combine(then_summary.head, else_summary.head));
    summary.all = Combine(condition, Combine(then_summary.all, else_summary.all));
    summary.tail = summary.has_barrier ? Combine(then_summary.tail, else_summary.tail)
                                       : summary.all;
    summary_ = summary;
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return Stmt(op);
    return IfThenElse(op->condition, then_case, else_case);
  }

 private:
  Accesses AccessesOf(const ObjectRef& s) const {
    Accesses accesses;
    if (!s.defined()) return accesses;
    // A pointer handed to a callee (address_of) is read or written as its access says; both
    // when it does not say.
    std::unordered_set<const BufferLoadNode*> addressed;
    PostOrderVisit(s, [&](const ObjectRef& node) {
      const auto* call = node.as<CallNode>();
      if (call == nullptr || call->op.name() != "address_of") return;
      const auto* load = call->args[0].as<BufferLoadNode>();
      LOOM_ICHECK(load != nullptr) << "ThreadSync: address_of of no buffer element";
      addressed.insert(load);
      if (!shared_.count(load->buffer->data.get())) return;
      int64_t access = 0;
      if (call->args.size() > 1) IsConstInt(call->args[1], &access);
      if (access == 0) access = builtin::kAccessRead | builtin::kAccessWrite;
      if (access & builtin::kAccessRead) accesses.reads.insert(load->buffer->data.get());
      if (access & builtin::kAccessWrite) accesses.writes.insert(load->buffer->data.get());
    });
    PostOrderVisit(s, [&](const ObjectRef& node) {
      if (const auto* load = node.as<BufferLoadNode>()) {
        if (shared_.count(load->buffer->data.get()) && !addressed.count(load)) {
          accesses.reads.insert(load->buffer->data.get());
        }
      } else if (const auto* store = node.as<BufferStoreNode>()) {
        if (shared_.count(store->buffer->data.get())) {
          accesses.writes.insert(store->buffer->data.get());
        }
      }
    });
    return accesses;
  }

  bool ReadsThreadIndex(const PrimExpr& e) const {
    bool reads = false;
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (const auto* var = node.as<VarNode>()) reads |= thread_vars_.count(var) > 0;
    });
    return reads;
  }

  Stmt PlaceBarrier(const VarNode* buffer) const {
    LOOM_CHECK_USER(divergent_contexts_.empty())
        << "ThreadSync: kernel '" << kernel_ << "' needs a barrier over the shared buffer '"
        << buffer->name_hint << "' inside " << divergent_contexts_.back()
        << ", which depends on the thread index, so not every thread of the block would "
        << "reach it as often; split the loops by factors that divide their extents (no "
        << "guard), or keep the shared memory's writes and reads out of the guarded part";
    return Barrier();
  }

  std::string kernel_;
  BufferSet shared_;
  std::unordered_set<const VarNode*> thread_vars_;
  // The variables of the loops around the statement visited that run their iterations one
  // after another, innermost last.
  std::vector<const Object*> sequential_loops_;
  // The pipelined loops (named by a producer's mark) around the statement visited.
  std::unordered_set<const Object*> pipelined_loops_;
  // The branches and loops on a thread index around the statement visited, described.
  std::vector<std::string> divergent_contexts_;
  Summary summary_;
};

}  // namespace

Pass ThreadSync() {
  return CreatePrimFuncPass(
      [](const PrimFunc& func, const IRModule&, const PassContext&) {
        if (!IsDeviceKernel(func)) return func;
        auto symbol = func->attrs.find("global_symbol");
        const auto* name =
            symbol == func->attrs.end() ? nullptr : symbol->second.as<StringImmNode>();
        BarrierPlanner planner(name != nullptr ? name->value : "kernel", func->body);
        if (!planner.HasShared()) return func;
        return WithBody(func, planner.VisitStmt(func->body));
      },
      0, "ThreadSync");
}

}  // namespace loom::tir::transform
