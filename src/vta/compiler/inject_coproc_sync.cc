// InjectCoprocSync (loom/vta/compiler/passes.h): the dependency tokens between VTA's load,
// compute and store queues, on one thread's program, before virtual threads replicate it.
//
// The rule is a chain: wherever the program passes from work on one queue to work on another,
// the earlier queue pushes a token and the later one pops it. So every queue runs its
// instructions in program order and waits where program order crosses queues; a loop whose body
// ends on another queue than it starts carries a token from one iteration to the next. What
// runs on one queue needs no token (a queue is in order). Tokens only pass between neighbouring
// queues (load-compute, compute-store), so a load after a store, or a store after a load, hops
// through the compute queue.
//
// Overlap comes from virtual threads: InjectVirtualThread replicates each co-processor scope
// whole, tokens included, so thread t's pops pair with thread t's pushes, and one thread's
// loads run while another computes.
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

const DataType kI32 = DataType::Int(32);

// How long VTASynchronize lets a program run, in simulated cycles, before it reports a timeout:
// far beyond any program these schedules make, so that only a deadlock reaches it.
constexpr int64_t kSynchronizeCycles = int64_t{1} << 30;

PrimExpr CommandHandle() { return call_extern(DataType::Handle(), "VTATLSCommandHandle", {}); }

Stmt Token(const char* function, int from, int to) {
  return Evaluate(call_extern(
      kI32, function,
      {CommandHandle(), make_const(kI32, int64_t{from}), make_const(kI32, int64_t{to})}));
}

Stmt CoprocScope(int queue, const Stmt& body) {
  return AttrStmt(StringImm("vta"), Environment::kCoprocScope, make_const(kI32, int64_t{queue}),
                  body);
}

bool IsCoprocScope(const Stmt& stmt) {
  const auto* attr = stmt.as<AttrStmtNode>();
  return attr != nullptr && attr->attr_key == Environment::kCoprocScope;
}

bool IsPragma(const AttrStmtNode* attr, const char* key) {
  return attr->attr_key == std::string("pragma_") + key;
}

// Whether `attr` is one piece of co-processor work: a GEMM kernel's coproc_scope, or a
// dma_copy or alu pragma'd stage.
bool IsCoprocWork(const AttrStmtNode* attr) {
  return attr->attr_key == Environment::kCoprocScope || IsPragma(attr, Environment::kDmaCopy) ||
         IsPragma(attr, Environment::kAlu);
}

// Whether `stmt` holds work for the co-processor.
bool HasCoprocWork(const Stmt& stmt) {
  bool work = false;
  PostOrderVisit(stmt, [&](const ObjectRef& n) {
    if (const auto* attr = n.as<AttrStmtNode>()) work |= IsCoprocWork(attr);
  });
  return work;
}

Stmt Seq(std::vector<Stmt> stmts) {
  return stmts.size() == 1 ? stmts[0] : SeqStmt(Array<Stmt>(stmts.begin(), stmts.end()));
}

// The co-processor work of a statement: the queues of its first and last instructions (0: it
// has none), and whether all of it runs on one queue.
struct Ends {
  int enter = 0, exit = 0;
  bool one_queue = true;
  bool active() const { return enter != 0; }
};

// How the work on queue `from` is made to finish before the work on queue `to` starts.
struct Order {
  std::vector<Stmt> pushes;  // on `from`, after the earlier work
  std::vector<Stmt> hops;    // co-processor scopes between the two (through compute)
  std::vector<Stmt> pops;    // on `to`, before the later work

  Order(int from, int to) {
    if (std::abs(from - to) == 1) {
      pushes = {Token("VTADepPush", from, to)};
      pops = {Token("VTADepPop", from, to)};
      return;
    }
    const int hop = Environment::kComputeQueue;
    pushes = {Token("VTADepPush", from, hop)};
    hops = {
        CoprocScope(hop, SeqStmt({Token("VTADepPop", from, hop), Token("VTADepPush", hop, to)}))};
    pops = {Token("VTADepPop", hop, to)};
  }
};

