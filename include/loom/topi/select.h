// Selecting elements by value: the k largest or smallest along an axis (ONNX TopK), the
// positions of the non-zero elements (ONNX NonZero), and the boxes non-maximum suppression
// keeps (ONNX NonMaxSuppression). A selection is an insertion into a sorted prefix or a
// running count, not an elementwise compute, so each is one te::extern_op whose body is a
// TIR loop nest over the whole input (serial within a row, parallel across rows): the
// compiler generates it like any kernel; a schedule has no loops to change.
//
//   Array<te::Tensor> top = topi::topk(logits, 5, /*axis=*/-1, /*largest=*/true);
//   // top[0]: the 5 largest values of each row, in order; top[1]: their int64 indices
//
// Ties keep the lower index first, as ONNX requires.
#pragma once

#include "loom/te/operation.h"

namespace loom::topi {

// The k largest (or, with !largest, smallest) elements of x along `axis` (negative counts
// from the end), sorted, and their int64 positions: two tensors of x's shape with `k` along
// the axis. k may be symbolic (a size read from a tensor at run time); it must be at most
// the axis's size, which the caller checks when it is not constant. Time per row: n * k.
Array<te::Tensor> topk(const te::Tensor& x, PrimExpr k, int axis, bool largest);

// The indices of x's non-zero elements in row-major order, as ONNX NonZero returns them:
// int64 [rank, count], where `count` is their number (the caller computes it first, a size
// read at run time).
te::Tensor nonzero(const te::Tensor& x, PrimExpr count);

// ONNX NonMaxSuppression over boxes [batches, n, 4] and scores [batches, classes, n], with
// the run-time scalars max_output_boxes_per_class (int64), iou_threshold and
// score_threshold (float32) as 1-element tensors: per batch and class, the boxes by
// descending score above score_threshold, each kept unless its IoU with a kept one exceeds
// iou_threshold, at most max_output_boxes_per_class. Returns the selections (int64
// [batches * classes * n, 3] rows (batch, class, box), the first `count` valid), count
// (int64 [1]), and int64 [batches, classes, n] of working space (each batch and class's
// candidates in a heap by descending score, taken only as far as the selection needs).
// `center_point_box` picks the box format: 0 (y1, x1, y2, x2) corners in any order, 1 (x_center,
// y_center, width, height).
Array<te::Tensor> non_max_suppression(const te::Tensor& boxes, const te::Tensor& scores,
                                      const te::Tensor& max_output_boxes_per_class,
                                      const te::Tensor& iou_threshold,
                                      const te::Tensor& score_threshold, bool center_point_box);

}  // namespace loom::topi
