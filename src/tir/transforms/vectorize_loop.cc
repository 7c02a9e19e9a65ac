// VectorizeLoop: a loop of kind vectorized with constant extent n becomes straight-line code
// over n-lane vectors. The loop variable becomes Ramp(min, 1, n); every expression that
// depends on it is widened lane by lane (scalar operands are broadcast); loads and stores
// whose indices depend on it become vector accesses (a Ramp index is a contiguous or strided
// access, any other vector index a gather or scatter).
//
// Vector code runs each statement for all lanes before the next statement, where the serial
// loop runs all statements for one iteration before the next. The two agree only when no
// iteration sees memory another one writes, so the loop stays serial (the scalar fallback)
// whenever this cannot be shown or the body has no vector form:
//   - a nested loop, an Allocate, a While or an AttrStmt in the body;
//   - an if or assert whose condition depends on the loop variable;
//   - a call that is not pure (it would run once instead of n times), an external call or
//     tvm_tuple depending on the loop variable (externals take scalars);
//   - an if_then_else whose condition depends on the loop variable and whose branches could
//     fault (load, divide, cast or call): the vector form evaluates both branches;
//   - an expression that already is a vector, or reads a vector-element buffer, and
//     depends on the loop variable (nested vectorized loops: the inner one is vectorized
//     first, so the outer one stays serial around it);
//   - a buffer the body writes that is not accessed everywhere in the body through one and
//     the same index, or whose stores may hit one element from two lanes (the index is not
//     a Ramp with a non-zero constant stride in some dimension).
#include <optional>
#include <unordered_map>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// DLPack stores the lane count in 16 bits.
constexpr int64_t kMaxLanes = 65535;

int Lanes(const PrimExpr& e) { return e.dtype().lanes(); }

PrimExpr Widen(const PrimExpr& e, int lanes) {
  if (Lanes(e) == lanes) return e;
  LOOM_ICHECK(e.dtype().is_scalar()) << "widening " << e << " to " << lanes << " lanes";
  return Broadcast(e, lanes);
}

bool SameObjects(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
  for (size_t k = 0; k < a.size(); ++k) {
    if (!a[k].same_as(b[k])) return false;
  }
  return a.size() == b.size();
}

bool IsNonZeroStrideRamp(const PrimExpr& e) {
  const auto* ramp = e.as<RampNode>();
  int64_t stride = 0;
  return ramp && IsConstInt(ramp->stride, &stride) && stride != 0;
}

// Whether every buffer the body writes is accessed everywhere in it through one index, so
// that each iteration touches its own element of that buffer (with injective stores, which
// the vectorizer checks on the vector index).
bool WrittenBuffersUseOneIndex(const Stmt& body) {
  struct Access {
    Buffer buffer;
    Array<PrimExpr> indices;
  };
  std::unordered_map<const Object*, std::vector<Access>> accesses;
  std::unordered_map<const Object*, bool> written;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    if (const auto* load = node.as<BufferLoadNode>()) {
      accesses[load->buffer->data.get()].push_back({load->buffer, load->indices});
    } else if (const auto* store = node.as<BufferStoreNode>()) {
      accesses[store->buffer->data.get()].push_back({store->buffer, store->indices});
      written[store->buffer->data.get()] = true;
    }
  });
  for (const auto& [data, list] : accesses) {
    if (!written.count(data)) continue;
    for (const Access& access : list) {
      if (!StructuralEqual(access.buffer, list[0].buffer)) return false;
      if (access.indices.size() != list[0].indices.size()) return false;
      for (size_t k = 0; k < access.indices.size(); ++k) {
        if (!StructuralEqual(access.indices[k], list[0].indices[k])) return false;
      }
    }
  }
  return true;
}

bool CallsImpureFunction(const Stmt& body) {
  bool impure = false;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    if (const auto* call = node.as<CallNode>()) impure |= call->op->effect != CallEffect::kPure;
  });
  return impure;
}

// Whether evaluating `e` can fail at run time (the interpreter's errors, generated code's
// undefined behaviour): such expressions must not be evaluated in lanes that did not ask.
bool MayFault(const PrimExpr& e) {
  bool may_fault = false;
  PostOrderVisit(e, [&](const ObjectRef& node) {
    may_fault |= node.as<BufferLoadNode>() || node.as<DivNode>() || node.as<ModNode>() ||
                 node.as<FloorDivNode>() || node.as<FloorModNode>() || node.as<CastNode>() ||
                 node.as<CallNode>();
  });
  return may_fault;
}

