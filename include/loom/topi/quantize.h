// Quantized tensors (ONNX's linear quantization): dequantization, and the integer convolution
// and dense layer that products of dequantized operands become (graph pass
// FoldQuantizedProducts).
#pragma once

#include <cstdint>

#include "loom/te/operation.h"
#include "loom/topi/nn.h"

namespace loom::topi {

// ONNX DequantizeLinear: (float32(q) - float32(zero_point)) * scale. q is an integer tensor;
// scale (float32) and zero_point (q's type) are both scalars (0-d), or both 1-d with one
// value per slice of q along `axis` (negative counts from the end). Mismatching types,
// ranks or lengths are loom::Errors naming the operator.
te::Tensor dequantize(const te::Tensor& q, const te::Tensor& scale, const te::Tensor& zero_point,
                      int axis);

// sum((data - data_zero_point) * (weight - weight_zero_point)) in int32: ONNX ConvInteger with
// per-tensor zero points. data [N, C, H, W] and weight [K, C / groups, R, S] are int8 or
// uint8; the border is data_zero_point (a zero after centering). Shapes and errors as
// conv2d_nchw's; the convolution stage is conv2d_nchw's (schedule_conv2d_nchw schedules it).
te::Tensor conv2d_nchw_integer(const te::Tensor& data, const te::Tensor& weight,
                               int64_t data_zero_point, int64_t weight_zero_point,
                               const Conv2DAttrs& attrs = {});

// sum((data - data_zero_point) * (weight - weight_zero_point)) in int32: data [..., K] and
// weight [N, K] (a Linear layer's) int8 or uint8 -> [..., N]. The product stage is
// matmul's (schedule_matmul schedules it).
te::Tensor dense_integer(const te::Tensor& data, const te::Tensor& weight, int64_t data_zero_point,
                         int64_t weight_zero_point);
// sum((a - a_zero_point) * (b - b_zero_point)) in int32 of two 8-bit operands a [..., M, K]
// and b [..., K, N] (topi::matmul's shapes: batch dimensions broadcast). ONNX MatMulInteger
// of activations, and a QDQ model's attention products.
te::Tensor matmul_integer(const te::Tensor& a, const te::Tensor& b, int64_t a_zero_point,
                          int64_t b_zero_point);

}  // namespace loom::topi
