// What every code generator needs of TIR: the flat element index of a buffer access.
// Private to src/target/codegen.
#pragma once

#include "loom/ir/node.h"
#include "loom/tir/transform.h"

namespace loom::codegen {

// The element index `indices` address in `buffer`: the index itself once StorageFlatten
// has run (one index); before, row-major over the shape, or by the declared strides. Plus
// the buffer's elem_offset.
PrimExpr FlatIndex(const Buffer& buffer, const Array<PrimExpr>& indices);

// The byte offset of loom_struct_get(base, index, field): an argument slot (LoomValue, 8
// bytes), an int32/int64 array element, or a field of the index-th DLTensor (48 bytes).
int64_t StructFieldOffset(tir::builtin::StructField field, int64_t index);

// An allocation's size: its element count as an int64 expression, and whether all its
// extents are constants (then `constant_count` holds the count).
struct AllocationSize {
  PrimExpr elements;
  bool constant = true;
  int64_t constant_count = 1;
};
AllocationSize SizeOf(const AllocateNode& allocation);

}  // namespace loom::codegen
