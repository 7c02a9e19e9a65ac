// StorageFlatten: every N-d buffer access becomes a 1-D access of a flat view of the same
// memory (a Buffer over the same data variable), and every Allocate gets one extent.
//
// The flat index is elem_offset + sum(index[k] * stride[k]). Strides are the buffer's own
// when it declares them; otherwise row-major from the shape, each one padded up to
// `factor * m + offset` where a "buffer_dim_align" attribute asks for it (see transform.h).
// The flat view has offset 0, no strides, and one extent covering everything the layout can
// address, so the interpreter's bounds checks still hold on the flattened function.
// Parameter buffers keep their N-d declaration in buffer_map: it is the calling convention
// (what the caller passes is an N-d array); only the body's accesses change.
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

struct DimAlign {
  int64_t factor;
  int64_t offset;
};
// Per buffer (by identity): dimension -> the alignment of its stride.
using AlignMap = std::unordered_map<const BufferNode*, std::map<int, DimAlign>>;

bool IsConstValue(const PrimExpr& e, int64_t value) {
  int64_t v = 0;
  return IsConstInt(e, &v) && v == value;
}

// sum + term, leaving out zeros so the flat index reads as one would write it.
PrimExpr AddTerm(const PrimExpr& sum, const PrimExpr& term) {
  if (!sum.defined() || IsConstValue(sum, 0)) return term;
  if (IsConstValue(term, 0)) return sum;
  return sum + term;
}

PrimExpr Scale(const PrimExpr& index, const PrimExpr& stride) {
  if (IsConstValue(stride, 1)) return index;
  return index * stride;
}

// Where a flat view of a buffer puts each index, and how many elements it may address.
struct FlatLayout {
  Array<PrimExpr> strides;
  PrimExpr extent;
};

FlatLayout LayoutOf(const Buffer& buffer, const std::map<int, DimAlign>* aligns) {
  const Array<PrimExpr>& shape = buffer->shape;
  DataType index_type = shape.empty() ? DataType::Int(32) : shape[0].dtype();
  FlatLayout layout;
  layout.strides.resize(shape.size());
  if (!buffer->strides.empty()) {
    // Explicit strides may be in any order (column-major, padded): the extent is one past
    // the largest element the shape reaches.
    PrimExpr last = make_const(index_type, int64_t{0});
    for (size_t k = 0; k < shape.size(); ++k) {
      layout.strides[k] = buffer->strides[k];
      last = AddTerm(last, Scale(shape[k] - 1, buffer->strides[k]));
    }
    layout.extent = last + 1;
  } else {
    PrimExpr stride = make_const(index_type, int64_t{1});
    for (size_t k = shape.size(); k-- > 0;) {
      if (aligns) {
        if (auto it = aligns->find(static_cast<int>(k)); it != aligns->end()) {
          stride = AlignStride(stride, it->second.factor, it->second.offset);
        }
      }
      layout.strides[k] = stride;
      stride = IsConstValue(stride, 1) ? shape[k] : stride * shape[k];
    }
    layout.extent = stride;
  }
  layout.extent = AddTerm(buffer->elem_offset, layout.extent);
  return layout;
}

// One index of an access as base + lane * step (a scalar has step 0, lanes 1).
struct AffineIndex {
  PrimExpr base;
  PrimExpr step;
};

std::optional<AffineIndex> AsAffine(const PrimExpr& index) {
  if (index.dtype().is_scalar()) return AffineIndex{index, make_const(index.dtype(), int64_t{0})};
  if (const auto* ramp = index.as<RampNode>()) return AffineIndex{ramp->base, ramp->stride};
  if (const auto* broadcast = index.as<BroadcastNode>()) {
    return AffineIndex{broadcast->value, make_const(broadcast->value.dtype(), int64_t{0})};
  }
  return std::nullopt;
}

// Gives a and b the wider of their two integer types.
void UnifyTypes(PrimExpr* a, PrimExpr* b) {
  if (a->dtype() == b->dtype()) return;
  if (a->dtype().bits() < b->dtype().bits()) {
    *a = cast(b->dtype(), *a);
  } else {
    *b = cast(a->dtype(), *b);
  }
}

