// Helpers the code generators share (codegen_util.h).
#include "target/codegen/codegen_util.h"

#include "loom/ir/expr_ops.h"

namespace loom::codegen {

PrimExpr FlatIndex(const Buffer& buffer, const Array<PrimExpr>& indices) {
  PrimExpr index;
  if (indices.size() == 1) {
    index = indices[0];
  } else {
    // Not yet flattened (StorageFlatten has not run): row-major, or the declared strides.
    PrimExpr stride;
    for (size_t k = indices.size(); k-- > 0;) {
      PrimExpr step = buffer->strides.empty() ? stride : buffer->strides[k];
      PrimExpr term = step.defined() ? indices[k] * cast(indices[k].dtype().element_of(), step)
                                     : indices[k];
      index = index.defined() ? term + index : term;
      if (buffer->strides.empty()) {
        PrimExpr extent = cast(indices[k].dtype().element_of(), buffer->shape[k]);
        stride = stride.defined() ? stride * extent : extent;
      }
    }
  }
  int64_t offset = 0;
  if (IsConstInt(buffer->elem_offset, &offset) && offset == 0) return index;
  return index + cast(index.dtype().element_of(), buffer->elem_offset);
}

int64_t StructFieldOffset(tir::builtin::StructField field, int64_t index) {
  using tir::builtin::StructField;
  switch (field) {
    case StructField::kArgValue: return index * 8;
    case StructField::kInt32Element: return index * 4;
    case StructField::kInt64Element: return index * 8;
    case StructField::kTensorData: return index * 48 + 0;
    case StructField::kTensorDeviceType: return index * 48 + 8;
    case StructField::kTensorNDim: return index * 48 + 16;
    case StructField::kTensorDTypeCode: return index * 48 + 20;
    case StructField::kTensorDTypeBits: return index * 48 + 21;
    case StructField::kTensorDTypeLanes: return index * 48 + 22;
    case StructField::kTensorShape: return index * 48 + 24;
    case StructField::kTensorStrides: return index * 48 + 32;
    case StructField::kTensorByteOffset: return index * 48 + 40;
  }
  LOOM_ICHECK(false) << "unknown struct field " << static_cast<int>(field);
  return 0;
}

AllocationSize SizeOf(const AllocateNode& allocation) {
  AllocationSize size;
  size.elements = make_const(DataType::Int(64), int64_t{1});
  for (const PrimExpr& extent : allocation.extents) {
    int64_t value = 0;
    size.constant = size.constant && IsConstInt(extent, &value);
    if (size.constant) size.constant_count *= value;
    size.elements = size.elements * cast(DataType::Int(64), extent);
  }
  return size;
}

}  // namespace loom::codegen
