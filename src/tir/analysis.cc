#include "loom/tir/analysis.h"

#include "loom/ir/functor.h"

namespace loom::tir {

namespace {

// Buffers are not walked by the visitors, but their data, shape, strides and offset are
// read by every access.
bool BufferUsesVar(const Buffer& buffer, const Var& var) {
  if (buffer->data.same_as(var)) return true;
  auto uses = [&](const PrimExpr& e) { return e.defined() && UsesVar(e, var); };
  for (const PrimExpr& e : buffer->shape) {
    if (uses(e)) return true;
  }
  for (const PrimExpr& e : buffer->strides) {
    if (uses(e)) return true;
  }
  return uses(buffer->elem_offset);
}

}  // namespace

bool UsesVar(const ObjectRef& node, const Var& var) {
  bool used = false;
  PostOrderVisit(node, [&](const ObjectRef& n) {
    if (used) return;
    if (n.same_as(var)) {
      used = true;
    } else if (const auto* load = n.as<BufferLoadNode>()) {
      used = BufferUsesVar(load->buffer, var);
    } else if (const auto* store = n.as<BufferStoreNode>()) {
      used = BufferUsesVar(store->buffer, var);
    }
  });
  return used;
}

bool HasSideEffect(const PrimExpr& expr) {
  bool effect = false;
  PostOrderVisit(expr, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>(); call && call->op->effect != CallEffect::kPure) {
      effect = true;
    }
  });
  return effect;
}

bool IsMemoryIndependent(const PrimExpr& expr) {
  bool independent = true;
  PostOrderVisit(expr, [&](const ObjectRef& n) {
    if (n.as<BufferLoadNode>()) independent = false;
    if (const auto* call = n.as<CallNode>(); call && call->op->effect != CallEffect::kPure) {
      independent = false;
    }
  });
  return independent;
}

bool IsNoOp(const Stmt& stmt) {
  const auto* evaluate = stmt.as<EvaluateNode>();
  return evaluate && !HasSideEffect(evaluate->value);
}

}  // namespace loom::tir