// The flat index of an access. Vector indices that are all ramps or broadcasts give a Ramp
// (or a Broadcast when every lane hits one element); other vectors give vector arithmetic.
PrimExpr FlatIndex(const Buffer& buffer, const FlatLayout& layout, const Array<PrimExpr>& indices) {
  int lanes = 1;
  for (const PrimExpr& index : indices) lanes = std::max(lanes, index.dtype().lanes());
  PrimExpr base = buffer->elem_offset;
  PrimExpr step = make_const(base.dtype(), int64_t{0});
  bool affine = true;
  for (size_t k = 0; k < indices.size() && affine; ++k) {
    std::optional<AffineIndex> term = AsAffine(indices[k]);
    if (!term) {
      affine = false;
      break;
    }
    base = AddTerm(base, Scale(term->base, layout.strides[k]));
    step = AddTerm(step, Scale(term->step, layout.strides[k]));
  }
  if (affine) {
    if (lanes == 1) return base;
    if (IsConstValue(step, 0)) return Broadcast(base, lanes);
    UnifyTypes(&base, &step);
    return Ramp(base, step, lanes);
  }
  PrimExpr flat = buffer->elem_offset;
  for (size_t k = 0; k < indices.size(); ++k) {
    flat = AddTerm(flat, Scale(indices[k], layout.strides[k]));
  }
  return flat;
}

// Reads the alignment requests of the function and checks them (see transform.h).
AlignMap CollectAligns(const PrimFunc& func) {
  std::unordered_set<const Object*> param_data;
  for (const auto& [var, buffer] : func->buffer_map) param_data.insert(buffer->data.get());
  AlignMap aligns;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* attr = node.as<AttrStmtNode>();
    if (!attr || attr->attr_key != kBufferDimAlign) return;
    const auto* buffer = attr->node.as<BufferNode>();
    LOOM_CHECK_USER(buffer) << "attribute '" << kBufferDimAlign << "' must be attached to a "
                            << "Buffer, got " << ToScript(attr->node);
    const auto* tuple = attr->value.as<CallNode>();
    std::vector<int64_t> fields;
    if (tuple && tuple->op->name == "tvm_tuple") {
      for (const PrimExpr& arg : tuple->args) {
        int64_t v = 0;
        if (IsConstInt(arg, &v)) fields.push_back(v);
      }
    }
    LOOM_CHECK_USER(tuple && tuple->args.size() == 3 && fields.size() == 3)
        << "attribute '" << kBufferDimAlign << "' of buffer '" << buffer->name
        << "' must be T.tvm_tuple(dim, factor, offset) with constant integers, got "
        << ToScript(attr->value);
    int64_t dim = fields[0], factor = fields[1], offset = fields[2];
    int ndim = static_cast<int>(buffer->shape.size());
    LOOM_CHECK_USER(dim >= 0 && dim < ndim)
        << "cannot align dimension " << dim << " of buffer '" << buffer->name << "': it has "
        << ndim << " dimension(s)";
    LOOM_CHECK_USER(factor > 0 && offset >= 0 && offset < factor)
        << "cannot align dimension " << dim << " of buffer '" << buffer->name << "' with factor "
        << factor << " and offset " << offset << ": need factor > 0 and 0 <= offset < factor";
    LOOM_CHECK_USER(buffer->strides.empty())
        << "cannot align dimension " << dim << " of buffer '" << buffer->name
        << "': it declares explicit strides, which fix its layout";
    LOOM_CHECK_USER(!param_data.count(buffer->data.get()))
        << "cannot align dimension " << dim << " of buffer '" << buffer->name
        << "': it is a parameter of the function, whose layout the caller decides; align a "
        << "buffer the function allocates (a cache stage) instead";
    auto [it, inserted] = aligns[buffer].emplace(static_cast<int>(dim), DimAlign{factor, offset});
    LOOM_CHECK_USER(inserted || (it->second.factor == factor && it->second.offset == offset))
        << "dimension " << dim << " of buffer '" << buffer->name
        << "' is aligned twice, with different factors or offsets";
  });
  return aligns;
}

