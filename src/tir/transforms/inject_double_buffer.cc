// InjectDoubleBuffer: a loop whose body starts with double_buffer_scope producers,
//
//   for i in [min, min + n): P(i); C(i)
//
// is software-pipelined over two halves of each double-buffered allocation:
//
//   P(min) into half 0
//   for i in [min, min + n - 1): P(i + 1) into half (i + 1 - min) % 2; C(i) from half (i - min) % 2
//   C(min + n - 1) from half (n - 1) % 2
//
// so that the load of the next tile (P) can run while this tile is computed (C). Moving
// P(i + 1) before C(i) is what the preconditions checked below make safe. Over shared
// buffers (a GPU block's tiles), P(i + 1) is marked double_buffer_write for ThreadSync.
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"
#include "tir/transforms/buffer_copies.h"

namespace loom::tir::transform {

namespace {

void Flatten(const Stmt& stmt, Array<Stmt>* out) {
  if (const auto* seq = stmt.as<SeqStmtNode>()) {
    for (const Stmt& s : seq->seq) Flatten(s, out);
  } else {
    out->push_back(stmt);
  }
}

Stmt SeqOf(const Array<Stmt>& stmts) {
  if (stmts.empty()) return Stmt();
  return stmts.size() == 1 ? stmts[0] : SeqStmt(stmts);
}

const AttrStmtNode* AsScope(const Stmt& stmt) {
  const auto* attr = stmt.as<AttrStmtNode>();
  return attr && attr->attr_key == attr::kDoubleBufferScope ? attr : nullptr;
}

// User error unless each double_buffer_scope in `body` leads the body of a loop (checked
// before any access is, so that a misplaced scope is reported as what it is).
void CheckScopesPlaced(const Stmt& body) {
  std::unordered_set<const Object*> placed;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    const auto* loop = n.as<ForNode>();
    if (!loop) return;
    Array<Stmt> parts;
    Flatten(loop->body, &parts);
    for (size_t k = 0; k < parts.size() && AsScope(parts[k]); ++k) placed.insert(parts[k].get());
  });
  PostOrderVisit(body, [&](const ObjectRef& n) {
    const AttrStmtNode* scope = n.as<StmtNode>() ? AsScope(Downcast<Stmt>(n)) : nullptr;
    LOOM_CHECK_USER(!scope || placed.count(scope))
        << "the " << attr::kDoubleBufferScope << " of " << ToScript(scope->node)
        << " must be a leading statement of the body of the loop it pipelines (around the "
        << "producer, before the consumer); it is not, in:\n"
        << ToScript(n);
  });
}

bool HasScopeFor(const Stmt& body, const Var& data) {
  bool found = false;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (const auto* attr = n.as<AttrStmtNode>()) {
      found |= attr->attr_key == attr::kDoubleBufferScope && attr->node.same_as(data);
    }
  });
  return found;
}

// The allocations (by data variable) a statement reads and writes. A handle passed to a call
// may be read or written: it counts as both, and is remembered with the call that uses it.
struct Accesses {
  std::unordered_map<const Object*, Var> reads;
  std::unordered_map<const Object*, Var> writes;
  std::unordered_map<const Object*, PrimExpr> handle_uses;

  explicit Accesses(const Stmt& stmt) {
    if (!stmt.defined()) return;
    PostOrderVisit(stmt, [&](const ObjectRef& n) {
      if (const auto* load = n.as<BufferLoadNode>()) {
        reads.emplace(load->buffer->data.get(), load->buffer->data);
      } else if (const auto* store = n.as<BufferStoreNode>()) {
        writes.emplace(store->buffer->data.get(), store->buffer->data);
      } else if (const auto* var = n.as<VarNode>(); var && var->dtype.is_handle()) {
        reads.emplace(var, Var(var));
        writes.emplace(var, Var(var));
        handle_uses.emplace(var, Var(var));
      } else if (const auto* call = n.as<CallNode>()) {
        for (const PrimExpr& arg : call->args) {
          if (arg.dtype().is_handle() && arg.as<VarNode>()) handle_uses[arg.get()] = Call(call);
        }
      }
    });
  }
};

class DoubleBufferInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!HasScopeFor(op->body, op->buffer_var)) return StmtExprMutator::VisitStmt_(op);
    CheckScopesPlaced(op->body);
    auto copies = std::make_unique<detail::BufferCopies>(op, 2, "(double buffering)");
    Array<PrimExpr> extents = copies->Extents();
    doubled_.emplace(op->buffer_var.get(), std::move(copies));
    if (op->storage_scope == "shared") shared_.insert(op->buffer_var.get());
    Stmt body = VisitStmt(op->body);
    doubled_.erase(op->buffer_var.get());
    shared_.erase(op->buffer_var.get());
    return Allocate(op->buffer_var, op->dtype, extents, op->condition, body, op->storage_scope);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Array<Stmt> parts;
    Flatten(op->body, &parts);
    size_t producers = 0;
    while (producers < parts.size() && AsScope(parts[producers])) ++producers;
    if (producers > 0) return Pipeline(op, parts, producers);
    if (IsMemoryIndependent(op->min) && IsMemoryIndependent(op->extent)) {
      analyzer_.Bind(op->loop_var, Range(op->min, op->extent), /*allow_override=*/true);
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    // Scopes in their place were consumed by Pipeline; any other one is misplaced.
    if (op->attr_key == attr::kDoubleBufferScope) CheckScopesPlaced(Stmt(op));
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    CheckInsideItsLoop(op->buffer, PrimExpr(op));
    return StmtExprMutator::VisitExpr_(op);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    CheckInsideItsLoop(op->buffer, Stmt(op));
    return StmtExprMutator::VisitStmt_(op);
  }

 private:
  void CheckInsideItsLoop(const Buffer& buffer, const ObjectRef& access) const {
    const Object* data = buffer->data.get();
    LOOM_CHECK_USER(!doubled_.count(data) || active_.count(data))
        << "buffer '" << buffer->name << "' is double-buffered, but accessed outside the loop "
        << "that pipelines it, in " << ToScript(access) << "; its two halves hold only that "
        << "loop's tiles, so keep every access inside the loop";
  }

  Stmt Pipeline(const ForNode* loop, const Array<Stmt>& parts, size_t producers) {
    const Var& i = loop->loop_var;
    std::vector<Var> buffers;
    Array<Stmt> produce_parts;
    for (size_t k = 0; k < producers; ++k) {
      const AttrStmtNode* scope = AsScope(parts[k]);
      const auto* data = scope->node.as<VarNode>();
      LOOM_CHECK_USER(data != nullptr)
          << "a " << attr::kDoubleBufferScope << " must be about a buffer's data variable; got "
          << ToScript(scope->node) << " in the loop over '" << i.name() << "'";
      LOOM_CHECK_USER(doubled_.count(data))
          << "cannot double-buffer '" << data->name_hint << "' in the loop over '" << i.name()
          << "': it is not allocated outside the loop; allocate it before the loop";
      bool seen = false;
      for (const Var& b : buffers) seen |= b.get() == data;
      if (!seen) buffers.push_back(Var(data));
      produce_parts.push_back(scope->body);
    }
    LOOM_CHECK_USER(loop->for_kind == ForKind::kSerial || loop->for_kind == ForKind::kUnrolled)
        << "cannot double-buffer '" << buffers[0].name() << "' in the loop over '" << i.name()
        << "': it is a " << ForKindName(loop->for_kind) << " loop, whose iterations are not "
        << "ordered; only serial and unrolled loops can be pipelined";

    // Loops inside are pipelined first, with this loop's buffers accessible.
    std::unordered_set<const Object*> outer_active = active_;
    for (const Var& b : buffers) active_.insert(b.get());
    for (Stmt& part : produce_parts) part = VisitStmt(part);
    Array<Stmt> consume_parts;
    for (size_t k = producers; k < parts.size(); ++k) consume_parts.push_back(VisitStmt(parts[k]));
    active_ = outer_active;
    Stmt produce = SeqOf(produce_parts);
    Stmt consume = SeqOf(consume_parts);
    CheckReorderable(i, buffers, produce, consume);
    return BuildPipeline(loop, buffers, produce, consume);
  }

  void CheckReorderable(const Var& i, const std::vector<Var>& buffers, const Stmt& produce,
                        const Stmt& consume) const {
    Accesses producer(produce), consumer(consume);
    std::string where = "in the loop over '" + i.name() + "'";
    for (const Var& b : buffers) {
      for (const Accesses* part : {&producer, &consumer}) {
        auto use = part->handle_uses.find(b.get());
        if (use != part->handle_uses.end()) {
          LOOM_THROW << doubled_.at(b.get())->HandleUseError(use->second);
        }
      }
      LOOM_CHECK_USER(!consumer.writes.count(b.get()))
          << "cannot double-buffer '" << b.name() << "' " << where << ": the consumer writes it "
          << "too; only the statements inside its " << attr::kDoubleBufferScope
          << " may write it";
    }
    std::string name = "'" + buffers[0].name() + "'";
    for (const auto& [data, var] : consumer.writes) {
      LOOM_CHECK_USER(!producer.reads.count(data) && !producer.writes.count(data))
          << "cannot double-buffer " << name << " " << where << ": its producer accesses '"
          << var.name() << "', which the consumer writes; producing the next tile before "
          << "this one is consumed would change what the producer sees";
    }
    for (const auto& [data, var] : producer.writes) {
      bool doubled = false;
      for (const Var& b : buffers) doubled |= b.get() == data;
      LOOM_CHECK_USER(doubled || !consumer.reads.count(data))
          << "cannot double-buffer " << name << " " << where << ": its producer also writes '"
          << var.name() << "', which the consumer reads; producing the next tile before this "
          << "one is consumed would overwrite what the consumer needs";
    }
  }

  Stmt BuildPipeline(const ForNode* loop, const std::vector<Var>& buffers, const Stmt& produce,
                     const Stmt& consume) {
    const Var& i = loop->loop_var;
    // The loop evaluated its bounds once; bounds that read memory are bound once here too.
    std::vector<std::pair<Var, PrimExpr>> bindings;
    auto once = [&](const PrimExpr& bound, const char* suffix) -> PrimExpr {
      if (IsMemoryIndependent(bound)) return bound;
      Var var(i.name() + suffix, bound.dtype());
      bindings.emplace_back(var, bound);
      return var;
    };
    PrimExpr min = once(loop->min, "_min");
    PrimExpr extent = once(loop->extent, "_extent");

    auto at = [&](const Stmt& stmt, const PrimExpr& iteration) {
      if (!stmt.defined()) return stmt;
      Stmt moved = iteration.same_as(i) ? stmt : Substitute(stmt, VarMap{{i, iteration}});
      PrimExpr half = analyzer_.Simplify(floormod(iteration - min, 2));
      std::vector<std::pair<detail::BufferCopies*, PrimExpr>> choices;
      for (const Var& b : buffers) choices.emplace_back(doubled_.at(b.get()).get(), half);
      return detail::SelectCopies(moved, choices);
    };

    Array<Stmt> pipeline{at(produce, min)};
    PrimExpr steady_extent = analyzer_.Simplify(extent - 1);
    int64_t steady = 0;
    if (!IsConstInt(steady_extent, &steady) || steady > 0) {
      Stmt next = at(produce, i + 1);
      bool all_shared = true;
      for (const Var& b : buffers) all_shared &= shared_.count(b.get()) > 0;
      if (all_shared) {
        for (const Var& b : buffers) next = AttrStmt(b, attr::kDoubleBufferWrite, i, next);
      }
      Array<Stmt> body{next};
      if (consume.defined()) body.push_back(at(consume, i));
      pipeline.push_back(For(i, min, steady_extent, loop->for_kind, SeqOf(body),
                             loop->thread_binding, loop->annotations));
    }
    if (consume.defined()) pipeline.push_back(at(consume, analyzer_.Simplify(min + extent - 1)));
    Stmt result = SeqOf(pipeline);
    if (!analyzer_.CanProve(extent >= 1)) {
      // A loop that provably never runs does nothing; otherwise the guard keeps it so.
      result = analyzer_.CanProve(extent < 1) ? Stmt(Evaluate(0))
                                              : Stmt(IfThenElse(extent >= 1, result, Stmt()));
    }
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) {
      result = LetStmt(it->first, it->second, result);
    }
    return result;
  }

  arith::Analyzer analyzer_;
  std::unordered_map<const Object*, std::unique_ptr<detail::BufferCopies>> doubled_;
  // Those of them in shared memory.
  std::unordered_set<const Object*> shared_;
  // The double-buffered allocations whose pipelined loop encloses the current statement.
  std::unordered_set<const Object*> active_;
};

}  // namespace

Pass InjectDoubleBuffer() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = DoubleBufferInjector().VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 0, "InjectDoubleBuffer");
}

}  // namespace loom::tir::transform
