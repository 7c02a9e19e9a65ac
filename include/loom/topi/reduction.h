// Reductions with ONNX semantics (ReduceSum, ReduceMean, ..., ArgMax, Softmax), as computes
// for schedule_reduce / schedule_softmax (loom/topi/schedule.h).
//
// `axes` lists the reduced dimensions, negative ones counting from the end; empty reduces
// every dimension (ONNX noop_with_empty_axes = 0). keepdims leaves each reduced dimension as
// 1. An axis out of range or listed twice is a loom::Error naming the operator.
#pragma once

#include <string>
#include <vector>

#include "loom/te/operation.h"

namespace loom::topi {

te::Tensor sum(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
// Integers divide truncating, as ONNX ReduceMean.
te::Tensor mean(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
te::Tensor max(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
te::Tensor min(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
te::Tensor prod(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
// sum(|x|), sqrt(sum(x^2)), sum(x^2): ONNX ReduceL1, ReduceL2, ReduceSumSquare.
te::Tensor l1_norm(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
te::Tensor l2_norm(const te::Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
te::Tensor sum_square(const te::Tensor& x, const std::vector<int>& axes = {},
                      bool keepdims = false);
// log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m the maximum (no overflow).
te::Tensor logsumexp(const te::Tensor& x, const std::vector<int>& axes = {},
                     bool keepdims = false);
// x reduced by `reducer` (sum, mean, max, min, prod, l1_norm, l2_norm, sum_square,
// logsumexp) to `shape`, each of whose dimensions is x's (kept) or 1 (reduced): the reduction
// axes only a run knows (ONNX Reduce* with axes given at run time). Each dimension's extent
// is x_d - shape_d + 1, so a dimension that is neither is not caught here: the shape
// function that computes `shape` (reduce_dims) gives only x's or 1.
te::Tensor reduce_to(const te::Tensor& x, const Array<PrimExpr>& shape, const std::string& reducer);
// The int64 index of the largest (smallest) element along `axis`; ties take the first
// index, or the last with select_last_index.
te::Tensor argmax(const te::Tensor& x, int axis = 0, bool keepdims = true,
                  bool select_last_index = false);
te::Tensor argmin(const te::Tensor& x, int axis = 0, bool keepdims = true,
                  bool select_last_index = false);
// exp(x - max) / sum(exp(x - max)) along `axis` (ONNX Softmax, opset 13); float tensors.
// Each exponential is computed once: softmax keeps them in a stage (tag "softmax_exp")
// that the sum and the output read; log_softmax needs them only in the sum.
te::Tensor softmax(const te::Tensor& x, int axis = -1);
te::Tensor log_softmax(const te::Tensor& x, int axis = -1);

}  // namespace loom::topi
