// Shape functions: the output dimensions of an operator whose shape operand is a tensor only
// a run knows (ONNX Reshape's shape, Expand's shape, Tile's repeats, Range's bounds, the
// axes of Reduce*, Squeeze and Unsqueeze), as a small kernel of straight-line TIR over the
// operand and the data's dimensions. The VM reads the dimensions it writes (graph operator
// dims_of_value) before it allocates the output.
// An operand that does not fit the data gives -1 (reshape_dims and the axes' functions: in
// every dimension; the others: where it does not fit), which the VM refuses as a size.
//
//   te::Tensor dims = topi::reshape_dims(x, shape);   // int64 [rank of the target]
#pragma once

#include "loom/te/operation.h"
#include "loom/topi/transform.h"

namespace loom::topi {

// ONNX Reshape of x to `shape` (int64 [r]): 0 copies x's dimension at that position (with
// allowzero, 0 is an empty dimension), one -1 is inferred from the element count; the
// element counts must match.
te::Tensor reshape_dims(const te::Tensor& x, const te::Tensor& shape, bool allowzero);

// ONNX Expand of x by `shape` (int64 [r]): both aligned at the end, each dimension the one
// of the two that is not 1 (equal when neither is); int64 [max(x's rank, r)]. A dimension of
// x that is not the constant 1 stays x's: `shape` may only repeat it or give 1 there.
te::Tensor broadcast_dims(const te::Tensor& x, const te::Tensor& shape);

// ONNX Tile of x by `repeats` (int64 [x's rank], each at least 0): x's dimensions times them.
te::Tensor tile_dims(const te::Tensor& x, const te::Tensor& repeats);

// ONNX Range's length from the scalars start, limit and delta (one dtype, rank 0):
// max(ceil((limit - start) / delta), 0), int64 [1]; a delta of 0 gives -1.
te::Tensor range_length(const te::Tensor& start, const te::Tensor& limit, const te::Tensor& delta);

// ONNX Reduce* over `axes` (int64 [k], each within x's rank, negative ones from the end)
// given at run time: with keepdims, x's dimensions with the listed ones 1 (int64 [rank]); without,
// x's dimensions but the listed ones (int64 [rank - k]; the axes must be distinct; all of
// them: int64 [1] holding 1, for the caller to reshape to a scalar).
te::Tensor reduce_dims(const te::Tensor& x, const te::Tensor& axes, bool keepdims);

// ONNX Slice of x by starts, ends, axes and steps (each int64 or int32 [k]; topi::
// strided_slice's rules): the elements along each dimension, int64 [rank]; -1 each where an
// axis is out of range or repeated, or a step is 0.
te::Tensor slice_dims(const te::Tensor& x, const te::Tensor& starts, const te::Tensor& ends,
                      const te::Tensor& axes, const te::Tensor& steps);

// ONNX Pad of x by pads (integer [2k]: begins, then ends) along axes (integer [k]): x's
// dimensions plus both pads, int64 [rank]; -1 each where an axis is out of range or repeated,
// a dimension would be cropped below 0, or, for `mode` reflect (1), edge (2) or wrap (3), a
// padded dimension has nothing left to read (reflect: a pad at least its size).
te::Tensor pad_dims(const te::Tensor& x, const te::Tensor& pads, const te::Tensor& axes, int mode);

// ONNX Split of x along `axis` into pieces of the sizes `split` (integer [n]) gives: those
// sizes, int64 [n]; -1 each where one is negative or they do not sum to the dimension.
te::Tensor split_dims(const te::Tensor& x, const te::Tensor& split, int64_t axis);

// ONNX Resize of x by `operand` (float [k] scales or integer [k] sizes of the axes `by`
// lists): int64 [rank], a scaled dimension floor(extent * scale), a sized one its size (under
// an aspect policy, round(extent * the common scale)); -1 each where a scale is not positive
// or a size negative, a sized dimension is empty, or a dimension before the last two would be
// scaled (Loom resizes the two trailing ones).
te::Tensor resize_dims(const te::Tensor& x, const te::Tensor& operand, const ResizeBy& by);

// Kernel plans: what a kernel reads per dimension, from its operands, computed once before
// its loops (int64 [2 * rank] for a tensor of dimensions `dims`). slice_plan: each
// dimension's first element and step (`operands`: starts, ends, axes, steps, as slice_dims);
// pad_plan: each dimension's begin and end pad (as pad_dims).
te::Tensor slice_plan(const Array<PrimExpr>& dims, const Array<te::Tensor>& operands);
te::Tensor pad_plan(const Array<PrimExpr>& dims, const te::Tensor& pads, const te::Tensor& axes);

// ONNX Squeeze of the listed `axes` (int64 [k], distinct, each of size 1): int64 [rank - k]
// (every dimension: int64 [1] holding 1, as reduce_dims without keepdims).
te::Tensor squeeze_dims(const te::Tensor& x, const te::Tensor& axes);

// ONNX Unsqueeze at `axes` (int64 [k], distinct positions in the output's rank): 1s there,
// x's dimensions in order elsewhere; int64 [rank + k].
te::Tensor unsqueeze_dims(const te::Tensor& x, const te::Tensor& axes);

}  // namespace loom::topi
