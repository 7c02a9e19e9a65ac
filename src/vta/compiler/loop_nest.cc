// The loop nests of the VTA passes (loop_nest.h).
#include "vta/compiler/loop_nest.h"

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

}  // namespace loom::vta::detail
