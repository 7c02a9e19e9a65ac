// RemoveSramAllocations (loom/vta/compiler/passes.h): the on-chip buffers are the device's,
// not the host's; once the DMA, ALU and GEMM passes have turned every access into an
// instruction, their allocations (and PlanSram's attributes) go.
#include <string>
#include <unordered_map>

#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

class SramAllocationRemover : public StmtExprMutator {
 public:
  explicit SramAllocationRemover(const Environment& env) : env_(env) {}

  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!IsOnChip(op->storage_scope)) return StmtExprMutator::VisitStmt_(op);
    on_chip_[op->buffer_var.get()] = op->storage_scope;
    return VisitStmt(op->body);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == kSramBase) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    CheckNotOnChip(op->buffer, Stmt(op));
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    CheckNotOnChip(op->buffer, PrimExpr(op));
    return StmtExprMutator::VisitExpr_(op);
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto scope = on_chip_.find(op);
    LOOM_CHECK_USER(scope == on_chip_.end())
        << "the host uses the handle of on-chip buffer '" << op->name_hint << "' (" << scope->second
        << "), which lives on the VTA device; only LOAD, STORE, GEMM and ALU "
        << "instructions can reach it";
    return PrimExpr(op);
  }

 private:
  bool IsOnChip(const std::string& scope) const {
    for (const MemoryInfo& memory : env_.memories()) {
      if (memory.scope == scope) return true;
    }
    return false;
  }

  void CheckNotOnChip(const Buffer& buffer, const ObjectRef& access) const {
    auto scope = on_chip_.find(buffer->data.get());
    LOOM_CHECK_USER(scope == on_chip_.end())
        << "the host would access on-chip buffer '" << buffer->name << "' (" << scope->second
        << "): " << ToScript(access) << "; every stage in an on-chip scope must become VTA "
        << "instructions: a dma_copy pragma on copies, an alu pragma on element-wise updates of "
        << "the accumulator, the GEMM intrinsic (tensorize) on the matrix multiply";
  }

  const Environment& env_;
  std::unordered_map<const Object*, std::string> on_chip_;
};

}  // namespace

tir::transform::Pass RemoveSramAllocations(const Environment& env) {
  auto rewrite = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, SramAllocationRemover(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(rewrite, 0, "vta.RemoveSramAllocations");
}

}  // namespace loom::vta
