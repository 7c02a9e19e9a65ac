// PlanSram (loom/vta/compiler/passes.h): places the allocations of the on-chip scopes in their
// buffers and checks that they fit.
#include <map>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

class SramPlanner : public StmtExprMutator {
 public:
  explicit SramPlanner(const Environment& env) : env_(env) {}

  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AllocateNode* op) override {
    const MemoryInfo* memory = OnChip(op->storage_scope);
    if (memory == nullptr) return StmtExprMutator::VisitStmt_(op);
    const std::string& name = op->buffer_var.name();
    int64_t values = 1;
    for (const PrimExpr& extent : op->extents) {
      int64_t n = 0;
      LOOM_CHECK_USER(IsConstInt(extent, &n))
          << "VTA: the size of '" << name << "' (scope " << memory->scope
          << ") is not a constant; on-chip buffers are planned at compile time, so the tiles "
          << "that size it need constant extents";
      values *= n;
    }
    LOOM_CHECK_USER(values % memory->lanes == 0)
        << "VTA: '" << name << "' (scope " << memory->scope << ") holds " << values
        << " values, not a whole number of the buffer's " << memory->lanes
        << "-value elements; make its shape a multiple of the element's";
    const int64_t elements = values / memory->lanes;
    int64_t& top = top_[memory->scope];
    const int64_t base = top;
    LOOM_CHECK_USER(base + elements <= memory->depth)
        << "VTA: '" << name << "' (scope " << memory->scope << ") needs " << elements
        << " elements at element " << base << " of the " << BufferName(*memory)
        << " buffer, whose depth is " << memory->depth << " elements (" << memory->lanes
        << " values each): " << base + elements << " > " << memory->depth
        << "; split the loops that size its tile more finely";
    top = base + elements;
    Stmt body = VisitStmt(op->body);
    top = base;
    Stmt allocate =
        Allocate(op->buffer_var, op->dtype, op->extents, op->condition, body, op->storage_scope);
    return AttrStmt(op->buffer_var, kSramBase, make_const(DataType::Int(32), base), allocate);
  }

 private:
  const MemoryInfo* OnChip(const std::string& scope) const {
    for (const char* sram :
         {Environment::kInpScope, Environment::kWgtScope, Environment::kAccScope}) {
      if (scope == sram) return &env_.Memory(scope);
    }
    return nullptr;
  }
  static const char* BufferName(const MemoryInfo& memory) {
    if (memory.scope == Environment::kInpScope) return "input";
    if (memory.scope == Environment::kWgtScope) return "weight";
    return "accumulator";
  }

  const Environment& env_;
  std::map<std::string, int64_t> top_;  // by scope: the first element not yet taken
};

}  // namespace

tir::transform::Pass PlanSram(const Environment& env) {
  auto plan = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, SramPlanner(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(plan, 0, "vta.PlanSram");
}

}  // namespace loom::vta
