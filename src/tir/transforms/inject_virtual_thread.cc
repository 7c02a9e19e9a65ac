// InjectVirtualThread: a virtual thread scope (AttrStmt "virtual_thread") runs its body as
// `count` threads that a single real thread interleaves statement by statement.
//
// Which statements run per thread: a statement *varies* when its own expressions (not its
// children) read a per-thread value -- the vthread variable, a variable bound from one, or
// an allocation of the scope whose contents differ per thread. A varying statement is
// replicated, once per thread, where it stands; everything else runs once and is descended
// into. So at each loop level thread 0's and thread 1's statements alternate, which is what
// lets an accelerator overlap one thread's loads with another's compute.
//
// Which allocations are per thread: those declared inside the scope that a replicated
// statement writes (a store that varies, or any store inside a loop, branch or let that
// varies). Such an allocation gets one copy per thread (see buffer_copies.h); thread t uses
// copy t. The others are written only by statements that run once, hold the same contents
// in every thread, and stay shared.
//
// Inside a "cthread" scope (a co-processor's virtual threads), a co-processor scope is one
// unit: replicated whole, tokens included, even when nothing in it varies. Thread t's tokens
// then pair with thread t's, as the threads' units alternate on every queue in the same
// order, and one thread's loads overlap another's compute.
#include <memory>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"
#include "tir/transforms/buffer_copies.h"

namespace loom::tir::transform {

namespace {

using VarSet = std::unordered_set<const Object*>;

// A replicated statement without loops is unrolled for at most this many threads; a longer
// unrolling would only grow the code, so beyond it (or around loops) the threads become a
// serial loop.
constexpr int64_t kMaxUnrolledThreads = 16;

// Whether `node` reads a variable of `vars`, directly or as the data of a buffer it accesses.
bool UsesAny(const ObjectRef& node, const VarSet& vars) {
  bool used = false;
  PostOrderVisit(node, [&](const ObjectRef& n) {
    if (used) return;
    if (vars.count(n.get())) {
      used = true;
    } else if (const auto* load = n.as<BufferLoadNode>()) {
      used = vars.count(load->buffer->data.get()) > 0;
    } else if (const auto* store = n.as<BufferStoreNode>()) {
      used = vars.count(store->buffer->data.get()) > 0;
    }
  });
  return used;
}

bool UsesAny(const Array<PrimExpr>& exprs, const VarSet& vars) {
  for (const PrimExpr& e : exprs) {
    if (UsesAny(e, vars)) return true;
  }
  return false;
}

bool ContainsLoop(const Stmt& stmt) {
  bool loop = false;
  PostOrderVisit(stmt, [&](const ObjectRef& n) { loop |= n.as<ForNode>() || n.as<WhileNode>(); });
  return loop;
}

// Whether the statement's own expressions (not its children) differ between threads.
bool Varies(const Stmt& stmt, const VarSet& vars) {
  auto uses = [&](const ObjectRef& node) { return UsesAny(node, vars); };
  if (const auto* loop = stmt.as<ForNode>()) return uses(loop->min) || uses(loop->extent);
  if (const auto* loop = stmt.as<WhileNode>()) return uses(loop->condition);
  if (const auto* branch = stmt.as<IfThenElseNode>()) return uses(branch->condition);
  if (const auto* let = stmt.as<LetStmtNode>()) return uses(let->value);
  if (const auto* attr = stmt.as<AttrStmtNode>()) return uses(attr->value);
  if (const auto* assert_stmt = stmt.as<AssertStmtNode>()) {
    return uses(assert_stmt->condition) || uses(assert_stmt->message);
  }
  if (const auto* allocate = stmt.as<AllocateNode>()) {
    return UsesAny(allocate->extents, vars) || uses(allocate->condition);
  }
  if (stmt.as<BufferStoreNode>() || stmt.as<EvaluateNode>()) return uses(stmt);
  return false;
}

// The variables whose values differ between the threads of one scope: the vthread variable,
// variables bound from per-thread values, and the scope's allocations that hold per-thread
// contents (all of them with `private_allocations`). Grown to a fixed point, since a later
// statement can make an earlier read per-thread (a loop that writes an allocation it read in a
// previous iteration).
class PerThreadAnalysis {
 public:
  PerThreadAnalysis(const Var& vthread, const Stmt& body, bool private_allocations) {
    vars_.insert(vthread.get());
    PostOrderVisit(body, [&](const ObjectRef& n) {
      if (const auto* allocate = n.as<AllocateNode>()) inner_.insert(allocate->buffer_var.get());
    });
    if (private_allocations) vars_.insert(inner_.begin(), inner_.end());
    size_t known = 0;
    while (known != vars_.size()) {
      known = vars_.size();
      Visit(body, false);
    }
  }

