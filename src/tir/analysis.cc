#include "loom/tir/analysis.h"

#include <algorithm>
#include <string>

#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"

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

namespace {

std::string NameOf(const PrimFunc& func) {
  auto symbol = func->attrs.find("global_symbol");
  const auto* text = symbol == func->attrs.end() ? nullptr : symbol->second.as<StringImmNode>();
  return text ? "'" + text->value + "'" : "the function";
}

}  // namespace

const Buffer& ParamBuffer(const PrimFunc& func, size_t index) {
  LOOM_CHECK_USER(index < func->params.size())
      << NameOf(func) << " has " << func->params.size() << " parameters, not " << index + 1;
  auto param =
      std::find_if(func->buffer_map.begin(), func->buffer_map.end(),
                   [&](const auto& entry) { return entry.first.same_as(func->params[index]); });
  LOOM_CHECK_USER(param != func->buffer_map.end())
      << NameOf(func) << ": parameter " << index << " is a scalar, not a buffer";
  return param->second;
}

std::vector<int64_t> ConstParamShape(const PrimFunc& func, size_t index) {
  std::vector<int64_t> shape;
  for (const PrimExpr& extent : ParamBuffer(func, index)->shape) {
    int64_t value = 0;
    LOOM_CHECK_USER(IsConstInt(extent, &value))
        << NameOf(func) << ": parameter " << index << " has a symbolic extent " << extent;
    shape.push_back(value);
  }
  return shape;
}

}  // namespace loom::tir