// Rewrites a loop body into vector code over `lanes` lanes of the loop variable; sets
// failed() when the body has no vector form (see the file comment).
class BodyVectorizer : public StmtExprMutator {
 public:
  BodyVectorizer(const Var& loop_var, PrimExpr ramp)
      : lanes_(Lanes(ramp)) {
    vector_vars_[loop_var.get()] = std::move(ramp);
  }

  bool failed() const { return failed_; }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override {
    if (failed_) return e;
    PrimExpr result = StmtExprMutator::VisitExpr(e);
    // An input vector that depends on the loop would need vectors of vectors.
    if (!e.dtype().is_scalar() && !result.same_as(e)) return Fail(e);
    return result;
  }

  Stmt VisitStmt(const Stmt& s) override {
    if (failed_) return s;
    return StmtExprMutator::VisitStmt(s);
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vector_vars_.find(op);
    return it == vector_vars_.end() ? PrimExpr(op) : it->second;
  }

  PrimExpr VisitExpr_(const CastNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    if (failed_ || value.same_as(op->value)) return PrimExpr(op);
    // An index widened (int32 to int64: a loop's lane into a buffer of symbolic, int64 size)
    // stays a Ramp, so the access stays contiguous: the narrow lanes do not wrap, as an
    // index that did would be out of range in either type.
    const auto* ramp = value.as<RampNode>();
    const DataType from = value.dtype().element_of(), to = op->dtype.element_of();
    if (ramp != nullptr && from.is_int() && to.is_int() && to.bits() >= from.bits()) {
      return Ramp(cast(to, ramp->base), cast(to, ramp->stride), ramp->lanes);
    }
    return Cast(op->dtype.with_lanes(Lanes(value)), value);
  }

  // Affine index arithmetic stays a Ramp (A[i * 2 + 1] loads A[T.Ramp(1, 2, n)]); the lanes
  // agree with the widened form modulo 2^bits, which is how integers wrap.
  PrimExpr VisitExpr_(const AddNode* op) override {
    return Binary(op, [](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
      const auto* ra = a.as<RampNode>();
      const auto* rb = b.as<RampNode>();
      if (ra && rb) return Ramp(ra->base + rb->base, ra->stride + rb->stride, ra->lanes);
      if (ra && b.dtype().is_scalar()) return Ramp(ra->base + b, ra->stride, ra->lanes);
      if (rb && a.dtype().is_scalar()) return Ramp(a + rb->base, rb->stride, rb->lanes);
      return PrimExpr();
    }, [](const PrimExpr& a, const PrimExpr& b) { return PrimExpr(Add(a, b)); });
  }
  PrimExpr VisitExpr_(const SubNode* op) override {
    return Binary(op, [](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
      const auto* ra = a.as<RampNode>();
      const auto* rb = b.as<RampNode>();
      if (ra && rb) return Ramp(ra->base - rb->base, ra->stride - rb->stride, ra->lanes);
      if (ra && b.dtype().is_scalar()) return Ramp(ra->base - b, ra->stride, ra->lanes);
      if (rb && a.dtype().is_scalar()) return Ramp(a - rb->base, -rb->stride, rb->lanes);
      return PrimExpr();
    }, [](const PrimExpr& a, const PrimExpr& b) { return PrimExpr(Sub(a, b)); });
  }
  PrimExpr VisitExpr_(const MulNode* op) override {
    return Binary(op, [](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
      const auto* ra = a.as<RampNode>();
      const auto* rb = b.as<RampNode>();
      if (ra && b.dtype().is_scalar()) return Ramp(ra->base * b, ra->stride * b, ra->lanes);
      if (rb && a.dtype().is_scalar()) return Ramp(a * rb->base, a * rb->stride, rb->lanes);
      return PrimExpr();
    }, [](const PrimExpr& a, const PrimExpr& b) { return PrimExpr(Mul(a, b)); });
  }

#define LOOM_VECTORIZE_BINARY(Kind)                                                   \
  PrimExpr VisitExpr_(const Kind##Node* op) override {                                \
    return Binary(op, [](const PrimExpr&, const PrimExpr&) { return PrimExpr(); },    \
                  [](const PrimExpr& a, const PrimExpr& b) { return PrimExpr(Kind(a, b)); }); \
  }
  LOOM_VECTORIZE_BINARY(Div)
  LOOM_VECTORIZE_BINARY(Mod)
  LOOM_VECTORIZE_BINARY(FloorDiv)
  LOOM_VECTORIZE_BINARY(FloorMod)
  LOOM_VECTORIZE_BINARY(Min)
  LOOM_VECTORIZE_BINARY(Max)
  LOOM_VECTORIZE_BINARY(EQ)
  LOOM_VECTORIZE_BINARY(NE)
  LOOM_VECTORIZE_BINARY(LT)
  LOOM_VECTORIZE_BINARY(LE)
  LOOM_VECTORIZE_BINARY(GT)
  LOOM_VECTORIZE_BINARY(GE)
  LOOM_VECTORIZE_BINARY(And)
  LOOM_VECTORIZE_BINARY(Or)
#undef LOOM_VECTORIZE_BINARY