  const VarSet& vars() const { return vars_; }

 private:
  // `replicated`: whether `stmt` lies inside a statement that will be replicated per thread
  // (one that varies), so that each thread runs it, or not, on its own.
  void Visit(const Stmt& stmt, bool replicated) {
    replicated = replicated || Varies(stmt, vars_);
    if (const auto* seq = stmt.as<SeqStmtNode>()) {
      for (const Stmt& s : seq->seq) Visit(s, replicated);
    } else if (const auto* let = stmt.as<LetStmtNode>()) {
      if (UsesAny(let->value, vars_)) vars_.insert(let->var.get());
      Visit(let->body, replicated);
    } else if (const auto* loop = stmt.as<ForNode>()) {
      if (Varies(stmt, vars_)) vars_.insert(loop->loop_var.get());
      Visit(loop->body, replicated);
    } else if (const auto* loop = stmt.as<WhileNode>()) {
      Visit(loop->body, replicated);
    } else if (const auto* branch = stmt.as<IfThenElseNode>()) {
      Visit(branch->then_case, replicated);
      if (branch->else_case.defined()) Visit(branch->else_case, replicated);
    } else if (const auto* attr = stmt.as<AttrStmtNode>()) {
      Visit(attr->body, replicated);
    } else if (const auto* assert_stmt = stmt.as<AssertStmtNode>()) {
      Visit(assert_stmt->body, replicated);
    } else if (const auto* allocate = stmt.as<AllocateNode>()) {
      Visit(allocate->body, replicated);
    } else if (const auto* store = stmt.as<BufferStoreNode>()) {
      // A store every thread runs on its own must go to memory of its own.
      const Object* data = store->buffer->data.get();
      if (replicated && inner_.count(data)) vars_.insert(data);
    } else if (const auto* evaluate = stmt.as<EvaluateNode>()) {
      // A call given an allocation's handle may write it.
      if (replicated) {
        PostOrderVisit(evaluate->value, [&](const ObjectRef& n) {
          if (inner_.count(n.get())) vars_.insert(n.get());
        });
      }
    }
  }

  VarSet vars_;
  VarSet inner_;
};

class VirtualThreadRewriter {
 public:
  VirtualThreadRewriter(const Var& vthread, int64_t count, const VarSet& per_thread,
                        bool coprocessor)
      : vthread_(vthread), count_(count), per_thread_(per_thread), coprocessor_(coprocessor) {}

  Stmt Rewrite(const Stmt& stmt) {
    if (const auto* seq = stmt.as<SeqStmtNode>()) {
      Array<Stmt> rewritten;
      for (const Stmt& s : seq->seq) {
        Stmt r = Rewrite(s);
        if (const auto* nested = r.as<SeqStmtNode>()) {
          rewritten.insert(rewritten.end(), nested->seq.begin(), nested->seq.end());
        } else {
          rewritten.push_back(r);
        }
      }
      return SeqStmt(rewritten);
    }
    if (Varies(stmt, per_thread_) || (coprocessor_ && IsCoprocScope(stmt))) {
      return Replicate(stmt);
    }
    if (const auto* loop = stmt.as<ForNode>()) {
      return For(loop->loop_var, loop->min, loop->extent, loop->for_kind, Rewrite(loop->body),
                 loop->thread_binding, loop->annotations);
    }
    if (const auto* loop = stmt.as<WhileNode>()) return While(loop->condition, Rewrite(loop->body));
    if (const auto* branch = stmt.as<IfThenElseNode>()) {
      Stmt else_case = branch->else_case.defined() ? Rewrite(branch->else_case) : Stmt();
      return IfThenElse(branch->condition, Rewrite(branch->then_case), else_case);
    }
    if (const auto* let = stmt.as<LetStmtNode>()) {
      return LetStmt(let->var, let->value, Rewrite(let->body));
    }
    if (const auto* attr = stmt.as<AttrStmtNode>()) {
      return AttrStmt(attr->node, attr->attr_key, attr->value, Rewrite(attr->body));
    }
    if (const auto* assert_stmt = stmt.as<AssertStmtNode>()) {
      return AssertStmt(assert_stmt->condition, assert_stmt->message, Rewrite(assert_stmt->body));
    }
    if (const auto* allocate = stmt.as<AllocateNode>()) return RewriteAllocate(allocate);
    return stmt;  // a store or evaluation the same in every thread: it runs once
  }

