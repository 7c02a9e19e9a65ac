// The loop nests of the VTA passes (loop_nest.h).
#include "vta/compiler/loop_nest.h"

#include <cstdlib>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/stmt_functor.h"

namespace loom::vta::detail {

LoopNest::LoopNest(std::string what, Stmt nest) : what_(std::move(what)), nest_(std::move(nest)) {
  Stmt body = nest_;
  while (const auto* loop = body.as<ForNode>()) {
    int64_t min = -1, extent = 0;
    if (!IsConstInt(loop->min, &min) || min != 0 || !IsConstInt(loop->extent, &extent)) {
      Fail("loop '" + loop->loop_var.name() + "' must start at 0 and have a constant extent");
    }
    loops_.push_back({loop->loop_var, extent});
    body = loop->body;
  }
  innermost_ = body;
}

void LoopNest::Fail(const std::string& why) const {
  LOOM_THROW << what_ << ": " << why << "; in\n" << ToScript(nest_);
}

LinearIndex LoopNest::Linear(const PrimExpr& index, arith::Analyzer* analyzer) const {
  tir::VarMap zero;
  for (const Loop& loop : loops_) zero[loop.var] = make_const(loop.var.dtype(), int64_t{0});
  LinearIndex linear;
  linear.base = analyzer->Simplify(tir::Substitute(index, zero));
  PrimExpr rebuilt = linear.base;
  for (const Loop& loop : loops_) {
    tir::VarMap one = zero;
    one[loop.var] = make_const(loop.var.dtype(), int64_t{1});
    int64_t coefficient = 0;
    if (!IsConstInt(analyzer->Simplify(tir::Substitute(index, one) - linear.base), &coefficient)) {
      Fail("index " + ToScript(index) + " is not linear in loop '" + loop.var.name() + "'");
    }
    linear.coefficients.push_back(coefficient);
    rebuilt = rebuilt + make_const(index.dtype(), coefficient) * loop.var;
  }
  if (!analyzer->CanProveEqual(index, rebuilt)) {
    Fail("index " + ToScript(index) + " is not linear in the loops");
  }
  return linear;
}

std::vector<Stmt> LoopNest::Split(arith::Analyzer* analyzer) const {
  const auto* seq = innermost_.as<SeqStmtNode>();
  if (seq == nullptr) return {nest_};
  std::vector<const BufferStoreNode*> stores;
  for (const Stmt& stmt : seq->seq) {
    const auto* store = stmt.as<BufferStoreNode>();
    if (store == nullptr || store->indices.size() != 1 ||
        (!stores.empty() && !store->buffer->data.same_as(stores[0]->buffer->data))) {
      return {nest_};
    }
    stores.push_back(store);
  }
  // Each store covers [base, base + span]; the stores' ranges must not meet.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const LinearIndex first = Linear(stores[0]->indices[0], analyzer);
  for (const BufferStoreNode* store : stores) {
    LinearIndex linear = Linear(store->indices[0], analyzer);
    int64_t offset = 0;
    if (!IsConstInt(analyzer->Simplify(linear.base - first.base), &offset)) return {nest_};
    int64_t span = 0;
    for (size_t l = 0; l < loops_.size(); ++l) {
      span += std::abs(linear.coefficients[l]) * (loops_[l].extent - 1);
    }
    for (const auto& [begin, end] : ranges) {
      if (offset <= end && begin <= offset + span) return {nest_};
    }
    ranges.emplace_back(offset, offset + span);
  }
  std::vector<Stmt> nests;
  for (const Stmt& store : seq->seq) {
    Stmt nest = store;
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
      nest = For(it->var, make_const(it->var.dtype(), int64_t{0}),
                 make_const(it->var.dtype(), it->extent), ForKind::kSerial, nest, IterVar(), {});
    }
    nests.push_back(nest);
  }
  return nests;
}

}  // namespace loom::vta::detail