// `stmts` under `condition`.
std::vector<Stmt> Guard(const std::vector<Stmt>& stmts, const PrimExpr& condition) {
  std::vector<Stmt> guarded;
  for (const Stmt& s : stmts) guarded.push_back(IfThenElse(condition, s, Stmt()));
  return guarded;
}

// `tokens` before the first co-processor instruction of `stmt` (`at_front`) or after its last,
// on `queue`: inside the co-processor scope that holds it, unless a loop or a virtual thread
// scope holds it, which would repeat them; then in a scope of their own before or after it.
Stmt AddAt(const Stmt& stmt, bool at_front, int queue, const std::vector<Stmt>& tokens) {
  if (tokens.empty()) return stmt;
  if (const auto* scope = stmt.as<AttrStmtNode>(); scope && IsCoprocScope(stmt)) {
    std::vector<Stmt> body = tokens;
    if (at_front) {
      body.push_back(scope->body);
    } else {
      body.insert(body.begin(), scope->body);
    }
    return AttrStmt(scope->node, scope->attr_key, scope->value, Seq(body));
  }
  if (const auto* seq = stmt.as<SeqStmtNode>()) {
    std::vector<Stmt> children(seq->seq.begin(), seq->seq.end());
    for (size_t k = 0; k < children.size(); ++k) {
      size_t i = at_front ? k : children.size() - 1 - k;
      if (HasCoprocWork(children[i])) {
        children[i] = AddAt(children[i], at_front, queue, tokens);
        return Seq(children);
      }
    }
  }
  // Not into a virtual thread scope, which would replicate the tokens per thread.
  if (const auto* attr = stmt.as<AttrStmtNode>();
      attr && attr->attr_key != tir::transform::attr::kVirtualThread) {
    return AttrStmt(attr->node, attr->attr_key, attr->value,
                    AddAt(attr->body, at_front, queue, tokens));
  }
  if (const auto* allocate = stmt.as<AllocateNode>()) {
    return Allocate(allocate->buffer_var, allocate->dtype, allocate->extents, allocate->condition,
                    AddAt(allocate->body, at_front, queue, tokens), allocate->storage_scope);
  }
  if (const auto* let = stmt.as<LetStmtNode>()) {
    return LetStmt(let->var, let->value, AddAt(let->body, at_front, queue, tokens));
  }
  Stmt own = CoprocScope(queue, Seq(tokens));
  return at_front ? SeqStmt({own, stmt}) : SeqStmt({stmt, own});
}

// The device runs a function's VTA work only at the VTASynchronize that ends it, so host
// computation must come before all of it: a host statement after VTA work in program order, or
// in a loop that also holds VTA work, would run before the device computed what it follows.
class HostOrderCheck {
 public:
  void Visit(const Stmt& stmt, bool in_device_loop) {
    if (const auto* attr = stmt.as<AttrStmtNode>()) {
      if (IsCoprocWork(attr)) {
        device_work_seen_ = true;
        return;
      }
      return Visit(attr->body, in_device_loop);
    }
    if (const auto* allocate = stmt.as<AllocateNode>()) return Visit(allocate->body, in_device_loop);
    if (const auto* let = stmt.as<LetStmtNode>()) return Visit(let->body, in_device_loop);
    if (const auto* seq = stmt.as<SeqStmtNode>()) {
      for (const Stmt& child : seq->seq) Visit(child, in_device_loop);
      return;
    }
    if (const auto* loop = stmt.as<ForNode>()) {
      return Visit(loop->body, in_device_loop || HasCoprocWork(loop->body));
    }
    if (HasCoprocWork(stmt)) return;  // under a condition: SyncInjector says why that fails
    const auto* evaluate = stmt.as<EvaluateNode>();
    if (evaluate != nullptr && evaluate->value.as<IntImmNode>()) return;  // no effect
    LOOM_CHECK_USER(!device_work_seen_ && !in_device_loop)
        << "host computation " << ToScript(stmt) << " follows VTA work"
        << (in_device_loop ? " in a loop that holds VTA work" : "")
        << "; the device runs a function's VTA work only when the function ends (at "
        << "VTASynchronize), so the host would run first: make the stage VTA work (a pragma or "
        << "the GEMM intrinsic), or compute it in another function";
  }

