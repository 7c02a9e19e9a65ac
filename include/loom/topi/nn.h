// Neural-network operators with ONNX semantics, and their generic CPU schedules.
#pragma once

#include <array>
#include <string>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/schedule.h"

namespace loom::topi {

struct Conv2DAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};
  // Zeros before and after the input's rows and columns: {top, left, bottom, right}, as
  // ONNX's pads (x1_begin, x2_begin, x1_end, x2_end).
  std::array<int64_t, 4> pads{0, 0, 0, 0};
  int64_t groups = 1;
};

// ONNX Conv in NCHW: data [N, C, H, W], weight [K, C / groups, R, S] -> [N, K, P, Q] with
// P = (H + top + bottom - dilation * (R - 1) - 1) / stride + 1 (and Q alike). groups = C
// = K is depthwise. Shapes must be constant; channels not divisible by groups, a weight
// whose channels do not match, non-positive strides or dilations, negative pads, or an
// empty output are loom::Errors naming the operator and the sizes. `out_dtype` as matmul's
// (a mixed-precision product: operands cast to it, summed and returned in it). Tag
// "conv2d_nchw".
te::Tensor conv2d_nchw(const te::Tensor& data, const te::Tensor& weight,
                       const Conv2DAttrs& attrs = {}, DataType out_dtype = DataType::Void());

struct Conv1DAttrs {
  int64_t stride = 1;
  int64_t dilation = 1;
  std::array<int64_t, 2> pads{0, 0};  // begin, end
  int64_t groups = 1;
};

// ONNX Conv in 1-D (NCW): data [N, C, W], weight [K, C / groups, S] -> [N, K, Q]. Errors as
// conv2d_nchw's. Tag "conv1d_ncw".
te::Tensor conv1d_ncw(const te::Tensor& data, const te::Tensor& weight,
                      const Conv1DAttrs& attrs = {});
// Rows (batch, output channel) in parallel, output positions in 16-lane vectors. `out` may
// be an elementwise epilogue of the convolution (as for schedule_conv2d_nchw).
te::Schedule schedule_conv1d_ncw(const te::Tensor& out, int vector_lanes = kDefaultVectorLanes);

// ONNX ConvTranspose in NCHW: data [N, C, H, W], weight [C, K / groups, R, S] ->
// [N, K, P, Q] with P = (H - 1) * stride - top - bottom + dilation * (R - 1) +
// output_padding + 1. Each output position sums the input positions whose strided window
// covers it. output_padding must be below the stride or the dilation. Tag
// "conv2d_transpose_nchw" (schedule_conv2d_nchw schedules it).
te::Tensor conv2d_transpose_nchw(const te::Tensor& data, const te::Tensor& weight,
                                 const Conv2DAttrs& attrs = {},
                                 std::array<int64_t, 2> output_padding = {0, 0});

// For conv2d_nchw and conv2d_transpose_nchw outputs, or an elementwise epilogue of one (bias,
// ReLU, residual add: computed on each tile before it is stored). The padded input is
// inlined; output channels x rows in parallel, the output row's columns in 16-lane vectors
// accumulating in a register tile over the reduction (input channels of the group, kernel
// rows, kernel columns).
te::Schedule schedule_conv2d_nchw(const te::Tensor& out, int vector_lanes = kDefaultVectorLanes);

// ONNX Conv on channels-last tensors: data [N, H, W, C], weight [R, S, C / groups, K]
// (HWIO) -> [N, P, Q, K], sizes and errors as conv2d_nchw's. Tag "conv2d_nhwc".
te::Tensor conv2d_nhwc(const te::Tensor& data, const te::Tensor& weight,
                       const Conv2DAttrs& attrs = {});
// For conv2d_nhwc outputs, or an elementwise epilogue of one of the same shape (bias, ReLU:
// inlined into the output loop). The padded input is materialized (no bounds check in the
// inner loop); output rows (n, p) run in parallel, each a sequence of register tiles of 4
// output columns x 16 output channels accumulating over (kernel row, kernel column, input
// channel).
te::Schedule schedule_conv2d_nhwc(const te::Tensor& out, int vector_lanes = kDefaultVectorLanes);

struct Pool2DAttrs {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};
  // {top, left, bottom, right}, as conv2d's.
  std::array<int64_t, 4> pads{0, 0, 0, 0};
  // Output size rounded up: a last window may start in the input and overhang the padding.
  bool ceil_mode = false;
  // Average pooling divides by the window including its padded positions (ONNX
  // count_include_pad = 1) or only by the positions inside the input.
  bool count_include_pad = false;
};

// ONNX MaxPool / AveragePool on float tensors (MaxPool on integer ones too) in `layout`: "NCHW" [N, C, H, W] ->
// [N, C, P, Q], or a blocked "NCHW<k>c" such as "NCHW16c" [N, C / k, H, W, k] ->
// [N, C / k, P, Q, k] (the layout strings of layout_transform). Padded positions never win
// a max and count for an average only with count_include_pad; a window that lies entirely
// in the padding is a loom::Error at construction (ONNX forbids it). Tag "pool2d".
te::Tensor max_pool2d(const te::Tensor& data, const Pool2DAttrs& attrs,
                      const std::string& layout = "NCHW");
te::Tensor avg_pool2d(const te::Tensor& data, const Pool2DAttrs& attrs,
                      const std::string& layout = "NCHW");
// ONNX GlobalMaxPool / GlobalAveragePool: [N, C, H, W] -> [N, C, 1, 1], or in NCHW<k>c
// [N, C / k, H, W, k] -> [N, C / k, 1, 1, k] (schedule_reduce, which vectorizes a channel
// block of 16 or more).
te::Tensor global_max_pool2d(const te::Tensor& data, const std::string& layout = "NCHW");
te::Tensor global_avg_pool2d(const te::Tensor& data, const std::string& layout = "NCHW");

// Rows (batch, channel or channel block, output row) in parallel; output columns in
// 16-lane vectors (NCHW), or per output column the channel block in 16-lane vectors
// (NCHW<k>c).
te::Schedule schedule_pool2d(const te::Tensor& out, int vector_lanes = kDefaultVectorLanes);

// ---- normalization (float tensors; schedule_injective for batch_norm, schedule_reduce for
// the others, whose statistics are reductions).

// ONNX BatchNormalization in inference: (x - mean) / sqrt(var + epsilon) * scale + bias,
// the four parameters 1-d over dimension 1 of x ([N, C, ...]).
te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                      const te::Tensor& mean, const te::Tensor& var, double epsilon = 1e-5);
// ONNX LayerNormalization: statistics over dimensions axis.. of x; scale and bias have the
// shape of those dimensions.
te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                      int axis = -1, double epsilon = 1e-5);
// ONNX InstanceNormalization: statistics per (n, c) over the spatial dimensions; scale and
// bias 1-d over C.
te::Tensor instance_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                         double epsilon = 1e-5);
// ONNX LRN across channels of [N, C, ...]: x / (bias + alpha / size * sum of x^2 over the
// `size` channels around c)^beta.
te::Tensor lrn(const te::Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75,
               double bias = 1.0);

}  // namespace loom::topi
