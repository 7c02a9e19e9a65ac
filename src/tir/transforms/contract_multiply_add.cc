// ContractMultiplyAdd: float32/float64 a * b + c becomes fma(a, b, c). Deciding contraction
// here rather than letting LLVM do it keeps it deterministic: the interpreter runs the same
// TIR that codegen compiles, so the two agree bit for bit, and code that must not be
// contracted (LowerMathIntrinsics' polynomials) is simply lowered after this pass.
#include "loom/ir/functor.h"
#include "loom/ir/math.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// Whether a * b + c may become one fma for this type. float16 and bfloat16 round after
// every operation (their semantics, see codegen_llvm.h), so fusing would change them.
bool Contractible(DataType t) { return t.is_float() && t.bits() >= 32; }

// -x, exactly: a sign flip (0 - x would turn -0 into +0).
PrimExpr Negate(const PrimExpr& x) {
  if (const auto* imm = x.as<FloatImmNode>()) return FloatImm(x.dtype(), -imm->value);
  if (const auto* broadcast = x.as<BroadcastNode>()) {
    return Broadcast(Negate(broadcast->value), broadcast->lanes);
  }
  return Mul(x, make_const(x.dtype(), -1.0));
}

class Contractor : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  // Operands first (inside out), then the node itself. When both operands are products,
  // the left one is fused and the right one rounded on its own (as LLVM's DAG combiner
  // chooses for products of equal use counts): a * b + c * d -> fma(a, b, c * d),
  // a * b - c * d -> fma(a, b, -(c * d)), and (a * b + c * d) + e -> fma(a, b, c * d) + e.
  // Only a product that is itself the operand is fused: not one bound by a Let or wrapped
  // in a Cast.
  PrimExpr VisitExpr_(const AddNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* add = visited.as<AddNode>();
    if (add == nullptr || !Contractible(add->dtype)) return visited;
    if (const auto* mul = add->a.as<MulNode>()) return fma(mul->a, mul->b, add->b);
    if (const auto* mul = add->b.as<MulNode>()) return fma(mul->a, mul->b, add->a);
    return visited;
  }

  PrimExpr VisitExpr_(const SubNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* sub = visited.as<SubNode>();
    if (sub == nullptr || !Contractible(sub->dtype)) return visited;
    // a * b - c = fma(a, b, -c) and c - a * b = fma(-a, b, c), each rounded once.
    if (const auto* mul = sub->a.as<MulNode>()) return fma(mul->a, mul->b, Negate(sub->b));
    if (const auto* mul = sub->b.as<MulNode>()) return fma(Negate(mul->a), mul->b, sub->a);
    return visited;
  }

  // A Reduce exists only before lowering, which turns it into the update acc + source that
  // this pass contracts; its combiner is left as written, for the code that recognizes it.
  PrimExpr VisitExpr_(const ReduceNode* op) override { return PrimExpr(op); }
};

}  // namespace

Pass ContractMultiplyAdd() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    return WithBody(func, Contractor().VisitStmt(func->body));
  };
  return CreatePrimFuncPass(rewrite, 0, "ContractMultiplyAdd");
}

}  // namespace loom::tir::transform