 private:
  bool device_work_seen_ = false;
};

class SyncInjector {
 public:
  std::pair<Stmt, Ends> Visit(const Stmt& stmt) {
    if (const auto* attr = stmt.as<AttrStmtNode>()) {
      if (attr->attr_key == Environment::kCoprocScope) {
        const auto* queue = attr->value.as<IntImmNode>();
        LOOM_ICHECK(queue != nullptr) << "a co-processor scope names its queue by a constant";
        const int q = static_cast<int>(queue->value);
        return {stmt, {q, q, true}};
      }
      if (IsPragma(attr, Environment::kDmaCopy)) {
        const int q = CopyQueue(attr->body);
        return {stmt, {q, q, true}};
      }
      if (IsPragma(attr, Environment::kAlu)) {
        const int q = Environment::kComputeQueue;
        return {stmt, {q, q, true}};
      }
      auto [body, ends] = Visit(attr->body);
      // A virtual thread's work on one queue is one scope inside the threads' scope, which
      // InjectVirtualThread replicates per thread (the statement around may wrap the threads'
      // scope again, for the tokens that order it with work outside).
      if (attr->attr_key == tir::transform::attr::kVirtualThread && ends.active() &&
          ends.one_queue && !IsCoprocScope(body)) {
        body = CoprocScope(ends.enter, body);
      }
      return {AttrStmt(attr->node, attr->attr_key, attr->value, body), ends};
    }
    if (const auto* allocate = stmt.as<AllocateNode>()) {
      scopes_[allocate->buffer_var.get()] = allocate->storage_scope;
      auto [body, ends] = Visit(allocate->body);
      return {Allocate(allocate->buffer_var, allocate->dtype, allocate->extents,
                       allocate->condition, body, allocate->storage_scope),
              ends};
    }
    if (const auto* let = stmt.as<LetStmtNode>()) {
      auto [body, ends] = Visit(let->body);
      return {LetStmt(let->var, let->value, body), ends};
    }
    if (const auto* seq = stmt.as<SeqStmtNode>()) return VisitSeq(seq);
    if (const auto* loop = stmt.as<ForNode>()) return VisitFor(loop);
    LOOM_CHECK_USER(!HasCoprocWork(stmt))
        << "VTA co-processor work under a " << (stmt.as<IfThenElseNode>() ? "condition" : "")
        << (stmt.as<WhileNode>() ? "while loop" : "") << (stmt.as<AssertStmtNode>() ? "assert" : "")
        << " cannot be synchronized (the dependency tokens must pair up on every path): "
        << ToScript(stmt) << "; schedule the stage without the branch (a split that divides "
        << "evenly needs none)";
    return {stmt, {}};
  }

 private:
  // The queue of the copy under a dma_copy pragma, from the scope of the buffer it writes.
  int CopyQueue(const Stmt& copy) const {
    std::string written;
    PostOrderVisit(copy, [&](const ObjectRef& n) {
      if (const auto* store = n.as<BufferStoreNode>()) {
        auto scope = scopes_.find(store->buffer->data.get());
        written = scope == scopes_.end() ? "global" : scope->second;
      }
    });
    const bool to_chip = written.rfind("local.", 0) == 0;
    return Environment::CopyQueue(written, to_chip);
  }

