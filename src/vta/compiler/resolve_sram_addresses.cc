// ResolveSramAddresses (loom/vta/compiler/passes.h): the tile addresses the GEMM intrinsic
// passes to its micro-ops become indices of the placed on-chip buffers, in whole elements.
#include <string>
#include <unordered_map>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

class AddressResolver : public StmtExprMutator {
 public:
  explicit AddressResolver(const Environment& env) : env_(env) {}

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == kSramBase) {
      const auto* allocate = op->body.as<AllocateNode>();
      Placed placed;
      LOOM_ICHECK(IsConstInt(op->value, &placed.base) && allocate != nullptr)
          << "vta_sram_base must be a constant around the Allocate it places";
      placed.lanes = env_.Memory(allocate->storage_scope).lanes;
      placed_[op->node.get()] = placed;
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* call = visited.as<CallNode>();
    if (call->op.name() != "address_of") return visited;
    const auto* load = call->args[0].as<BufferLoadNode>();
    auto it = load != nullptr ? placed_.find(load->buffer->data.get()) : placed_.end();
    if (it == placed_.end()) return visited;
    LOOM_ICHECK(load->indices.size() == 1) << "flattened buffers have one index";
    const PrimExpr& values = load->indices[0];
    const PrimExpr lanes = make_const(values.dtype(), it->second.lanes);
    LOOM_CHECK_USER(analyzer_.CanProve(floormod(values, lanes) == 0))
        << "VTA: a micro-op addresses value " << ToScript(values) << " of '" << load->buffer->name
        << "', which is not provably the start of one of its " << it->second.lanes
        << "-value elements";
    return analyzer_.Simplify(make_const(DataType::Int(32), it->second.base) +
                              cast(DataType::Int(32), floordiv(values, lanes)));
  }

 private:
  struct Placed {
    int64_t base = 0, lanes = 1;
  };
  const Environment& env_;
  std::unordered_map<const Object*, Placed> placed_;
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