class BufferFlattener : public StmtExprMutator {
 public:
  explicit BufferFlattener(AlignMap aligns) : aligns_(std::move(aligns)) {
    for (const auto& [buffer, dims] : aligns_) {
      aligned_by_data_[buffer->data.get()].push_back(Buffer(buffer));
    }
  }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // The data variables of aligned buffers that no Allocate in the function provides.
  std::vector<Buffer> UnallocatedAlignedBuffers() const {
    std::vector<Buffer> missing;
    for (const auto& [data, buffers] : aligned_by_data_) {
      if (!allocated_.count(data)) missing.push_back(buffers.front());
    }
    return missing;
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> indices = VisitIndices(op->indices);
    auto [flat, changed] = Flat(op->buffer);
    if (!changed && SameAll(indices, op->indices)) return PrimExpr(op);
    if (!changed) return BufferLoad(op->buffer, indices);
    return BufferLoad(flat.buffer, {FlatIndex(op->buffer, flat.layout, indices)});
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Array<PrimExpr> indices = VisitIndices(op->indices);
    auto [flat, changed] = Flat(op->buffer);
    if (!changed && value.same_as(op->value) && SameAll(indices, op->indices)) return Stmt(op);
    if (!changed) return BufferStore(op->buffer, value, indices);
    return BufferStore(flat.buffer, value, {FlatIndex(op->buffer, flat.layout, indices)});
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == kBufferDimAlign) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    allocated_.insert(op->buffer_var.get());
    Stmt body = VisitStmt(op->body);
    PrimExpr extent = AllocationExtent(op);
    if (!extent.defined() && body.same_as(op->body)) return Stmt(op);
    Array<PrimExpr> extents = extent.defined() ? Array<PrimExpr>{extent} : op->extents;
    return Allocate(op->buffer_var, op->dtype, extents, op->condition, body, op->storage_scope);
  }

 private:
  struct FlatBuffer {
    Buffer buffer;
    FlatLayout layout;
  };

  Array<PrimExpr> VisitIndices(const Array<PrimExpr>& indices) {
    Array<PrimExpr> visited;
    for (const PrimExpr& index : indices) visited.push_back(VisitExpr(index));
    return visited;
  }

  static bool SameShape(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!StructuralEqual(a[i], b[i])) return false;
    }
    return true;
  }

  static bool SameAll(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].same_as(b[i])) return false;
    }
    return true;
  }

  const std::map<int, DimAlign>* AlignsOf(const Buffer& buffer) const {
    auto it = aligns_.find(buffer.get());
    return it == aligns_.end() ? nullptr : &it->second;
  }

  // The flat view of `buffer` (memoized, so every access shares one Buffer object), and
  // whether it differs from the buffer: a compact 1-D buffer at offset 0 is already flat.
  std::pair<const FlatBuffer&, bool> Flat(const Buffer& buffer) {
    auto it = flat_.find(buffer.get());
    if (it == flat_.end()) {
      FlatLayout layout = LayoutOf(buffer, AlignsOf(buffer));
      bool already_flat = buffer->shape.size() == 1 && IsConstValue(buffer->elem_offset, 0) &&
                          IsConstValue(layout.strides[0], 1);
      Buffer flat = already_flat ? buffer
                                 : Buffer(buffer->data, buffer->dtype, {layout.extent}, {},
                                          PrimExpr(), buffer->name, buffer->scope,
                                          buffer->data_alignment, buffer->offset_factor);
      it = flat_.emplace(buffer.get(), FlatBuffer{flat, layout}).first;
    }
    return {it->second, !it->second.buffer.same_as(buffer)};
  }

  // The single extent of a flattened Allocate, or undefined when it keeps its extents.
  PrimExpr AllocationExtent(const AllocateNode* op) {
    PrimExpr elements;
    for (const PrimExpr& extent : op->extents) {
      elements = elements.defined() ? elements * extent : extent;
    }
    auto it = aligned_by_data_.find(op->buffer_var.get());
    if (it == aligned_by_data_.end()) {
      return op->extents.size() == 1 ? PrimExpr() : elements;
    }
    // Padding makes the aligned layout larger than the dense element count.
    PrimExpr extent;
    for (const Buffer& buffer : it->second) {
      PrimExpr span = Flat(buffer).first.layout.extent;
      if (!SameShape(buffer->shape, op->extents)) span = max(span, elements);
      extent = extent.defined() ? max(extent, span) : span;
    }
    return extent;
  }

  AlignMap aligns_;
  std::unordered_map<const Object*, std::vector<Buffer>> aligned_by_data_;
  std::unordered_map<const BufferNode*, FlatBuffer> flat_;
  std::unordered_set<const Object*> allocated_;
};

}  // namespace

PrimExpr AlignStride(const PrimExpr& stride, int64_t factor, int64_t offset) {
  const DataType t = stride.dtype();
  return stride + floormod(make_const(t, offset) - stride, make_const(t, factor));
}

Pass StorageFlatten() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    BufferFlattener flattener(CollectAligns(func));
    Stmt body = flattener.VisitStmt(func->body);
    std::vector<Buffer> missing = flattener.UnallocatedAlignedBuffers();
    LOOM_CHECK_USER(missing.empty())
        << "buffer '" << missing.front()->name << "' has aligned dimensions but no Allocate "
        << "of its data variable '" << missing.front()->data.name()
        << "' in the function: alignment pads storage the function itself allocates";
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 0, "StorageFlatten");
}

}  // namespace loom::tir::transform
