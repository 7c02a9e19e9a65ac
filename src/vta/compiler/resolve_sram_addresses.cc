// ResolveSramAddresses (loom/vta/compiler/passes.h): the tile addresses the GEMM intrinsic
// passes to its micro-ops become indices of the placed on-chip buffers, in whole elements.
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/passes.h"
#include "vta/compiler/sram_places.h"

namespace loom::vta {
namespace {

class AddressResolver : public StmtExprMutator {
 public:
  explicit AddressResolver(const Environment& env) : places_(env) {}

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    places_.Record(op);
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* call = visited.as<CallNode>();
    if (call->op.name() != "address_of") return visited;
    const auto* load = call->args[0].as<BufferLoadNode>();
    const detail::SramPlace* place = load != nullptr ? places_.Find(load->buffer) : nullptr;
    if (place == nullptr) return visited;
    LOOM_ICHECK(load->indices.size() == 1) << "flattened buffers have one index";
    const PrimExpr& values = load->indices[0];
    PrimExpr elements = detail::WholeElements(values, place->lanes, &analyzer_);
    LOOM_CHECK_USER(elements.defined())
        << "VTA: a micro-op addresses value " << ToScript(values) << " of '" << load->buffer->name
        << "', which is not provably the start of one of its " << place->lanes << "-value elements";
    return analyzer_.Simplify(make_const(DataType::Int(32), place->base) +
                              cast(DataType::Int(32), elements));
  }

 private:
  detail::SramPlaces places_;
  arith::Analyzer analyzer_;
};

}  // namespace

tir::transform::Pass ResolveSramAddresses(const Environment& env) {
  auto resolve = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, AddressResolver(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(resolve, 0, "vta.ResolveSramAddresses");
}

}  // namespace loom::vta