  PrimExpr VisitExpr_(const NotNode* op) override {
    PrimExpr a = VisitExpr(op->a);
    if (failed_ || a.same_as(op->a)) return PrimExpr(op);
    return Not(a);
  }

  PrimExpr VisitExpr_(const SelectNode* op) override {
    PrimExpr condition = VisitExpr(op->condition);
    PrimExpr true_value = VisitExpr(op->true_value);
    PrimExpr false_value = VisitExpr(op->false_value);
    if (failed_) return PrimExpr(op);
    if (condition.same_as(op->condition) && true_value.same_as(op->true_value) &&
        false_value.same_as(op->false_value)) {
      return PrimExpr(op);
    }
    // A scalar condition may pick between vectors; a vector one picks lane by lane.
    return Select(condition, Widen(true_value, lanes_), Widen(false_value, lanes_));
  }

  PrimExpr VisitExpr_(const LetNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = BindLetVar(op->var, value);
    PrimExpr body = VisitExpr(op->body);
    if (failed_) return PrimExpr(op);
    if (value.same_as(op->value) && body.same_as(op->body)) return PrimExpr(op);
    return Let(var, value, body);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    Array<PrimExpr> args;
    bool changed = false;
    for (const PrimExpr& arg : op->args) {
      args.push_back(VisitExpr(arg));
      changed |= !args.back().same_as(arg);
    }
    if (failed_ || !changed) return PrimExpr(op);
    const std::string& name = op->op->name;
    if (name == "call_pure_extern" || name == "call_extern" || name == "tvm_tuple" ||
        name == "call_llvm_pure_intrin" || name == "call_llvm_intrin") {
      return Fail(PrimExpr(op));
    }
    if (name == "if_then_else") {
      if (args[0].dtype().is_scalar()) {
        return Call(op->dtype.with_lanes(lanes_), op->op,
                    {args[0], Widen(args[1], lanes_), Widen(args[2], lanes_)});
      }
      if (MayFault(args[1]) || MayFault(args[2])) return Fail(PrimExpr(op));
    }
    for (PrimExpr& arg : args) arg = Widen(arg, lanes_);
    return Call(op->dtype.with_lanes(lanes_), op->op, args);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> indices = VisitIndices(op->indices);
    if (failed_ || SameObjects(indices, op->indices)) return PrimExpr(op);
    if (!op->buffer->dtype.is_scalar()) return Fail(PrimExpr(op));
    return BufferLoad(op->buffer, indices);
  }

  PrimExpr VisitExpr_(const ReduceNode* op) override { return Fail(PrimExpr(op)); }
  // Vector nodes of the input stay as they are, unless the loop variable is inside them.
  PrimExpr VisitExpr_(const RampNode* op) override {
    return KeepUnlessLoopDependent(op, {op->base, op->stride});
  }
  PrimExpr VisitExpr_(const BroadcastNode* op) override {
    return KeepUnlessLoopDependent(op, {op->value});
  }
  PrimExpr VisitExpr_(const ShuffleNode* op) override {
    return KeepUnlessLoopDependent(op, op->vectors);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Array<PrimExpr> indices = VisitIndices(op->indices);
    if (failed_) return Stmt(op);
    // Lanes storing to one element would leave the last lane's value, where the serial loop
    // may have read the element between stores (A[0] = A[0] + 1).
    bool injective = false;
    for (const PrimExpr& index : indices) injective |= IsNonZeroStrideRamp(index);
    if (!injective || !op->buffer->dtype.is_scalar()) {
      Fail(PrimExpr());
      return Stmt(op);
    }
    return BufferStore(op->buffer, Widen(value, lanes_), indices);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = BindLetVar(op->var, value);
    Stmt body = VisitStmt(op->body);
    if (failed_) return Stmt(op);
    if (value.same_as(op->value) && body.same_as(op->body)) return Stmt(op);
    return LetStmt(var, value, body);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    return ScalarConditionOnly(op, op->condition);
  }
  Stmt VisitStmt_(const AssertStmtNode* op) override {
    return ScalarConditionOnly(op, op->condition);
  }