 private:
  Stmt RewriteAllocate(const AllocateNode* allocate) {
    if (!per_thread_.count(allocate->buffer_var.get())) {
      return Allocate(allocate->buffer_var, allocate->dtype, allocate->extents,
                      allocate->condition, Rewrite(allocate->body), allocate->storage_scope);
    }
    copies_.push_back(std::make_unique<detail::BufferCopies>(
        allocate, count_, "(one per virtual thread of '" + vthread_.name() + "')"));
    Array<PrimExpr> extents = copies_.back()->Extents();
    return Allocate(allocate->buffer_var, allocate->dtype, extents, allocate->condition,
                    Rewrite(allocate->body), allocate->storage_scope);
  }

  // One copy of `stmt` per thread, each using its own copies of the per-thread allocations.
  Stmt Replicate(const Stmt& stmt) {
    DataType t = vthread_.dtype();
    if (count_ > kMaxUnrolledThreads || ContainsLoop(stmt)) {
      return For(vthread_, make_zero(t), make_const(t, count_), ForKind::kSerial,
                 SelectCopies(stmt, vthread_), IterVar(), {});
    }
    Array<Stmt> threads;
    for (int64_t thread = 0; thread < count_; ++thread) {
      PrimExpr value = make_const(t, thread);
      threads.push_back(SelectCopies(Substitute(stmt, VarMap{{vthread_, value}}), value));
    }
    return threads.size() == 1 ? threads[0] : SeqStmt(threads);
  }

  Stmt SelectCopies(const Stmt& stmt, const PrimExpr& thread) {
    std::vector<std::pair<detail::BufferCopies*, PrimExpr>> choices;
    for (const auto& copies : copies_) choices.emplace_back(copies.get(), thread);
    return detail::SelectCopies(stmt, choices);
  }

  static bool IsCoprocScope(const Stmt& stmt) {
    const auto* attr = stmt.as<AttrStmtNode>();
    return attr != nullptr && attr->attr_key == attr::kCoprocScope;
  }

  Var vthread_;
  int64_t count_;
  const VarSet& per_thread_;
  bool coprocessor_;
  std::vector<std::unique_ptr<detail::BufferCopies>> copies_;
};

class VirtualThreadInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    // Inner scopes first: the outer scope then sees their threads already interleaved.
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    if (op->attr_key != attr::kVirtualThread) return visited;
    return Inject(visited.as<AttrStmtNode>());
  }

 private:
  static Stmt Inject(const AttrStmtNode* scope) {
    const auto* axis = scope->node.as<IterVarNode>();
    LOOM_CHECK_USER(axis != nullptr)
        << "a \"" << attr::kVirtualThread << "\" attribute must be about the IterVar of the "
        << "virtual thread axis; got " << ToScript(scope->node);
    const Var& vthread = axis->var;
    int64_t count = 0;
    LOOM_CHECK_USER(IsConstInt(scope->value, &count) && count >= 1)
        << "virtual thread '" << vthread.name() << "' needs a constant positive number of "
        << "threads; got " << ToScript(scope->value);
    if (!UsesVar(scope->body, vthread)) return scope->body;
    // A co-processor's virtual threads each own their copy of every buffer of the scope: what
    // lets one thread's load fill its copy while another thread computes on its own.
    const bool coprocessor = axis->thread_tag == "cthread";
    PerThreadAnalysis analysis(vthread, scope->body, coprocessor);
    return VirtualThreadRewriter(vthread, count, analysis.vars(), coprocessor)
        .Rewrite(scope->body);
  }
};

}  // namespace

Pass InjectVirtualThread() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = VirtualThreadInjector().VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 0, "InjectVirtualThread");
}

}  // namespace loom::tir::transform
