// LowerMathIntrinsics: float32 calls to exp, exp2, log, log2, tanh, sigmoid, erf and pow
// become the branch-free expressions of math_approximations.cc, so vectorized loops stay
// vector code with no library calls. Other types and intrinsics are left for codegen.
#include <functional>
#include <string>
#include <unordered_map>

#include "loom/ir/functor.h"
#include "loom/tir/transform.h"
#include "tir/transforms/math_approximations.h"

namespace loom::tir::transform {

namespace {

using Approximation = std::function<PrimExpr(const Array<PrimExpr>& args)>;

const std::unordered_map<std::string, Approximation>& Approximations() {
  static const auto* table = new std::unordered_map<std::string, Approximation>{
      {"exp", [](const Array<PrimExpr>& a) { return math_approx::Exp(a[0]); }},
      {"exp2", [](const Array<PrimExpr>& a) { return math_approx::Exp2(a[0]); }},
      {"log", [](const Array<PrimExpr>& a) { return math_approx::Log(a[0]); }},
      {"log2", [](const Array<PrimExpr>& a) { return math_approx::Log2(a[0]); }},
      {"tanh", [](const Array<PrimExpr>& a) { return math_approx::Tanh(a[0]); }},
      {"sigmoid", [](const Array<PrimExpr>& a) { return math_approx::Sigmoid(a[0]); }},
      {"erf", [](const Array<PrimExpr>& a) { return math_approx::Erf(a[0]); }},
      {"pow", [](const Array<PrimExpr>& a) { return math_approx::Pow(a[0], a[1]); }},
  };
  return *table;
}

class MathLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  PrimExpr VisitExpr_(const CallNode* op) override {
    // Arguments first: exp(tanh(x)) lowers both.
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* call = visited.as<CallNode>();
    if (call == nullptr || !call->dtype.is_float() || call->dtype.bits() != 32) return visited;
    auto it = Approximations().find(call->op->name);
    if (it == Approximations().end()) return visited;
    for (const PrimExpr& arg : call->args) {
      if (arg.dtype() != call->dtype) return visited;
    }
    return it->second(call->args);
  }
};

}  // namespace

PrimExpr LowerMathIntrinsicsInExpr(const PrimExpr& expr) { return MathLowerer().VisitExpr(expr); }

Pass LowerMathIntrinsics() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    return WithBody(func, MathLowerer().VisitStmt(func->body));
  };
  return CreatePrimFuncPass(rewrite, 0, "LowerMathIntrinsics");
}

}  // namespace loom::tir::transform