  Stmt VisitStmt_(const ForNode* op) override { return FailStmt(op); }
  Stmt VisitStmt_(const AllocateNode* op) override { return FailStmt(op); }
  Stmt VisitStmt_(const WhileNode* op) override { return FailStmt(op); }
  Stmt VisitStmt_(const AttrStmtNode* op) override { return FailStmt(op); }

 private:
  PrimExpr Fail(const PrimExpr& e) {
    failed_ = true;
    return e;
  }
  Stmt FailStmt(const StmtNode* op) {
    failed_ = true;
    return Stmt(op);
  }

  // `special` may give a better form (a Ramp) from the visited operands, or undefined;
  // `make` builds the lane-wise node from operands widened to the same lanes.
  template <typename NodeT, typename Special, typename Make>
  PrimExpr Binary(const NodeT* op, Special special, Make make) {
    PrimExpr a = VisitExpr(op->a);
    PrimExpr b = VisitExpr(op->b);
    if (failed_ || (a.same_as(op->a) && b.same_as(op->b))) return PrimExpr(op);
    if (PrimExpr better = special(a, b); better.defined()) return better;
    return make(Widen(a, lanes_), Widen(b, lanes_));
  }

  PrimExpr KeepUnlessLoopDependent(const ExprNode* op, const Array<PrimExpr>& children) {
    for (const PrimExpr& child : children) {
      if (!VisitExpr(child).same_as(child)) return Fail(PrimExpr(op));
    }
    return PrimExpr(op);
  }

  Array<PrimExpr> VisitIndices(const Array<PrimExpr>& indices) {
    Array<PrimExpr> out;
    for (const PrimExpr& index : indices) out.push_back(VisitExpr(index));
    return out;
  }

  // A variable bound to a vector gets a vector-typed twin that its uses read.
  Var BindLetVar(const Var& var, const PrimExpr& value) {
    if (failed_ || value.dtype() == var.dtype()) return var;
    Var twin(var.name(), value.dtype());
    vector_vars_[var.get()] = twin;
    return twin;
  }

  // An if or assert stays as it is around vectorized code when its condition does not
  // depend on the loop; otherwise lanes would need to take different paths.
  template <typename NodeT>
  Stmt ScalarConditionOnly(const NodeT* op, const PrimExpr& condition) {
    if (!VisitExpr(condition).same_as(condition)) return FailStmt(op);
    return StmtExprMutator::VisitStmt_(op);
  }

  int lanes_;
  std::unordered_map<const Object*, PrimExpr> vector_vars_;
  bool failed_ = false;
};

class LoopVectorizer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  // Post-order: an inner vectorized loop becomes vector code first, so an enclosing
  // vectorized loop then sees loop-dependent vectors and stays serial.
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    if (loop->for_kind != ForKind::kVectorized) return visited;
    int64_t extent = 0;
    LOOM_CHECK_USER(IsConstInt(loop->extent, &extent))
        << "cannot vectorize the loop over '" << loop->loop_var.name() << "': its extent "
        << ToScript(loop->extent) << " is not a constant; split the loop by a constant factor "
        << "and vectorize the inner loop";
    LOOM_CHECK_USER(extent <= kMaxLanes)
        << "cannot vectorize the loop over '" << loop->loop_var.name() << "': its extent "
        << extent << " exceeds the largest vector (" << kMaxLanes << " lanes); split it";
    if (extent <= 0) return Evaluate(0);
    if (extent == 1) {
      if (IsMemoryIndependent(loop->min)) {
        return Substitute(loop->body, VarMap{{loop->loop_var, loop->min}});
      }
      return LetStmt(loop->loop_var, loop->min, loop->body);
    }
    if (WrittenBuffersUseOneIndex(loop->body) && !CallsImpureFunction(loop->body)) {
      PrimExpr ramp = Ramp(loop->min, make_const(loop->min.dtype(), int64_t{1}),
                           static_cast<int>(extent));
      BodyVectorizer vectorizer(loop->loop_var, ramp);
      Stmt body = vectorizer.VisitStmt(loop->body);
      if (!vectorizer.failed()) return body;
    }
    return For(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body,
               loop->thread_binding, loop->annotations);
  }
};

}  // namespace

Pass VectorizeLoop() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = LoopVectorizer().VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 0, "VectorizeLoop");
}

}  // namespace loom::tir::transform
