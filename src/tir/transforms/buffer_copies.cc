#include "tir/transforms/buffer_copies.h"

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::tir::transform::detail {

namespace {

bool IsOne(const PrimExpr& e) {
  int64_t value = 0;
  return IsConstInt(e, &value) && value == 1;
}

PrimExpr Product(const Array<PrimExpr>& values, size_t first) {
  PrimExpr product = make_const(values[0].dtype(), int64_t{1});
  for (size_t k = first; k < values.size(); ++k) product = product * values[k];
  return product;
}

bool SameExtents(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!StructuralEqual(a[k], b[k])) return false;
  }
  return true;
}

int64_t ElementBytes(DataType t) { return int64_t{t.bytes()} * t.lanes(); }

class CopySelector : public StmtExprMutator {
 public:
  explicit CopySelector(const std::vector<std::pair<BufferCopies*, PrimExpr>>& choices) {
    for (const auto& [copies, index] : choices) {
      choices_.emplace(copies->data().get(), Choice{copies, index});
    }
  }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    auto it = choices_.find(load->buffer->data.get());
    if (it == choices_.end()) return visited;
    BufferCopies* copies = it->second.copies;
    return BufferLoad(copies->WithCopies(load->buffer),
                      copies->CopyIndices(load->buffer, it->second.index, load->indices));
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* store = visited.as<BufferStoreNode>();
    auto it = choices_.find(store->buffer->data.get());
    if (it == choices_.end()) return visited;
    BufferCopies* copies = it->second.copies;
    return BufferStore(copies->WithCopies(store->buffer), store->value,
                       copies->CopyIndices(store->buffer, it->second.index, store->indices));
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = choices_.find(op);
    if (it != choices_.end()) LOOM_THROW << it->second.copies->HandleUseError(Var(op));
    return Var(op);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    for (const PrimExpr& arg : op->args) {
      auto it = choices_.find(arg.get());
      if (it != choices_.end()) LOOM_THROW << it->second.copies->HandleUseError(Call(op));
    }
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  struct Choice {
    BufferCopies* copies;
    PrimExpr index;
  };

  std::unordered_map<const Object*, Choice> choices_;
};

}  // namespace

BufferCopies::BufferCopies(const AllocateNode* allocation, int64_t copies, std::string purpose)
    : data_(allocation->buffer_var),
      dtype_(allocation->dtype),
      extents_(allocation->extents),
      copies_(copies),
      purpose_(std::move(purpose)) {}

Array<PrimExpr> BufferCopies::Extents() const {
  if (extents_.size() == 1) return {extents_[0] * make_const(extents_[0].dtype(), copies_)};
  Array<PrimExpr> extents{make_const(extents_[0].dtype(), copies_)};
  extents.insert(extents.end(), extents_.begin(), extents_.end());
  return extents;
}

PrimExpr BufferCopies::CopyStride(const Buffer& buffer) const {
  PrimExpr elements = Product(extents_, 0);
  int64_t allocation_bytes = ElementBytes(dtype_);
  int64_t buffer_bytes = ElementBytes(buffer->dtype);
  if (allocation_bytes == buffer_bytes) return elements;
  LOOM_CHECK_USER(allocation_bytes % buffer_bytes == 0)
      << "cannot give allocation '" << data_.name() << "' " << copies_ << " copies " << purpose_
      << ": its elements (" << dtype_ << ") are not a whole number of the elements ("
      << buffer->dtype << ") of buffer '" << buffer->name << "', which views it";
  return elements * make_const(elements.dtype(), allocation_bytes / buffer_bytes);
}

bool BufferCopies::IsFlat(const Buffer& buffer) const {
  return extents_.size() == 1 && buffer->shape.size() == 1 &&
         (buffer->strides.empty() || IsOne(buffer->strides[0]));
}

Buffer BufferCopies::WithCopies(const Buffer& buffer) {
  auto it = views_.find(buffer.get());
  if (it != views_.end()) return it->second;
  Array<PrimExpr> shape;
  Array<PrimExpr> strides;
  if (IsFlat(buffer)) {
    // The last copy starts (copies - 1) strides in and spans the buffer's own extent.
    PrimExpr stride = CopyStride(buffer);
    PrimExpr extent = buffer->shape[0];
    shape.push_back(StructuralEqual(stride, extent)
                        ? extent * make_const(extent.dtype(), copies_)
                        : stride * make_const(stride.dtype(), copies_ - 1) + extent);
    strides = buffer->strides;
  } else {
    shape.push_back(make_const(extents_[0].dtype(), copies_));
    shape.insert(shape.end(), buffer->shape.begin(), buffer->shape.end());
    bool compact_over_allocation = buffer->strides.empty() && buffer->dtype == dtype_ &&
                                   SameExtents(buffer->shape, extents_);
    if (!compact_over_allocation) {
      // The copies lie one allocation apart whatever part of it the buffer views.
      strides.push_back(CopyStride(buffer));
      if (!buffer->strides.empty()) {
        strides.insert(strides.end(), buffer->strides.begin(), buffer->strides.end());
      } else {
        for (size_t k = 0; k < buffer->shape.size(); ++k) {
          strides.push_back(Product(buffer->shape, k + 1));
        }
      }
    }
  }
  Buffer view(buffer->data, buffer->dtype, shape, strides, buffer->elem_offset, buffer->name,
              buffer->scope, buffer->data_alignment, buffer->offset_factor);
  views_.emplace(buffer.get(), view);
  return view;
}

Array<PrimExpr> BufferCopies::CopyIndices(const Buffer& buffer, const PrimExpr& copy,
                                          const Array<PrimExpr>& indices) const {
  if (IsFlat(buffer)) return {copy * CopyStride(buffer) + indices[0]};
  Array<PrimExpr> result{copy};
  result.insert(result.end(), indices.begin(), indices.end());
  return result;
}

std::string BufferCopies::HandleUseError(const PrimExpr& use) const {
  return "cannot give allocation '" + data_.name() + "' " + std::to_string(copies_) +
         " copies " + purpose_ + ": its handle is used directly in " + ToScript(use) +
         ", and only element accesses " + data_.name() + "[...] can be sent to a copy";
}

Stmt SelectCopies(const Stmt& stmt,
                  const std::vector<std::pair<BufferCopies*, PrimExpr>>& choices) {
  if (choices.empty()) return stmt;
  return CopySelector(choices).VisitStmt(stmt);
}

}  // namespace loom::tir::transform::detail
