// AluInPlace (loom/vta/compiler/passes.h): an alu-pragma'd stage that reads one accumulator
// tensor and writes another, element for element, writes the tensor it reads instead, as the
// VTA ALU does (dst = op(dst, src or imm)).
#include <optional>
#include <unordered_map>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/ir/structural.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

// Statement positions in program order, and the positions at which each buffer's data Var is
// accessed and the range its Allocate covers.
class AccessOrder : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  struct Span {
    int first = -1, last = -1;
  };

  void VisitStmt(const Stmt& stmt) override {
    ++position_;
    StmtExprVisitor::VisitStmt(stmt);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Touch(op->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Touch(op->buffer->data.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    Span& span = allocations_[op->buffer_var.get()];
    span.first = position_;
    StmtExprVisitor::VisitStmt_(op);
    span.last = position_;
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == std::string("pragma_") + Environment::kAlu) {
      alu_positions_[op] = position_;
    }
    StmtExprVisitor::VisitStmt_(op);
  }

  const Span& accesses(const Object* data) const { return accesses_.at(data); }
  const Span* allocation(const Object* data) const {
    auto it = allocations_.find(data);
    return it == allocations_.end() ? nullptr : &it->second;
  }
  int position(const AttrStmtNode* alu) const { return alu_positions_.at(alu); }

 private:
  void Touch(const Object* data) {
    Span& span = accesses_[data];
    if (span.first < 0) span.first = position_;
    span.last = position_;
  }

  int position_ = 0;
  std::unordered_map<const Object*, Span> accesses_;
  std::unordered_map<const Object*, Span> allocations_;
  std::unordered_map<const AttrStmtNode*, int> alu_positions_;
};

// The alu stage's loops and its one store.
const BufferStoreNode* AluStore(const Stmt& body) {
  Stmt stmt = body;
  while (const auto* loop = stmt.as<ForNode>()) stmt = loop->body;
  return stmt.as<BufferStoreNode>();
}

// The first operand of an ALU expression: the element the ALU updates.
const BufferLoadNode* UpdatedOperand(const PrimExpr& value) {
  PrimExpr first;
  if (const auto* n = value.as<AddNode>()) first = n->a;
  if (const auto* n = value.as<SubNode>()) first = n->a;
  if (const auto* n = value.as<MulNode>()) first = n->a;
  if (const auto* n = value.as<MinNode>()) first = n->a;
  if (const auto* n = value.as<MaxNode>()) first = n->a;
  if (const auto* n = value.as<CallNode>()) {
    if ((n->op.name() == "shift_right" || n->op.name() == "shift_left") && !n->args.empty()) {
      first = n->args[0];
    }
  }
  return first.defined() ? first.as<BufferLoadNode>() : nullptr;
}

// Renames the accesses of one buffer to another and drops the renamed buffer's Allocate.
class BufferRenamer : public StmtExprMutator {
 public:
  BufferRenamer(const Object* from, Buffer to) : from_(from), to_(std::move(to)) {}

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt stmt = StmtExprMutator::VisitStmt_(op);
    const auto* store = stmt.as<BufferStoreNode>();
    if (store->buffer->data.get() != from_) return stmt;
    return BufferStore(to_, store->value, store->indices);
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr expr = StmtExprMutator::VisitExpr_(op);
    const auto* load = expr.as<BufferLoadNode>();
    if (load->buffer->data.get() != from_) return expr;
    return BufferLoad(to_, load->indices);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    if (op->buffer_var.get() == from_) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    // Attributes about the dropped buffer (realize bounds, alignment) go with it.
    if (op->node.get() == from_) return VisitStmt(op->body);
    if (const auto* buffer = op->node.as<BufferNode>(); buffer && buffer->data.get() == from_) {
      return VisitStmt(op->body);
    }
    return StmtExprMutator::VisitStmt_(op);
  }

 private:
  const Object* from_;
  Buffer to_;
};

bool SameExprs(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!StructuralEqual(a[i], b[i])) return false;
  }
  return true;
}

// One merge: the alu stage writing `dst` from `src` at the same element.
struct Merge {
  const Object* dst;
  Buffer src;
};

// The first alu stage that can update its source in place, if any.
std::optional<Merge> FindMerge(const Stmt& body) {
  AccessOrder order;
  order.VisitStmt(body);
  std::optional<Merge> found;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    const auto* alu = node.as<AttrStmtNode>();
    if (found || alu == nullptr || alu->attr_key != std::string("pragma_") + Environment::kAlu) {
      return;
    }
    const BufferStoreNode* store = AluStore(alu->body);
    if (store == nullptr) return;
    const BufferLoadNode* load = UpdatedOperand(store->value);
    if (load == nullptr) return;
    const Buffer& dst = store->buffer;
    const Buffer& src = load->buffer;
    if (dst->data.same_as(src->data) || dst->scope != Environment::kAccScope ||
        src->scope != Environment::kAccScope || dst->dtype != src->dtype ||
        !SameExprs(dst->shape, src->shape) || !SameExprs(store->indices, load->indices)) {
      return;
    }
    // src is not used after this stage and dst not before it; dst's uses lie inside src's
    // allocation.
    const int at = order.position(alu);
    const AccessOrder::Span& src_uses = order.accesses(src->data.get());
    const AccessOrder::Span& dst_uses = order.accesses(dst->data.get());
    const AccessOrder::Span* src_alive = order.allocation(src->data.get());
    if (src_uses.last > dst_uses.first || dst_uses.first < at || src_alive == nullptr ||
        dst_uses.last > src_alive->last) {
      return;
    }
    found = Merge{dst->data.get(), src};
  });
  return found;
}

}  // namespace

tir::transform::Pass AluInPlace() {
  auto merge = [](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    Stmt body = func->body;
    while (std::optional<Merge> merge = FindMerge(body)) {
      body = BufferRenamer(merge->dst, merge->src).VisitStmt(body);
    }
    return tir::transform::WithBody(func, body);
  };
  return tir::transform::CreatePrimFuncPass(merge, 0, "vta.AluInPlace");
}

}  // namespace loom::vta