  std::pair<Stmt, Ends> VisitSeq(const SeqStmtNode* seq) {
    std::vector<Stmt> stmts;
    std::vector<Ends> ends;
    Ends all;
    for (const Stmt& child : seq->seq) {
      auto [s, e] = Visit(child);
      stmts.push_back(s);
      ends.push_back(e);
      if (!e.active()) continue;
      if (!all.active()) all.enter = e.enter;
      all.one_queue = all.one_queue && e.one_queue && e.enter == all.enter;
      all.exit = e.exit;
    }
    // One queue throughout: in order as it is; the statement around decides its scope.
    if (all.one_queue) return {Seq(stmts), all};
    // Consecutive parts on the same queue become one co-processor scope (the unit virtual
    // threads replicate), and tokens order consecutive parts on different queues.
    for (size_t i = 0; i + 1 < stmts.size();) {
      const Ends &a = ends[i], &b = ends[i + 1];
      if (a.active() && b.active() && a.one_queue && b.one_queue && a.enter == b.enter) {
        stmts[i] = SeqStmt({stmts[i], stmts[i + 1]});
        stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        ends.erase(ends.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      } else {
        ++i;
      }
    }
    std::vector<Stmt> out;
    int previous = -1;  // index in `out` of the last part with work
    int previous_exit = 0;
    for (size_t i = 0; i < stmts.size(); ++i) {
      Stmt s = stmts[i];
      const Ends& e = ends[i];
      if (!e.active()) {
        out.push_back(s);
        continue;
      }
      if (e.one_queue && !IsCoprocScope(s)) s = CoprocScope(e.enter, s);
      if (previous >= 0 && previous_exit != e.enter) {
        Order order(previous_exit, e.enter);
        out[previous] = AddAt(out[previous], false, previous_exit, order.pushes);
        out.insert(out.end(), order.hops.begin(), order.hops.end());
        s = AddAt(s, true, e.enter, order.pops);
      }
      previous = static_cast<int>(out.size());
      previous_exit = e.exit;
      out.push_back(s);
    }
    return {Seq(out), all};
  }

  std::pair<Stmt, Ends> VisitFor(const ForNode* loop) {
    // Each thread of a parallel loop would queue its share on a command queue of its own,
    // which nothing synchronizes.
    LOOM_CHECK_USER(loop->for_kind == ForKind::kSerial || loop->for_kind == ForKind::kUnrolled ||
                    !HasCoprocWork(loop->body))
        << "VTA co-processor work inside the non-serial loop over '" << loop->loop_var.name()
        << "' (" << ForKindName(loop->for_kind) << "): one host thread drives the device's "
        << "queues; make the loop serial (no parallel, vectorize or thread binding around VTA "
        << "stages)";
    auto [body, ends] = Visit(loop->body);
    if (ends.active() && !ends.one_queue && ends.exit != ends.enter) {
      // Iteration i + 1 starts on `enter` after iteration i ends on `exit`: a token carried
      // from each iteration to the next, neither pushed by the last nor popped by the first.
      Order order(ends.exit, ends.enter);
      const PrimExpr& i = loop->loop_var;
      PrimExpr not_first = i != loop->min;
      PrimExpr not_last = i != loop->min + loop->extent - 1;
      body = AddAt(body, true, ends.enter, Guard(order.pops, not_first));
      std::vector<Stmt> carried = {AddAt(body, false, ends.exit, Guard(order.pushes, not_last))};
      for (const Stmt& hop : Guard(order.hops, not_last)) carried.push_back(hop);
      body = Seq(carried);
    }
    return {For(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->thread_binding,
                loop->annotations),
            ends};
  }

  std::unordered_map<const Object*, std::string> scopes_;
};

}  // namespace

tir::transform::Pass InjectCoprocSync() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    auto [body, ends] = SyncInjector().Visit(func->body);
    if (!ends.active()) return func;
    HostOrderCheck().Visit(func->body, false);
    // The host waits for the co-processor before it returns, and fails with the runtime's
    // message if any call of the program failed (the runtime then ran none of it).
    Stmt wait = Evaluate(call_extern(kI32, "VTASynchronize",
                                     {CommandHandle(), make_const(kI32, kSynchronizeCycles)}));
    auto symbol = func->attrs.find("global_symbol");
    const auto* name = symbol == func->attrs.end() ? nullptr : symbol->second.as<StringImmNode>();
    const std::string who = name != nullptr ? name->value : "the VTA program";
    Var error("vta_error", DataType::Handle());
    Stmt check = LetStmt(
        error, call_extern(DataType::Handle(), "VTATakeLastError", {}),
        Evaluate(Call(kI32, Op::Get("loom_check"),
                      {Call(DataType::Bool(), Op::Get("loom_handle_is_null"), {error}),
                       StringImm(who + ": the VTA runtime failed: %s"), error})));
    return tir::transform::WithBody(func, SeqStmt({body, wait, check}));
  };
  return tir::transform::CreatePrimFuncPass(rewrite, 0, "vta.InjectCoprocSync");
}

}  // namespace loom::vta
